from __future__ import annotations

from pathlib import Path

import pytest

from osint_gym.tasks import DEFAULT_BUDGETS
from osint_selfplay.config import RunConfig, config_from_dict, load_config
from osint_selfplay.errors import ConfigError
from osint_selfplay.grpo_config import GRPOPhaseConfig

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "selfplay"


def test_defaults_and_shipped_configs_are_valid():
    cfg = load_config()
    assert cfg.rounds == 2 and cfg.warm_start_on  # tiny: models warm-start by default
    for path in sorted(CONFIGS.glob("*.toml")):
        loaded = load_config(str(path))
        assert isinstance(loaded, RunConfig), path
    tiny = load_config(str(CONFIGS / "tiny-cpu.toml"))  # the main job: the investigator
    assert tiny.model.answerer.startswith("tiny:") and tiny.answerer.mode == "multi_turn"
    assert (tiny.answerer.observation_format, tiny.answerer.action_format) == ("compact", "short")
    assert tiny.warm_start.packing and tiny.eval.limit >= 1000 and not tiny.eval.difficulties
    # its controls and reference are a second command on its folder (inside the job they pass the 15-minute budget)
    assert not tiny.warm_start.control and not tiny.answerer.uniform_control
    assert not tiny.generator.curriculum_control and not tiny.warm_start.imitation_control
    import tomllib

    scripts = tomllib.loads((CONFIGS.parents[1] / "hatch.toml").read_text())["envs"]["default"]["scripts"]
    assert scripts["train-controls"] == f"osint-selfplay controls {{args:{tiny.output_dir}}}"
    # a warm start bounded by steps (the same model on another machine of the kind), trained in mixed precision
    assert (
        tiny.warm_start.max_steps == 1200
        and tiny.warm_start.max_seconds == 0
        and tiny.warm_start.autocast == "bfloat16"
    )
    import shlex

    words = shlex.split(scripts["train-long"].replace("{args}", ""))
    long = load_config(words[words.index("--config") + 1], words[words.index("--set") + 1 :])
    assert long.warm_start.max_steps == 2400 and long.rounds > tiny.rounds
    assert long.warm_start.control and long.answerer.uniform_control and long.generator.curriculum_control
    assert long.warm_start.imitation_control
    assert long.output_dir != tiny.output_dir
    single = load_config(str(CONFIGS / "tiny-cpu-single.toml"))
    assert single.answerer.mode == "single_turn" and single.output_dir != tiny.output_dir


def test_set_overrides_parse_toml_values_and_bare_strings():
    cfg = load_config(str(CONFIGS / "tiny-cpu.toml"), [
        "rounds=3", "run.seed=7", "grpo_answerer.learning_rate=1e-3", "model.generator=tiny:64x2",
        "report_to=['wandb']", "answerer.seed_difficulties=[\"easy\"]", "dry_run=true",
    ])
    assert (cfg.rounds, cfg.seed, cfg.grpo_answerer.learning_rate) == (3, 7, 1e-3)
    assert cfg.model.generator == "tiny:64x2" and cfg.report_to == ["wandb"] and cfg.dry_run is True
    assert cfg.answerer.seed_difficulties == ["easy"]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["roudns=3"], "unknown top-level key 'roudns'; did you mean 'rounds'"),
        (["phase_schedule='answerer_first'"], "phase_schedule must be one of"),
        (["model_topology='triple'"], "model_topology must be one of 'dual', 'shared'"),
        (["model.decoding='fast'"], "model.decoding must be one of 'generate', 'exact', 'prefix'; got 'fast'"),
        (["grpo_answerer.num_generations=3"], r"must be a multiple of num_generations \(3\)"),
        (["grpo_answerer.num_generations=1"], "num_generations must be an integer >= 2"),
        (["grpo_answerer.max_steps='ten'"], r"\[grpo_answerer\] max_steps must be an integer; got str 'ten'"),
        (["grpo_answerer.seed=3"], "seed is set by the run, not per phase: set seed at the top level"),
        (["report_to=3"], r"report_to must be str \| list\[str\]; got int 3"),
        (["rounds='two'"], "rounds must be an integer; got str 'two'"),
        (["rounds=0"], "rounds must be a number >= 1"),
        (["generator.invalid_rewards.malformed=0.5"], "must be negative"),
        (["generator.invalid_rewards.bogus=-1"], "unknown generator.invalid_rewards key 'bogus'"),
        (["lora.target_modules=['lm_head']"], "must not contain 'lm_head'"),
        (["eval.tasks='v0:nope'"], "unknown split 'nope'"),
        (["generator=3"], r"\[generator\] must be a table"),
        (["noequals"], "--set expects key=value"),
        (["answerer.generated_share=2"], r"generated_share must be in \[0, 1\]"),
        (
            ["warm_start.control=true"],
            "warm_start.control continues a packed warm start: set warm_start.packing = true",
        ),
        (["warm_start.max_seconds=-1"], "warm_start.max_seconds must be a number >= 0"),
        (["warm_start.max_steps=-5"], "warm_start.max_steps must be a number >= 0"),
        (["warm_start.autocast='fp8'"], "warm_start.autocast must be one of 'none', 'bfloat16'; got 'fp8'"),
        (["relabel.share=0"], r"relabel.share must be in \(0, 1\); got 0"),
        (["relabel.states='first'"], "relabel.states must be one of 'all', 'clean', 'divergence'; got 'first'"),
        (["eval.curve_tasks=200", "eval.curve_split='v0:test'"], "eval.curve_split must not be a held-out split"),
        (["eval.curve_tasks=200", "eval.curve_split='v0:dev'", "eval.extra_splits=['v1:dev']"],
         "eval.curve_split must not be a held-out split \\('v1:dev'\\)"),
        (["eval.extra_splits=['v0:test']"], "eval.extra_splits repeats eval.tasks"),
        (["eval.extra_splits=['v9:x']"], "unknown benchmark"),
        (["generator.offer_choices=12"], "generator.offer_choices must be an integer in 2..9"),
        (["generator.degenerate_reward=0.5"], "generator.degenerate_reward must lie in"),
        (["generator.curriculum_control=true"], "set generator.curriculum = true"),
        (["eval.curve_tasks=200", "eval.curve_split='v1:test'"], "held-out split .* or share its world"),
        (["eval.curve_split='v9:dev'"], "unknown benchmark 'v9:dev'"),
        (["warm_start.decay_fraction=1.5"], r"warm_start.decay_fraction must be in \[0, 1\]; got 1.5"),
        (["warm_start.max_length=8"], "warm_start.max_length must be a number >= 16"),
        (["eval.max_new_tokens=0"], "eval.max_new_tokens must be a number >= 1"),
        (["eval.workers=0"], "eval.workers must be a number >= 1"),
        (["warm_start.workers=1.5"], "warm_start.workers must be an integer; got float 1.5"),
        (["eval.difficulties=['easy', 'impossible']"], "eval.difficulties"),
        (["generator.offer_filters=true"], "generator.offer_filters needs canonical_graph_mode = 'choose'"),
    ],
)
def test_bad_configs_name_the_key(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, overrides)


def test_bad_files(tmp_path):
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(str(tmp_path / "missing.toml"))
    bad = tmp_path / "bad.toml"
    bad.write_text("[run\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_config(str(bad))


def test_grpo_phase_rule_message_states_the_fix():
    with pytest.raises(ConfigError, match=r"per_device_train_batch_size \* gradient_accumulation_steps \(12\)"):
        GRPOPhaseConfig(per_device_train_batch_size=12, num_generations=8)


def test_config_round_trips_through_dict():
    from osint_selfplay.config import config_from_dict

    cfg = load_config(str(CONFIGS / "tiny-cpu.toml"))
    assert config_from_dict(cfg.to_dict()) == cfg


def test_config_error_is_osint_gyms_one_config_error():
    from osint_gym.errors import ConfigError as GymConfigError

    assert ConfigError is GymConfigError
    with pytest.raises(GymConfigError, match="unknown top-level key 'seeed'; did you mean 'seed'"):
        load_config(None, ["seeed=1"])


def test_loading_a_config_does_not_import_trl():
    import subprocess
    import sys

    code = (
        "import sys; from osint_selfplay.config import load_config; "
        "load_config(None, ['grpo_answerer.bf16=true']); "
        "print(sorted(m for m in ('trl', 'torch', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.strip() == "[]"


def test_any_grpoconfig_field_is_accepted_and_reaches_trl(tmp_path):
    from osint_selfplay.trl_compat import check_run, grpo_config

    cfg = load_config(
        str(CONFIGS / "tiny-cpu.toml"),
        [
            f"output_dir='{tmp_path}'",
            "grpo_answerer.bf16=true",
            "grpo_answerer.weight_decay=0.1",
            "grpo_answerer.mask_truncated_completions=true",
            "report_to='none'",
        ],
    )
    check_run(cfg)
    args = grpo_config(cfg.grpo_answerer, cfg, str(tmp_path / "trainer"), 5, "grpo_answerer")
    assert (args.bf16, args.weight_decay, args.mask_truncated_completions, args.seed) == (True, 0.1, True, 5)
    assert args.report_to == [] and args.learning_rate == cfg.grpo_answerer.learning_rate


@pytest.mark.parametrize("report_to", ["'none'", "'all'", "'tensorboard'", "['tensorboard']", "[]"])
def test_report_to_accepts_what_trl_accepts(tmp_path, report_to):
    from osint_selfplay.trl_compat import check_run

    cfg = load_config(None, [f"output_dir='{tmp_path}'", f"report_to={report_to}"])
    check_run(cfg)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            ["grpo_answerer.learning_rte=1"],
            r"unknown \[grpo_answerer\] key 'learning_rte'; did you mean 'learning_rate'\? "
            r"\(keys are TRL GRPOConfig fields\)",
        ),
        (["grpo_generator.bf16='yes'"], r"grpo_generator.bf16 must be bool \| None; got str 'yes'"),
        (
            ["grpo_answerer.generation_batch_size=12"],
            r"\[grpo_answerer\]: TRL rejects these settings: .*generation_batch_size",
        ),
    ],
)
def test_grpo_tables_are_checked_against_grpoconfig(tmp_path, overrides, message):
    from osint_selfplay.trl_compat import check_run

    cfg = load_config(None, [f"output_dir='{tmp_path}'", *overrides])
    with pytest.raises(ConfigError, match=message):
        check_run(cfg)


def test_shipped_configs_pass_trls_own_checks(tmp_path):
    from osint_selfplay.trl_compat import check_run

    for path in sorted(CONFIGS.glob("*.toml")):
        check_run(load_config(str(path), [f"output_dir='{tmp_path / path.stem}'"]))
        assert not (tmp_path / path.stem).exists()  # checking writes nothing


def test_the_renamed_bare_prompt_still_loads_as_describe_tools_with_a_warning(tmp_path):
    path = tmp_path / "old.toml"
    path.write_text('[answerer]\nmode = "multi_turn"\nbare_prompt = true\n')
    with pytest.warns(FutureWarning, match=r"^answerer\.bare_prompt is deprecated: use answerer\.describe_tools$"):
        cfg = load_config(str(path))
    assert cfg.answerer.describe_tools is False and cfg.answerer.episode_spec().describe_tools is False
    with pytest.warns(FutureWarning):
        assert load_config(None, ["answerer.bare_prompt=false"]).answerer.describe_tools is True
    with pytest.warns(FutureWarning):  # a run.json written before the rename resumes with the same config
        old = {**load_config(None).to_dict(), "answerer": {**load_config(None).to_dict()["answerer"]}}
        old["answerer"]["bare_prompt"] = old["answerer"].pop("describe_tools") is False
        assert config_from_dict(old) == load_config(None)


def test_old_and_new_names_together_are_one_line_error():
    with pytest.raises(ConfigError, match=r"^answerer\.bare_prompt was renamed answerer\.describe_tools; "
                                          r"set only answerer\.describe_tools$"):
        load_config(None, ["answerer.bare_prompt=true", "answerer.describe_tools=false"])


def test_the_episode_spec_is_built_from_the_answerer_section():
    cfg = load_config(None, ["answerer.mode='multi_turn'", "answerer.max_turns=5", "answerer.max_parallel_calls=2",
                             "answerer.max_observation_chars=900", "answerer.observation_format='compact'",
                             "answerer.action_format='short'", "answerer.describe_tools=false"])
    spec = cfg.answerer.episode_spec()
    assert spec.env_kwargs() == {"max_steps": 5, "max_parallel_calls": 2, "max_observation_chars": 900,
                                 "observation_format": "compact", "describe_tools": False}
    assert spec.action_format == "short" and cfg.answerer.budgets() == spec.budgets
    assert load_config(None).answerer.budgets() == DEFAULT_BUDGETS  # single turn: tasks verified under the defaults

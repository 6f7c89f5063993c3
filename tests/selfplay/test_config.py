from __future__ import annotations

import dataclasses
import json
import re
import warnings
from pathlib import Path

import pytest

from osint_gym.spec import EpisodeSpec
from osint_gym.tasks import DEFAULT_BUDGETS, Budgets
from osint_selfplay.config import EpisodeConfig, EvalConfig, PlayConfig, RunConfig, config_from_dict, load_config
from osint_selfplay.errors import ConfigError
from osint_selfplay.grpo_config import GRPOPhaseConfig

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "selfplay"
DATA = Path(__file__).resolve().parents[1] / "data"


def test_defaults_and_shipped_configs_are_valid():
    cfg = load_config()
    assert cfg.rounds == 2 and cfg.warm_start_on  # tiny: models warm-start by default
    for path in sorted(CONFIGS.glob("*.toml")):
        loaded = load_config(str(path))
        assert isinstance(loaded, RunConfig), path
    tiny = load_config(str(CONFIGS / "tiny-cpu.toml"))  # the main job: the investigator
    assert tiny.model.answerer.startswith("tiny:") and tiny.answerer.mode == "multi_turn"
    assert (tiny.episode.observation_format, tiny.episode.action_format) == ("compact", "short")
    assert tiny.warm_start.packing and tiny.eval.limit >= 1000 and not tiny.eval.difficulties
    # its controls and reference are a second command on its folder (inside the job they pass the 15-minute budget)
    assert not tiny.warm_start.control and not tiny.answerer.uniform_control
    assert not tiny.generator.curriculum_control and not tiny.warm_start.imitation_control
    import tomllib

    scripts = tomllib.loads((CONFIGS.parents[1] / "hatch.toml").read_text())["envs"]["default"]["scripts"]
    assert scripts["train-controls"] == f"osint-selfplay controls {{args:{tiny.output_dir}}}"
    # a warm start bounded by steps (the same model on another machine of the kind), in the precision the machine
    # does fast (osint_selfplay.precision: bfloat16 where it is native, float32 elsewhere)
    assert (
        tiny.warm_start.max_steps == 800
        and tiny.warm_start.max_seconds == 0
        and tiny.warm_start.autocast == "auto"
    )
    import shlex

    words = shlex.split(scripts["train-long"].replace("{args}", ""))
    long = load_config(words[words.index("--config") + 1], words[words.index("--set") + 1 :])
    assert long.warm_start.max_steps == 2 * tiny.warm_start.max_steps and long.rounds > tiny.rounds
    assert long.warm_start.control and long.answerer.uniform_control and long.generator.curriculum_control
    assert long.warm_start.imitation_control and long.answerer.reverse_control
    # the climb on rungs, trained on worlds of the benchmark it is evaluated on (seeds of its own)
    assert tiny.generator.rungs and tiny.train_world == "v2" and (tiny.eval.tasks, tiny.eval.extra_splits) == (
        "v2:test", [])
    assert (long.eval.tasks, long.eval.extra_splits) == ("v2:test", ["v2:hard"])  # v2:hard: past the 15 minutes
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
        (["warm_start.autocast='fp8'"], "warm_start.autocast must be one of 'auto', 'bfloat16', 'none'; got 'fp8'"),
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
        (["eval.max_new_tokens=0", "play.max_new_tokens=1"], "eval.max_new_tokens must be a number >= 1"),
        (["play.max_new_tokens=0"], "play.max_new_tokens must be a number >= 1"),
        (["play.workers=0"], "play.workers must be a number >= 1"),
        (["episode.max_steps=0"], "episode.max_steps must be a number >= 1"),
        (["episode.describe_tools='no'"], "episode.describe_tools must be true or false"),
        (["eval.workers=0"], "eval.workers must be a number >= 1"),
        (["warm_start.workers=1.5"], "warm_start.workers must be an integer; got float 1.5"),
        (["eval.difficulties=['easy', 'impossible']"], "eval.difficulties"),
        (["generator.offer_filters=true"], "generator.offer_filters needs canonical_graph_mode = 'choose'"),
        (["phase_schedule='answerer'"], "phase_schedule = 'answerer' has no generator: set answerer.generated_share"),
        (["phase_schedule='generator'"], "phase_schedule must be one of"),
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
    with pytest.warns(FutureWarning, match=r"^answerer\.bare_prompt is deprecated: use episode\.describe_tools$"):
        cfg = load_config(str(path))
    assert cfg.episode.describe_tools is False and cfg.episode.spec().describe_tools is False
    with pytest.warns(FutureWarning):
        assert load_config(None, ["answerer.bare_prompt=false"]).episode.describe_tools is True


def test_old_and_new_names_together_are_one_line_error():
    with pytest.raises(ConfigError, match=r"^answerer\.bare_prompt was renamed episode\.describe_tools; "
                                          r"set only episode\.describe_tools$"):
        load_config(None, ["answerer.bare_prompt=true", "episode.describe_tools=false"])
    with pytest.raises(ConfigError, match=r"^answerer\.max_turns was renamed episode\.max_steps; "
                                          r"set only episode\.max_steps$"):
        load_config(None, ["answerer.max_turns=5", "episode.max_steps=6"])
    conflict = r"^answerer\.bare_prompt \(False\) and answerer\.describe_tools \(True\) are now one setting, episode\."
    with pytest.warns(FutureWarning), pytest.raises(ConfigError, match=conflict + "describe_tools: set only "):
        load_config(None, ["answerer.bare_prompt=true", "answerer.describe_tools=true"])


def test_the_episode_table_is_the_episode_spec():
    cfg = load_config(None, ["answerer.mode='multi_turn'", "episode.max_steps=5", "episode.max_parallel_calls=2",
                             "episode.max_observation_chars=900", "episode.observation_format='compact'",
                             "episode.action_format='short'", "episode.describe_tools=false"])
    spec = cfg.episode.spec()
    assert spec.env_kwargs() == {"max_steps": 5, "max_parallel_calls": 2, "max_observation_chars": 900,
                                 "observation_format": "compact", "describe_tools": False, "action_format": "short",
                                 "rung_mode": "given"}
    assert spec.action_format == "short" and cfg.budgets() == spec.budgets
    assert load_config(None).budgets() == DEFAULT_BUDGETS  # single turn: tasks verified under the defaults
    # the table's fields are the spec's, one each (nothing re-declared under another name)
    assert {f.name for f in dataclasses.fields(EpisodeConfig)} == set(EpisodeSpec().env_kwargs())
    assert EpisodeConfig().spec() == EpisodeSpec(Budgets(8, 4, 1500, "json"), "json", True)


OLD_EPISODE_KEYS = {"max_turns": ("max_steps", 5), "max_parallel_calls": ("max_parallel_calls", 2),
                    "max_observation_chars": ("max_observation_chars", 900),
                    "observation_format": ("observation_format", "compact"),
                    "action_format": ("action_format", "short"), "describe_tools": ("describe_tools", False)}


def _expect_moved(record, keys):
    messages = [str(w.message) for w in record if issubclass(w.category, FutureWarning)]
    for old, (new, _) in keys.items():
        assert f"answerer.{old} is deprecated: use episode.{new}" in messages
    assert all("\n" not in m for m in messages)  # one line each


def test_old_episode_keys_load_from_toml_with_a_warning_naming_the_new_key(tmp_path):
    path = tmp_path / "old.toml"
    lines = [f"{old} = {json.dumps(value)}" for old, (_, value) in OLD_EPISODE_KEYS.items()]
    path.write_text('[answerer]\nmode = "multi_turn"\n' + "\n".join(lines) + "\n")
    with pytest.warns(FutureWarning) as record:
        cfg = load_config(str(path))
    _expect_moved(record, OLD_EPISODE_KEYS)
    assert {new: getattr(cfg.episode, new) for new, _ in OLD_EPISODE_KEYS.values()} == dict(OLD_EPISODE_KEYS.values())
    assert cfg.answerer.mode == "multi_turn" and cfg.episode.spec().budgets.max_steps == 5


def test_old_episode_keys_load_from_set_overrides_with_a_warning():
    overrides = [f"answerer.{old}={json.dumps(value)}" for old, (_, value) in OLD_EPISODE_KEYS.items()]
    with pytest.warns(FutureWarning) as record:
        cfg = load_config(None, ["answerer.mode='multi_turn'", *overrides])
    _expect_moved(record, OLD_EPISODE_KEYS)
    assert cfg == load_config(None, ["answerer.mode='multi_turn'",
                                     *[f"episode.{new}={json.dumps(v)}" for new, v in OLD_EPISODE_KEYS.values()]])


def test_a_run_json_written_before_the_play_and_episode_tables_resumes_with_the_same_config():
    """The config of a main-job run.json written at f54ade5 (no [play], no [episode]) loads to exactly the config the
    shipped TOML gives now, so --resume accepts it and the old run plays as it did."""
    old = json.loads((DATA / "selfplay-run-before-play-episode.json").read_text())["config"]
    assert "play" not in old and "episode" not in old and old["answerer"]["max_turns"] == 8
    with pytest.warns(FutureWarning) as record:
        cfg = config_from_dict(old)
    messages = {str(w.message) for w in record}
    _expect_moved(record, OLD_EPISODE_KEYS)
    assert ("no [play] table: play.batch_size and play.max_new_tokens taken from eval.batch_size and "
            "eval.max_new_tokens (training-time play used [eval] before it had a table); set [play]") in messages
    assert "generator.solver_workers is deprecated: use play.workers" in messages
    assert "relabel.workers is deprecated: use play.workers (set by generator.solver_workers here)" in messages
    assert (cfg.play.batch_size, cfg.play.max_new_tokens, cfg.play.workers) == (
        old["eval"]["batch_size"], old["eval"]["max_new_tokens"], old["generator"]["solver_workers"]) == (32, 40, 2)
    assert (cfg.episode.max_steps, cfg.episode.max_observation_chars) == (8, 4000)
    # the shipped TOML with the settings that changed since (issue 50: two layers, 1,000 steps on 20,000
    # demonstrations, one lighter round, the machine's precision; issue 51: v2's worlds and splits, rungs) set back
    # to that run's values
    since = ["model.generator='tiny:128x3-v5120'", "model.answerer='tiny:128x3-v5120'", "warm_start.max_steps=1200",
             "rounds=2", "warm_start.autocast='bfloat16'", "warm_start.answerer_examples=24000",
             "generator.prompts_per_round=16", "grpo_generator.max_steps=16", "answerer.tasks_per_round=40",
             "grpo_answerer.max_steps=10", "train_world='v0'", "generator.rungs=false", "eval.tasks='v1:test'",
             "eval.extra_splits=['v1:hard']", "eval.curve_split='v1:dev'", "warm_start.generator_examples=500",
             "generator.sample_tasks=16"]
    assert cfg.to_dict() == load_config(str(CONFIGS / "tiny-cpu.toml"), since).to_dict()


def test_play_defaults_are_the_eval_values_training_time_play_used_before():
    play, evaluation = PlayConfig(), EvalConfig()
    assert (play.batch_size, play.max_new_tokens) == (evaluation.batch_size, evaluation.max_new_tokens) == (128, 160)
    assert play.workers == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the defaults and every shipped config load without a deprecation
        load_config(None)
        for path in sorted(CONFIGS.glob("*.toml")):
            cfg = load_config(str(path))
            # every shipped config plays with the values its [eval] gave training-time play before [play]
            assert (cfg.play.batch_size, cfg.play.max_new_tokens) == (cfg.eval.batch_size, cfg.eval.max_new_tokens)


def test_a_config_without_a_play_table_plays_with_its_eval_values_and_one_with_it_does_not():
    with pytest.warns(FutureWarning, match=r"^no \[play\] table: play\.batch_size taken from eval\.batch_size"):
        cfg = config_from_dict({"eval": {"batch_size": 8}})
    assert (cfg.play.batch_size, cfg.play.max_new_tokens, cfg.eval.batch_size) == (8, 160, 8)
    cfg = config_from_dict({"eval": {"batch_size": 8}, "play": {"workers": 2}})  # [play] set: eval is eval's alone
    assert (cfg.play.batch_size, cfg.play.workers, cfg.eval.batch_size) == (128, 2, 8)
    cfg = load_config(None, ["eval.max_new_tokens=24", "play.max_new_tokens=40"])
    assert (cfg.play.max_new_tokens, cfg.eval.max_new_tokens) == (40, 24)


def test_the_two_worker_counts_of_training_time_play_are_one():
    with pytest.warns(FutureWarning, match=r"^generator\.solver_workers is deprecated: use play\.workers$"):
        assert load_config(None, ["generator.solver_workers=2"]).play.workers == 2
    with pytest.warns(FutureWarning, match=r"^relabel\.workers is deprecated: use play\.workers$"):
        assert load_config(None, ["relabel.workers=3"]).play.workers == 3
    # relabelling off: relabel.workers was never read, so generator.solver_workers decides
    with pytest.warns(FutureWarning):
        assert load_config(None, ["generator.solver_workers=2", "relabel.workers=1"]).play.workers == 2
    conflict = r"^generator\.solver_workers \(2\) and relabel\.workers \(1\) are now one setting, play\.workers: "
    with pytest.warns(FutureWarning), pytest.raises(ConfigError, match=conflict + r"set only play\.workers$"):
        load_config(None, ["generator.solver_workers=2", "relabel.workers=1", "relabel.enabled=true"])


def test_run_level_vllm_copies_of_grpo_fields_move_to_the_phase_tables():
    with pytest.warns(FutureWarning, match=r"^vllm_gpu_memory_utilization is deprecated: use "
                                           r"grpo_generator\.vllm_gpu_memory_utilization and "
                                           r"grpo_answerer\.vllm_gpu_memory_utilization \(TRL's GRPOConfig field\)$"):
        cfg = load_config(None, ["vllm_gpu_memory_utilization=0.5"])
    assert cfg.grpo_generator.vllm_gpu_memory_utilization == cfg.grpo_answerer.vllm_gpu_memory_utilization == 0.5
    with pytest.warns(FutureWarning, match=r"^vllm_server_timeout is deprecated"):
        cfg = load_config(None, ["vllm_server_timeout=240.0"])  # the old default is TRL's: nothing to pass
    assert cfg == load_config(None)
    cfg = load_config(None, ["grpo_answerer.vllm_server_timeout=30"])  # a phase sets it now
    assert cfg.grpo_answerer.vllm_server_timeout == 30 and "vllm_server_timeout" not in cfg.grpo_generator.to_dict()


def _config_classes():
    return [RunConfig, *[f.type for f in dataclasses.fields(RunConfig) if f.type.endswith("Config")
                        and f.type != "GRPOPhaseConfig"]]


def test_fewer_config_fields_each_with_help_text_and_a_reader():
    """107 fields in 9 dataclasses at issue 44's commit, 106 before the [play] and [episode] tables (the [grpo_*]
    tables pass TRL's GRPOConfig through and declare none), 105 in 11 after them; issue 51 added four (the
    generator's rungs, R3's schedule, the training worlds' benchmark version, how a rung is served): 109."""
    import osint_selfplay.config as config_module

    classes = [RunConfig] + [getattr(config_module, name) for name in _config_classes()[1:]]
    tables = {f.name for f in dataclasses.fields(RunConfig) if f.type.endswith("Config")}
    fields = [(cls, f) for cls in classes for f in dataclasses.fields(cls)
              if not (cls is RunConfig and f.name in tables)]
    assert len(classes) == 11 and len(fields) == 109
    assert all(f.metadata.get("help", "").strip() for _, f in fields)
    src = Path(__file__).resolve().parents[2] / "packages"
    readers = "\n".join(p.read_text() for p in src.glob("*/src/*/**/*.py") if p.name != "config.py")
    unread = [f"{cls.__name__}.{f.name}" for cls, f in fields if not re.search(rf"\.{f.name}\b", readers)]
    assert unread == []


def test_the_removed_run_level_vllm_defaults_are_trls_own():
    """An old config's default value of a removed run-level copy is dropped, because TRL gives the same."""
    from trl import GRPOConfig

    from osint_selfplay.config_compat import PASSED_THROUGH

    trl_defaults = {f.name: f.default for f in dataclasses.fields(GRPOConfig)}
    assert {key: trl_defaults[key] for key in PASSED_THROUGH} == PASSED_THROUGH


def test_every_phase_schedule_a_config_accepts_is_one_the_loop_runs():
    from osint_selfplay.config import PHASE_SCHEDULES
    from osint_selfplay.loop import SCHEDULES

    assert set(PHASE_SCHEDULES) == set(SCHEDULES) and SCHEDULES["answerer"] == ("answerer",)
    smollm2 = load_config(str(CONFIGS / "smollm2-cpu.toml"))
    assert (smollm2.phase_schedule, smollm2.tuning_mode, smollm2.answerer.generated_share) == ("answerer", "lora", 0)
    assert smollm2.model.answerer == "models/smollm2-135m-instruct-q4_1" and smollm2.warm_start_on

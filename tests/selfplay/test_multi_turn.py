"""Multi-turn GRPO through OSINT-v0 with a tiny model on the CPU."""

from __future__ import annotations

import json

import pytest

from osint_selfplay import data, phases
from osint_selfplay.config import load_config
from osint_selfplay.results import ZeroVariance, ZeroVarianceStep
from osint_selfplay.rewards import EpisodeReward, annealed, parl_terms
from osint_selfplay.rollout import MultiTurnRollout
from osint_selfplay.worlds import WorldPool

from .conftest import TINY, micro_overrides


def _cfg(tmp_path, **extra):
    base = {"answerer.mode": "'multi_turn'", "episode.max_steps": 4, "episode.max_observation_chars": 600,
            "grpo_answerer.max_completion_length": 256, "grpo_answerer.per_device_train_batch_size": 4,
            "grpo_answerer.num_generations": 4, "answerer.tasks_per_round": 4, "answerer.generated_share": 0.0,
            "answerer.seed_difficulties": "['easy']"}
    base.update(extra)
    return load_config(None, micro_overrides(tmp_path, **base))


# the tests of the trained fixture below run on one pytest-xdist worker (pytest.ini: --dist loadgroup): it trains once
ON_ONE_WORKER = pytest.mark.xdist_group("oracle_tuned")


@pytest.fixture(scope="module")
def oracle_tuned(tmp_path_factory, tiny_path):
    """The tiny model after a short warm start on oracle trajectories (some of its actions are valid)."""
    out = tmp_path_factory.mktemp("mt-warm")
    cfg = _cfg(out, **{"warm_start.answerer_examples": 24, "warm_start.epochs": 10, "warm_start.learning_rate": 5e-3,
                       "warm_start.max_length": 1024})
    rows, counts = data.sft_multi_turn_rows(WorldPool(cfg.train_worlds, cfg.seed), cfg)
    assert rows and all(r["messages"][0]["role"] == "system" and r["messages"][-1]["role"] == "assistant" for r in rows)
    phases.run_sft(tiny_path, rows, cfg, out, "answerer", TINY)
    return str(out / "final_model")


def _trainer(model, rows, rollout, cfg, tmp_path):
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOTrainer

    return GRPOTrainer(
        model=model,
        reward_funcs=[EpisodeReward(cfg.parl, cfg.grpo_answerer.num_generations)],
        args=phases.grpo_args(cfg.grpo_answerer, cfg, tmp_path, 0),
        train_dataset=Dataset.from_list(rows),
        processing_class=AutoTokenizer.from_pretrained(model, padding_side="left"),
        rollout_func=rollout,
    )


def _setup(tmp_path, model, decoding="generate", **extra):
    cfg = _cfg(tmp_path, **extra)
    pool = WorldPool(cfg.train_worlds, cfg.seed)
    rows, _ = data.mix_answerer_rows(pool, cfg, [], 0)
    rollout = MultiTurnRollout(pool, rows, spec=cfg.episode.spec(), decoding=decoding)
    return cfg, rows, rollout, _trainer(model, rows, rollout, cfg, tmp_path)


def _segments(ids, mask):
    out, cur, flag = [], [], None
    for t, m in zip(ids, mask):
        if flag is not None and m != flag:
            out.append((flag, cur))
            cur = []
        cur.append(t)
        flag = m
    if cur:
        out.append((flag, cur))
    return out


@pytest.mark.slow
@ON_ONE_WORKER
def test_env_tokens_are_masked_and_groups_share_their_start(tmp_path, oracle_tuned):
    cfg, rows, rollout, trainer = _setup(tmp_path, oracle_tuned)
    tok = trainer.processing_class
    prompts = [rows[0]["prompt"]] * 4  # one GRPO group
    out = rollout(prompts, trainer)
    assert len(out["completion_ids"]) == 4 and out["logprobs"] is None
    assert len({tuple(p) for p in out["prompt_ids"]}) == 1  # the same start, token for token
    stats = rollout.stats[-4:]
    for ids, mask in zip(out["completion_ids"], out["env_mask"]):
        assert len(ids) == len(mask) and 0 < len(ids) <= 256 and mask[0] == 1
        for flag, seg in _segments(ids, mask):
            text = tok.decode(seg)
            if flag == 0:  # environment tokens: an observation as a user turn, then the next assistant header
                assert "<|im_start|>user\n" in text and text.endswith("<|im_start|>assistant\n"), text
                assert '"step":' in text or '"error"' in text
            else:  # model tokens never contain a user turn
                assert "<|im_start|>user" not in text
    assert all(isinstance(s["env_reward"], float) for s in stats)


@pytest.mark.slow
@ON_ONE_WORKER
def test_rollouts_are_the_same_through_the_decoder_under_greedy_decoding(tmp_path, oracle_tuned):
    """Greedy on both paths; this briefly tuned model rambles under greedy decoding, so a token it repeats
    also ends a turn: every episode then takes several turns, with the env's observations between them."""
    outs, extra = {}, None
    for mode in ("generate", "generate", "exact", "prefix"):
        cfg, rows, rollout, trainer = _setup(tmp_path / mode, oracle_tuned, decoding=mode)
        trainer.temperature, trainer.generation_config.do_sample = 0.0, False
        prompts = [r["prompt"] for r in rows[:4] for _ in range(2)]
        if extra is not None:
            trainer.eos_token_ids = trainer.generation_config.eos_token_id = [*trainer.eos_token_ids, extra]
        out = rollout(prompts, trainer)
        extra = extra or out["completion_ids"][0][3]  # the first pass finds the repeated token
        outs[mode] = {k: out[k] for k in ("completion_ids", "env_mask", "env_reward", "cut_by_budget")}
        assert rollout.decode_seconds > 0
    turns = [sum(1 for a, b in zip(m, m[1:]) if a == 0 and b == 1) + 1 for m in outs["generate"]["env_mask"]]
    assert min(turns) >= 2  # observations between model turns in every episode
    assert outs["exact"] == outs["generate"] and outs["prefix"] == outs["generate"]


def test_decoder_rollouts_refuse_sampling_settings_they_do_not_apply(tmp_path, tiny_path):
    from osint_selfplay.errors import ConfigError

    penalty = {"grpo_answerer.repetition_penalty": 1.1}
    cfg, rows, rollout, trainer = _setup(tmp_path, tiny_path, decoding="prefix", **penalty)
    with pytest.raises(ConfigError, match="repetition_penalty and generation_kwargs need model.decoding='generate'"):
        rollout([rows[0]["prompt"]] * 4, trainer)


def test_a_budget_cut_scores_as_unanswered(tmp_path, tiny_path):
    cfg, rows, rollout, trainer = _setup(tmp_path, tiny_path, **{"grpo_answerer.max_completion_length": 16})
    out = rollout([rows[0]["prompt"]] * 4, trainer)
    assert all(out["cut_by_budget"]) and all(len(c) <= 16 for c in out["completion_ids"])
    assert all(r <= 0.0 for r in out["env_reward"])  # penalties only, like a truncated episode
    assert all(not stat["well_formed_tool_call"] or stat["tool_calls"] > 0 for stat in rollout.stats)


@pytest.mark.slow
@ON_ONE_WORKER
def test_multi_turn_grpo_phase_changes_parameters(tmp_path, oracle_tuned):
    cfg = _cfg(
        tmp_path,
        **{"grpo_answerer.max_steps": 2, "grpo_answerer.learning_rate": 5e-3, "grpo_answerer.temperature": 1.3},
    )
    pool = WorldPool(cfg.train_worlds, cfg.seed)
    rows, _ = data.mix_answerer_rows(pool, cfg, [], 0)
    rollout = MultiTurnRollout(pool, rows, spec=cfg.episode.spec(), decoding="prefix")
    m = phases.run_grpo(
        oracle_tuned,
        rows,
        EpisodeReward(cfg.parl, cfg.grpo_answerer.num_generations),
        cfg.grpo_answerer,
        cfg,
        tmp_path / "p",
        "answerer",
        TINY,
        0,
        rollout_func=rollout,
    )
    assert m.health is not None and m.health.parameters_changed > 0, m
    assert len(rollout.stats) == 2 * 4


def test_parl_terms_come_from_env_counts_and_anneal_to_zero():
    assert parl_terms(tool_calls=6, parallel_calls=4, useful_parallel_calls=3) == (4 / 6, 3 / 4)
    assert parl_terms(0, 0, 0) == (0.0, 0.0)
    assert annealed(0.5, 0, 100) == 0.5 and annealed(0.5, 50, 100) == 0.25 and annealed(0.5, 100, 100) == 0.0
    assert annealed(0.5, 500, 100) == 0.0

    class State:
        global_step = 0

    cfg = load_config(None, ["parl.lambda_parallel=0.2", "parl.lambda_finish=0.1", "parl.anneal_steps=10"])
    reward = EpisodeReward(cfg.parl, cfg.grpo_answerer.num_generations)
    kwargs = dict(prompts=[None] * 2, completions=[None] * 2, env_reward=[1.0, 0.5], tool_calls=[4, 2],
                  parallel_calls=[4, 0], useful_parallel_calls=[2, 0])
    state = State()
    assert reward(trainer_state=state, **kwargs) == pytest.approx([1.0 + 0.2 * 1.0 + 0.1 * 0.5, 0.5])
    state.global_step = 10
    assert reward(trainer_state=state, **kwargs) == [1.0, 0.5]  # annealed away: the task reward alone
    off = EpisodeReward(load_config(None, []).parl, 2)  # off by default
    assert off(trainer_state=State(), **kwargs) == [1.0, 0.5]


def test_episode_reward_counts_zero_variance_groups_by_task_source():
    reward = EpisodeReward(load_config(None, []).parl, 2)
    reward(prompts=[None] * 6, completions=[None] * 6, env_reward=[1.0, 1.0, -0.1, 0.9, 0.0, 0.0], tool_calls=[1] * 6,
           parallel_calls=[0] * 6, useful_parallel_calls=[0] * 6, source=["generated"] * 2 + ["seed"] * 4)
    assert reward.zero_variance_share() == {"generated": ZeroVariance(groups=1, zero_variance=1, share=1.0),
                                            "seed": ZeroVariance(groups=2, zero_variance=1, share=0.5)}


def test_equal_rewards_that_float32_cannot_hold_exactly_count_as_zero_variance_per_step():
    """TRL's frac_reward_zero_std misses a group of eight 0.7s (its float32 std is 6e-8); the reward's
    own per-step metric counts it, and the phase's zero-variance curve reads that metric."""
    from osint_selfplay.grpo_config import GRPOPhaseConfig
    from osint_selfplay.phases import _grpo_rewards
    from osint_selfplay.rewards import ZERO_VARIANCE_METRIC

    logged: dict[str, list[float]] = {}
    reward = EpisodeReward(load_config(None, []).parl, 8)
    reward(prompts=[None] * 16, completions=[None] * 16, env_reward=[0.7] * 8 + [0.0] * 7 + [1.4], tool_calls=[1] * 16,
           parallel_calls=[0] * 16, useful_parallel_calls=[0] * 16,
           log_metric=lambda key, value: logged.setdefault(key, []).append(value))
    assert logged[ZERO_VARIANCE_METRIC] == [1.0, 0.0]
    phase = GRPOPhaseConfig(per_device_train_batch_size=16, num_generations=8)
    logs = [{"step": 1, "reward": 0.4, "frac_reward_zero_std": 0.0, ZERO_VARIANCE_METRIC: 0.5},
            {"step": 2, "reward": 0.6, "frac_reward_zero_std": 0.0, ZERO_VARIANCE_METRIC: 1.0}]
    summary = _grpo_rewards(logs, phase)
    assert summary.zero_variance_metric == ZERO_VARIANCE_METRIC
    assert summary.zero_variance_steps == [
        ZeroVarianceStep(step=1, share=0.5, groups=2),
        ZeroVarianceStep(step=2, share=1.0, groups=2),
    ]
    assert summary.zero_variance_mean == 0.75 and summary.reward_first == 0.4 and summary.reward_last == 0.6
    trl_only = _grpo_rewards([{k: v for k, v in e.items() if k != ZERO_VARIANCE_METRIC} for e in logs], phase)
    assert (trl_only.zero_variance_metric, trl_only.zero_variance_mean) == ("frac_reward_zero_std", 0.0)


def _one_trl_tool_step(tmp_path, tiny_path, factory):
    """One GRPO step of TRL's own tool loop with ``environment_factory=factory``; returns the trainer."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer
    from trl.chat_template_utils import qwen2_5_chat_template

    from osint_gym.benchmark import benchmark_tasks
    from osint_gym.integrations.trl_env import task_rows

    tok = AutoTokenizer.from_pretrained(tiny_path, padding_side="left")
    tok.chat_template = qwen2_5_chat_template  # a template TRL's tool loop recognises (Qwen family)
    tok.save_pretrained(tmp_path / "model")
    AutoModelForCausalLM.from_pretrained(tiny_path).save_pretrained(tmp_path / "model")
    rows = task_rows(benchmark_tasks("v0:train", difficulty="easy", limit=4), split="v0:train")
    args = GRPOConfig(
        output_dir=str(tmp_path / "out"),
        max_steps=1,
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=64,
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
        report_to="none",
        logging_steps=1,
        save_strategy="no",
        learning_rate=1e-3,
    )
    trainer = GRPOTrainer(model=str(tmp_path / "model"), args=args, train_dataset=Dataset.from_list(rows),
                          processing_class=tok, environment_factory=factory)
    trainer.train()
    assert trainer.state.global_step == 1
    return trainer


@pytest.mark.slow
def test_environment_factory_adapter_runs_one_trl_step(tmp_path, tiny_path):
    from osint_gym.integrations.trl_env import OSINTToolEnv

    trainer = _one_trl_tool_step(tmp_path, tiny_path, OSINTToolEnv)
    assert any("rewards/OSINTToolEnv/mean" in entry for entry in trainer.state.log_history)
    tools = (
        {t["function"]["name"] for t in trainer.tools}
        if trainer.tools and isinstance(trainer.tools[0], dict)
        else set()
    )
    assert tools == set() or {"get_profile", "answer", "search_people"} <= tools


@pytest.mark.slow
def test_trl_trains_against_an_osint_v0_server(tmp_path, tiny_path):
    """TRL's tool loop with every rollout's episode on a real `osint-gym serve` process."""
    from osint_gym.integrations.serve.process import ServerProcess
    from osint_gym.integrations.serve.remote import RemoteToolEnv

    with ServerProcess(["--benchmark", "v0:train"]) as server:
        trainer = _one_trl_tool_step(tmp_path, tiny_path, lambda: RemoteToolEnv(server.url))
        rewards = [
            e["rewards/RemoteToolEnv/mean"] for e in trainer.state.log_history if "rewards/RemoteToolEnv/mean" in e
        ]
        assert rewards and -0.3 <= rewards[0] <= 1.5  # the env's reward range, computed on the server
        assert server.health()["internal_errors"] == 0


def test_adapter_forwards_tool_calls_and_scores_like_the_env():
    from osint_gym.benchmark import benchmark_tasks
    from osint_gym.integrations.trl_env import OSINTToolEnv, task_rows

    row = task_rows(
        benchmark_tasks("v0:train", difficulty="easy", family="identity_resolution", limit=1), split="v0:train"
    )[0]
    env = OSINTToolEnv()
    obs = env.reset(**row)
    assert "Investigate with tools" in obs and env.get_reward() == pytest.approx(0.0)
    task = env.env.task
    account = task.evidence[0].head
    looked = json.loads(env.get_profile(account))
    assert looked["results"][0]["ok"] and looked["results"][0]["result"]["id"] == account
    assert "unknown argument" not in env.search_people(name="x")
    env.answer(task.answer)
    assert env.done and env.get_reward() >= 1.0
    assert env.answer("person_0") == "The episode is over."


@pytest.mark.slow
@ON_ONE_WORKER
def test_a_rungs_given_turns_are_prompt_and_never_trained(tmp_path, oracle_tuned):
    """A task started at a depth (`Task.start_depth`): its given turns are in the prompt (the trainer's loss never
    reaches prompt tokens), as assistant and user turns of the chat template; the completion holds only the turns
    the model plays, and the env counts only those."""
    import dataclasses

    cfg = _cfg(tmp_path, **{"answerer.seed_difficulties": "['medium']", "episode.max_steps": 8,
                            "episode.max_observation_chars": 1500})
    spec = cfg.episode.spec()
    pool = WorldPool(cfg.train_worlds, cfg.seed)
    world, task = next((w, t) for w, t in data.seed_tasks(pool, cfg, 20, 0)
                       if (data.demonstration_steps(w, t, spec) or 0) >= 3)
    depth = data.demonstration_steps(world, task, spec) - 1
    rung = dataclasses.replace(task, start_depth=depth, stamp=None)
    rows, dropped = data.multi_turn_rows(pool, cfg, [(world, rung, "generated")])
    assert dropped == 0 and len(rows) == 1
    rollout = MultiTurnRollout(pool, rows, spec=spec)
    trainer = _trainer(oracle_tuned, rows, rollout, cfg, tmp_path)
    out = rollout([rows[0]["prompt"]] * 4, trainer)
    tok = trainer.processing_class
    _, info = spec.reset(spec.make_env(world, rung))
    prompt = tok.decode(out["prompt_ids"][0])
    assert prompt.count("<|im_start|>assistant\n") == depth + 1  # the given turns, then the model's first header
    for turn in info["given_turns"]:
        assert f"<|im_start|>assistant\n{turn['action']}<|im_end|>" in prompt and turn["observation"] in prompt
    for mask in out["env_mask"]:
        assert mask[0] == 1  # the completion opens with the model's own turn
        model_turns = sum(1 for a, b in zip([0, *mask], mask) if a == 0 and b == 1)
        assert model_turns <= cfg.episode.max_steps - depth
    assert all(s["critical_steps"] <= cfg.episode.max_steps - depth for s in rollout.stats)

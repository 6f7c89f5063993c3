"""The shipped GPU configuration trains the multi-turn investigator with vLLM: it loads, and its
vLLM settings reach TRL's GRPOConfig (checked without vLLM or a GPU)."""

from __future__ import annotations

from pathlib import Path

from osint_selfplay import trl_compat
from osint_selfplay.config import load_config

GPU = Path(__file__).resolve().parents[2] / "configs" / "selfplay" / "gpu-qwen-1.5b-vllm.toml"


def test_gpu_config_trains_the_multi_turn_answerer_with_vllm(tmp_path):
    cfg = load_config(str(GPU), [f"output_dir='{tmp_path / 'run'}'"])
    assert cfg.answerer.mode == "multi_turn" and cfg.model.answerer == "Qwen/Qwen2.5-1.5B-Instruct"
    assert (cfg.use_vllm, cfg.vllm_mode, cfg.tuning_mode) == (True, "colocate", "lora")
    trl_compat.check_run(cfg)  # every [grpo_*] key is a GRPOConfig field TRL accepts
    episode, phase = cfg.episode, cfg.grpo_answerer
    args = trl_compat.grpo_config(phase, cfg, str(tmp_path / "trainer"), cfg.seed, "grpo_answerer")
    assert (args.use_vllm, args.vllm_mode) == (True, "colocate")
    assert args.vllm_gpu_memory_utilization == phase.vllm_gpu_memory_utilization == 0.3  # passed through per phase
    assert args.max_completion_length == phase.to_dict()["max_completion_length"]
    assert args.vllm_max_model_length == phase.to_dict()["vllm_max_model_length"]
    # the vLLM context holds the prompt and the whole trajectory, whose budget holds every observation
    # (~4 chars a token)
    longest = episode.max_steps * episode.max_observation_chars // 4
    assert args.vllm_max_model_length > args.max_completion_length >= longest
    assert args.num_generations == 8 and args.learning_rate == 1e-5
    gen = trl_compat.grpo_config(cfg.grpo_generator, cfg, str(tmp_path / "trainer"), cfg.seed, "grpo_generator")
    assert gen.use_vllm and gen.vllm_mode == "colocate"
    assert not (tmp_path / "run").exists() and not (tmp_path / "trainer").exists()  # checking writes nothing


def test_gpu_config_answerer_rows_are_episode_openings(tmp_path):
    """The config's multi-turn settings build verified episode rows (a small sample, no model)."""
    from osint_selfplay import data
    from osint_selfplay.worlds import WorldPool

    cfg = load_config(str(GPU), [f"output_dir='{tmp_path}'", "train_worlds=2", "answerer.tasks_per_round=6",
                                 "answerer.generated_share=0.0"])
    rows, counts = data.mix_answerer_rows(WorldPool(cfg.train_worlds, cfg.seed), cfg, [], 0)
    assert counts.rows == len(rows) and len(rows) + counts.unsolvable_under_budget <= 6 and rows
    for row in rows:
        system, user = row["prompt"]
        assert system["role"] == "system" and user["role"] == "user"
        assert (
            f"Budget: {cfg.episode.max_steps} steps, up to {cfg.episode.max_parallel_calls} tool calls"
            in user["content"]
        )

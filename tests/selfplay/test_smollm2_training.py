"""osint-selfplay on a real pretrained chat model: configs/selfplay/smollm2-cpu.toml (SmolLM2-135M-Instruct, its
own tokenizer and template, LoRA) trains the answerer with packed SFT on oracle demonstrations, then multi-turn
GRPO in OSINT-v0, then evaluates, shrunk to a couple of steps. Slow: 135M parameters on a CPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osint_selfplay.config import load_config
from osint_selfplay.loop import SelfPlayRun
from tests.smollm2 import smollm2_path

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("smollm2")]

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "selfplay" / "smollm2-cpu.toml"


def test_smollm2_answerer_trains_with_lora_sft_then_multi_turn_grpo_and_is_evaluated(tmp_path):
    from transformers import AutoModelForCausalLM

    model = smollm2_path()
    overrides = {"output_dir": f"'{tmp_path / 'run'}'", "model.answerer": f"'{model}'", "model.generator": f"'{model}'",
                 "train_worlds": 4, "warm_start.answerer_examples": 12, "warm_start.max_steps": 2,
                 "warm_start.warmup_steps": 1, "answerer.tasks_per_round": 2, "grpo_answerer.max_steps": 1,
                 "grpo_answerer.per_device_train_batch_size": 2, "grpo_answerer.num_generations": 2,
                 "grpo_answerer.max_completion_length": 256, "grpo_answerer.temperature": 1.5,
                 "play.max_new_tokens": 16, "eval.limit": 2, "eval.max_new_tokens": 16,
                 "eval.include_untrained": "false"}
    cfg = load_config(str(CONFIG), [f"{k}={v}" for k, v in overrides.items()])
    assert (cfg.tuning_mode, cfg.phase_schedule, cfg.answerer.mode) == ("lora", "answerer", "multi_turn")
    summary = SelfPlayRun(cfg).run()

    warm = summary.warm_start
    assert warm is not None and warm.steps == 2 and warm.packed_rows and warm.trained_tokens_per_epoch
    # the loss fell on the model's turns only: far fewer tokens than the conversations hold
    assert 0 < warm.trained_tokens_per_epoch < warm.tokens / 4
    (round0,) = summary.rounds
    assert round0.generator is None and round0.sampled is None  # the answerer alone
    grpo = round0.answerer
    assert grpo is not None and grpo.steps == 1 and grpo.rollouts is not None and grpo.rollouts.n == 2
    assert grpo.health is not None and grpo.health.parameters > 0
    assert grpo.mix is not None and grpo.mix.generated == 0
    final = Path(summary.final_models.answerer)
    assert not (final / "adapter_config.json").exists()  # LoRA merged: a plain folder any consumer loads
    assert AutoModelForCausalLM.from_pretrained(final).config.num_hidden_layers == 30
    report = json.loads((tmp_path / "run" / "summary.json").read_text())
    headline = report["evaluation"]["headline"]
    assert headline["warm_start"]["success"]["n"] == headline["final"]["success"]["n"] == 2
    assert report["evaluation"]["models"]["final"] == str(final)

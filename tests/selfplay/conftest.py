from __future__ import annotations

import os

import pytest

# Trainers and the tiny-model builder stay offline and quiet in tests.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
os.environ.setdefault("WANDB_MODE", "offline")

TINY = "tiny:64x2"  # the smallest model that trains in a second: every test uses it


@pytest.fixture(scope="session")
def tiny_path():
    from osint_eval.modeling import tiny_path as build

    return str(build(TINY))


def micro_overrides(out_dir, **extra):
    """A self-play run small enough for a test: seconds per phase."""
    base = {
        "output_dir": f"'{out_dir}'", "rounds": 1, "train_worlds": 4, "model.generator": f"'{TINY}'", "model.answerer": f"'{TINY}'",
        "warm_start.answerer_examples": 64, "warm_start.generator_examples": 32, "warm_start.batch_size": 16,
        "generator.prompts_per_round": 8, "generator.sample_tasks": 16, "generator.solver_samples": 2,
        "answerer.tasks_per_round": 16, "grpo_generator.max_steps": 1, "grpo_generator.per_device_train_batch_size": 8,
        "grpo_generator.num_generations": 4, "grpo_generator.max_completion_length": 24,
        "grpo_answerer.max_steps": 1, "grpo_answerer.per_device_train_batch_size": 8, "grpo_answerer.num_generations": 4,
        "grpo_answerer.max_completion_length": 12, "eval.limit": 12, "eval.batch_size": 16,
    }
    base.update({k: v for k, v in extra.items()})
    return [f"{k}={v}" for k, v in base.items()]


TIMING_KEYS = ("wall_seconds", "seconds", "started", "solver_seconds", "reward_seconds")


def artifact_digests(root):
    """Every artifact of a run as file -> sha256, with wall-clock fields dropped and the run's own
    folder written as <root> (so that two runs in different folders compare equal)."""
    import hashlib
    import json
    from pathlib import Path

    root = Path(root)

    def drop(o):
        if isinstance(o, dict):
            for k in TIMING_KEYS:
                o.pop(k, None)
            o.pop("git_sha", None)
            for v in o.values():
                drop(v)
        elif isinstance(o, list):
            for v in o:
                drop(v)

    out = {}
    for p in sorted(root.rglob("*")):
        if not p.is_file() or "wandb" in p.parts:
            continue
        if p.suffix == ".json":
            content = json.loads(p.read_text())
            drop(content)
            blob = json.dumps(content, sort_keys=True, default=str).replace(str(root), "<root>").encode()
        else:
            blob = p.read_bytes().replace(str(root).encode(), b"<root>")
        out[str(p.relative_to(root))] = hashlib.sha256(blob).hexdigest()
    return out

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
        "output_dir": f"'{out_dir}'",
        "rounds": 1,
        "train_worlds": 4,
        "model.generator": f"'{TINY}'",
        "model.answerer": f"'{TINY}'",
        "warm_start.answerer_examples": 64,
        "warm_start.generator_examples": 32,
        "warm_start.batch_size": 16,
        "generator.prompts_per_round": 8,
        "generator.sample_tasks": 16,
        "generator.solver_samples": 2,
        "answerer.tasks_per_round": 16,
        "grpo_generator.max_steps": 1,
        "grpo_generator.per_device_train_batch_size": 8,
        "grpo_generator.num_generations": 4,
        "grpo_generator.max_completion_length": 24,
        "grpo_answerer.max_steps": 1,
        "grpo_answerer.per_device_train_batch_size": 8,
        "grpo_answerer.num_generations": 4,
        "grpo_answerer.max_completion_length": 12,
        "eval.limit": 12,
        "eval.batch_size": 16,
        "play.batch_size": 16,
        # tests compare the artifacts of separate runs: each fresh run would otherwise time bfloat16 against float32
        # for itself (osint_selfplay.precision), and a tiny model's product measures close to the threshold
        "warm_start.autocast": "'none'",
    }
    base.update({k: v for k, v in extra.items()})
    return [f"{k}={v}" for k, v in base.items()]


TIMING_KEYS = ("wall_seconds", "seconds", "started", "solver_seconds", "reward_seconds", "decode_seconds", "step_time",
               "train_runtime", "train_samples_per_second", "train_steps_per_second", "tokens_per_second",
               "tokenize_seconds", "bfloat16_speedup")


def artifact_digests(root):
    """Every artifact of a run but its log (train.log) as file -> sha256, with wall-clock fields dropped (in JSON files,
    JSONL lines and the JSON blocks of model cards) and the run's own folder written as <root> (so
    that two runs in different folders compare equal)."""
    import hashlib
    import json
    import re
    from pathlib import Path

    root = Path(root)
    keys = "|".join(TIMING_KEYS)
    timing_line = re.compile(rf'^\s*"(?:{keys})": .*$\n?', re.MULTILINE)

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
        return o

    out = {}
    for p in sorted(root.rglob("*")):
        if not p.is_file() or "wandb" in p.parts or p.name == "train.log":  # the run's log: wall-clock times
            continue
        if p.suffix == ".json":
            blob = json.dumps(drop(json.loads(p.read_text())), sort_keys=True, default=str)
        elif p.suffix == ".jsonl":
            blob = "\n".join(
                json.dumps(drop(json.loads(line)), sort_keys=True) for line in p.read_text().splitlines() if line
            )
        elif p.suffix == ".md":
            blob = timing_line.sub("", p.read_text())
        else:
            out[str(p.relative_to(root))] = hashlib.sha256(
                p.read_bytes().replace(str(root).encode(), b"<root>")
            ).hexdigest()
            continue
        out[str(p.relative_to(root))] = hashlib.sha256(blob.replace(str(root), "<root>").encode()).hexdigest()
    return out


def first_difference(a, b, root_a):
    """The artifacts whose digests differ between two runs, in the order run ``root_a`` wrote them."""
    from pathlib import Path

    order = sorted(
        set(a) | set(b), key=lambda k: (Path(root_a) / k).stat().st_mtime if (Path(root_a) / k).exists() else 0
    )
    return [k for k in order if a.get(k) != b.get(k)]

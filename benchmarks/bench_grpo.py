"""Where a GRPO step of the main job's answerer spends its time, for each decoding path side by side.

    hatch run python benchmarks/bench_grpo.py [--model runs/tiny-cpu/warm_start/shared/final_model] [--steps 4]
        [--runs generate:trl,prefix:trl,prefix:plain]

The main job's answerer phase (configs/selfplay/tiny-cpu.toml: its episodes per step, group size,
budgets, learning rate and thread count; seed tasks only, so no generator is needed) runs ``--steps``
optimizer steps from the same model once per run, a decoding path and an LM head ("trl": TRL's fused head;
"plain": `osint_selfplay.trl_compat.plain_lm_head`, what the loop uses on a CPU). Each step's time is split into:
generation (the model's turns, `MultiTurnRollout.decode_seconds`), env and tokens (the rest of the
rollout: env steps, rendering, tokenizing observations), scoring (the reward function) and the trainer
(forward/backward, optimizer, TRL's bookkeeping: the step's remaining time). The first run (by default Hugging
Face ``generate`` with TRL's head, the loop before issue 28) is the reference the others' episodes/s are divided by.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from osint_selfplay import data, phases, trl_compat
from osint_selfplay.artifacts import pin_determinism
from osint_selfplay.config import load_config
from osint_selfplay.rewards import EpisodeReward
from osint_selfplay.rollout import MultiTurnRollout
from osint_selfplay.worlds import WorldPool

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "selfplay" / "tiny-cpu.toml"


class _TimedRollout(MultiTurnRollout):
    seconds = 0.0

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        t0 = time.perf_counter()
        try:
            return super().__call__(prompts, trainer)
        finally:
            self.seconds += time.perf_counter() - t0


class _TimedReward(EpisodeReward):
    seconds = 0.0

    def __call__(self, *args: Any, **kwargs: Any) -> list[float]:
        t0 = time.perf_counter()
        try:
            return super().__call__(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - t0


def run(model: str, mode: str, head: str, steps: int, tmp: Path) -> dict[str, Any]:
    cfg = load_config(str(CONFIG), [f"output_dir='{tmp / mode / head}'", f"grpo_answerer.max_steps={steps}",
                                    f"model.decoding='{mode}'", "answerer.generated_share=0.0"])
    pin_determinism(cfg.torch_threads, cfg.deterministic)
    pool = WorldPool.for_run(cfg)
    rows, _ = data.mix_answerer_rows(pool, cfg, [], 0)
    rollout = _TimedRollout(pool, rows, spec=cfg.episode.spec(), decoding=mode)
    reward = _TimedReward(cfg.parl, cfg.grpo_answerer.num_generations)
    plain = trl_compat.plain_lm_head
    if head == "trl":  # the reference: TRL's own head
        trl_compat.plain_lm_head = lambda trainer: False  # type: ignore[assignment]
    try:
        metrics = phases.run_grpo(model, rows, reward, cfg.grpo_answerer, cfg, tmp / mode / head, "answerer",
                                  cfg.model.answerer, 0, rollout_func=rollout)
    finally:
        trl_compat.plain_lm_head = plain
    if metrics.lm_head != head:
        sys.exit(f"bench_grpo: asked for the {head!r} LM head, the phase used {metrics.lm_head!r}")
    total = float(metrics.seconds or 0.0)
    episodes = len(rollout.stats)
    parts = {"generation": rollout.decode_seconds, "env_and_tokens": rollout.seconds - rollout.decode_seconds,
             "scoring": reward.seconds, "trainer": total - rollout.seconds - reward.seconds}
    steps = metrics.steps or 0
    return {"steps": steps, "episodes": episodes, "seconds": round(total, 2),
            "episodes_per_second": round(episodes / total, 2),
            "per_step_seconds": {k: round(v / max(1, steps), 3) for k, v in parts.items()},
            "share": {k: round(v / total, 3) for k, v in parts.items()},
            "mean_env_reward": round(rollout.summary().mean_env_reward, 3)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="runs/tiny-cpu/warm_start/shared/final_model",
                   help="a trained model folder (default: the main job's warm start; run `hatch run train` first)")
    p.add_argument("--steps", type=int, default=4, help="optimizer steps per decoding path")
    p.add_argument("--runs", default="generate:trl,prefix:trl,prefix:plain",
                   help="DECODING:HEAD pairs (heads: trl, plain); the first is the reference")
    args = p.parse_args()
    if not Path(args.model).is_dir():
        sys.exit(f"bench_grpo: no model folder {args.model!r}; run `hatch run train` or pass --model")
    if args.steps < 1:
        sys.exit(f"bench_grpo: --steps must be >= 1; got {args.steps}")
    out: dict[str, Any] = {}
    runs = [tuple(r.split(":")) for r in args.runs.split(",")]
    if any(len(r) != 2 or r[1] not in ("trl", "plain") for r in runs):
        sys.exit(f"bench_grpo: --runs takes DECODING:HEAD pairs with HEAD trl or plain; got {args.runs!r}")
    with tempfile.TemporaryDirectory() as tmp:
        for mode, head in runs:
            name = f"{mode}:{head}"
            out[name] = r = run(args.model, mode, head, args.steps, Path(tmp))
            reference = out[":".join(runs[0])]["episodes_per_second"]
            r["episodes_per_second_vs_reference"] = round(r["episodes_per_second"] / reference, 2)
            step = "  ".join(f"{k} {v:.2f} s ({r['share'][k]:.0%})" for k, v in r["per_step_seconds"].items())
            print(f"{name:14s} {r['steps']} steps, {r['episodes']} episodes in {r['seconds']:.1f} s: "
                  f"{r['episodes_per_second']:.2f} episodes/s (x{r['episodes_per_second_vs_reference']:.2f}); "
                  f"per step: {step}", flush=True)
    print(json.dumps({"model": args.model, "steps": args.steps, **out}))


if __name__ == "__main__":
    main()

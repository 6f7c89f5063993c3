"""A warm-start recipe, measured in minutes: packed SFT for a fixed number of steps on the main job's
demonstrations, then greedy multi-turn episodes on held-out easy + medium v0:test tasks.

The main job bounds its warm start by wall time, so its step count (and score) follows the machine's
speed; this bounds it by steps, so two recipes compare at equal optimizer steps. Each variant of the
README's tokenizer study was measured this way (800 or 1,600 steps, 400 tasks: about 3 and 7 minutes on
2 cores). At 400 tasks a 95% interval is about +-5 points and two seeds of one recipe differed by 1.5:
compare recipes over several seeds, and confirm a winner with the main job on all 1,000 tasks.

Run: ``python benchmarks/bench_recipe.py [--config configs/selfplay/tiny-cpu.toml] [--steps 1600]
[--tasks 400] [--seed 0] [--set key=value ...] [--save DIR]`` (``--set`` as osint-selfplay's, e.g.
``warm_start.answerer_examples=12000`` or ``model.answerer='tiny:128x3-v2048'``).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="configs/selfplay/tiny-cpu.toml")
    ap.add_argument("--steps", type=int, default=1600, help="optimizer steps of packed SFT")
    ap.add_argument("--tasks", type=int, default=400, help="held-out easy + medium v0:test tasks (in split order)")
    ap.add_argument("--seed", type=int, default=0, help="the data order's seed")
    ap.add_argument("--set", nargs="*", default=[], help="config overrides, key=value")
    ap.add_argument("--save", default=None, help="keep the trained model in this folder (for error analysis)")
    args = ap.parse_args()

    from osint_eval.modeling import load_model_and_tokenizer, resolve_model
    from osint_eval.policies import HFPolicy
    from osint_eval.runner import run_multi_turn
    from osint_gym.benchmark import benchmark_tasks, benchmark_world
    from osint_selfplay import data, sft
    from osint_selfplay.config import load_config
    from osint_selfplay.worlds import WorldPool

    cfg = load_config(args.config, args.set)
    ws = cfg.warm_start
    t0 = time.perf_counter()
    pool = WorldPool.for_run(cfg)
    rows, counts = data.warm_start_rows(pool, cfg, "shared")
    model, tokenizer = load_model_and_tokenizer(resolve_model(cfg.model.answerer), dtype="float32", device="cpu")
    packed = sft.pack(sft.tokenize(tokenizer, [r["messages"] for r in rows]), ws.max_length)
    print(f"data: {len(rows)} conversations ({counts}), {len(packed)} packed rows, {packed.dropped_too_long} too long; "
          f"{time.perf_counter() - t0:.0f} s")
    settings = sft.SFTSettings(
        learning_rate=ws.learning_rate,
        batch_size=ws.batch_size,
        warmup_steps=ws.warmup_steps,
        epochs=args.steps * ws.batch_size / len(packed),
        decay_fraction=ws.decay_fraction,
        seed=args.seed,
    )
    trained, _ = sft.train_packed(model, packed, settings, pad_id=tokenizer.pad_token_id)
    print(f"SFT: {trained.steps} steps, {trained.epochs_done or 0:.2f} epochs in {trained.seconds or 0:.0f} s, "
          f"{trained.tokens_per_second or 0:.0f} tokens/s, final loss {trained.final_loss or 0:.3f}")

    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        folder = args.save or scratch
        model.save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        tasks = [t for t in benchmark_tasks("v0:test") if t.difficulty in ("easy", "medium")][: args.tasks]
        policy = HFPolicy(
            folder, batch_size=cfg.eval.batch_size, max_new_tokens=cfg.eval.max_new_tokens, temperature=0.0
        )
        episodes = run_multi_turn(policy, benchmark_world("v0:test"), tasks, spec=cfg.episode.spec(),
                                  batch_size=cfg.eval.batch_size)
    from osint_eval.stats import proportion_interval

    print(f"success on easy + medium v0:test tasks: {proportion_interval([e.correct for e in episodes]).fmt(pct=True)}")
    for key in ("difficulty", "family"):
        c = Counter((getattr(e, key), e.correct) for e in episodes)
        groups = sorted({k for k, _ in c})
        print(f"  by {key}: " + ", ".join(f"{g} {c[(g, True)]}/{c[(g, True)] + c[(g, False)]}" for g in groups))


if __name__ == "__main__":
    main()

"""The headroom of outcome-reward RL from a model: greedy success against k samples of the same tasks.

    hatch run python benchmarks/bench_headroom.py --model runs/tiny-cpu/warm_start/shared/final_model
        [--tasks 200] [--k 8] [--temperature 1.0]

On ``--tasks`` training seed tasks (the answerer's own stream and difficulties, as the main job's GRPO phase
draws them; never a benchmark split), the model plays each greedily once and ``--k`` times sampled (the
main job's episode settings and decoding). Printed per difficulty and overall: greedy success, the mean of
the samples, pass@k (a task solved by any sample) and the share of tasks all k samples fail. GRPO on an
outcome reward moves probability toward sampled successes, so it can at most lift greedy success to pass@k
(and only where a group's rewards vary); a gap of zero means there is nothing for it to find.
"""

from __future__ import annotations

import argparse
from pathlib import Path

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "selfplay" / "tiny-cpu.toml"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="runs/tiny-cpu/warm_start/shared/final_model")
    ap.add_argument("--config", default=str(CONFIG))
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--temperature", type=float, default=1.0)
    args = ap.parse_args()
    if not Path(args.model).is_dir():
        raise SystemExit(f"bench_headroom: no model at {args.model} (run the main job first: hatch run train)")

    from osint_eval.policies import HFPolicy
    from osint_eval.runner import run_multi_turn
    from osint_selfplay import data, streams
    from osint_selfplay.config import load_config
    from osint_selfplay.solver import SolverSampler
    from osint_selfplay.worlds import WorldPool

    cfg = load_config(
        args.config, [f"generator.solver_samples={args.k}", f"generator.solver_temperature={args.temperature}"]
    )
    pool = WorldPool.for_run(cfg)
    items = data.seed_tasks(pool, cfg, args.tasks, 0, streams.TRAIN)
    greedy_policy = HFPolicy(args.model, batch_size=cfg.eval.batch_size, max_new_tokens=cfg.eval.max_new_tokens,
                             temperature=0.0, decoding=cfg.model.decoding)
    greedy = [False] * len(items)
    by_world: dict[int, list[int]] = {}
    for i, (world, _) in enumerate(items):  # the tasks are spread over the training worlds: batch them per world
        by_world.setdefault(id(world), []).append(i)
    for idx in by_world.values():
        world = items[idx[0]][0]
        results = run_multi_turn(greedy_policy, world, [items[i][1] for i in idx],
                                 spec=cfg.episode.spec(), batch_size=cfg.eval.batch_size)
        for i, r in zip(idx, results):
            greedy[i] = r.correct
    greedy_policy.close()
    sampler = SolverSampler.from_config(cfg, args.model, seed=0)
    rates = sampler.solve_rates(items)
    sampler.policy.close()
    print(f"{args.model}: {len(items)} training seed tasks, greedy once and {args.k} samples at T = {args.temperature}")
    print("| tasks | n | greedy | mean of samples | pass@k | all k fail |")
    print("|---|---|---|---|---|---|")
    groups = {"all": list(range(len(items)))}
    for d in cfg.answerer.seed_difficulties:
        groups[d] = [i for i, (_, t) in enumerate(items) if t.difficulty == d]
    for name, idx in groups.items():
        n = len(idx)
        if not n:
            continue
        g = sum(greedy[i] for i in idx) / n
        mean = sum(rates[i] for i in idx) / n
        passk = sum(rates[i] > 0 for i in idx) / n
        fail = sum(rates[i] == 0 for i in idx) / n
        print(f"| {name} | {n} | {100 * g:.1f}% | {100 * mean:.1f}% | {100 * passk:.1f}% | {100 * fail:.1f}% |")


if __name__ == "__main__":
    main()

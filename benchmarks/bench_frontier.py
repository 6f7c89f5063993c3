"""Where the frozen answerer's frontier lies: the solve rate of every path the generator's offers show.

    hatch run python benchmarks/bench_frontier.py --model runs/tiny-cpu/warm_start/shared/final_model
        [--offers 60] [--choices 6] [--max-hops 3] [--k 8] [--temperatures 1.0,1.6]

The main job's offers (choose mode with filters, the generator's stream), every numbered path of each validated
as a task and played ``--k`` times by the model at each temperature (the main job's episode settings, its solver
in two processes). Printed per temperature: the share of paths whose estimated solve rate lies in the frontier
band [0.2, 0.8] by hops, and the frontier share three choosers would reach on these offers: a uniform pick, the
scripted curriculum's p(1 - p) pick (its bins estimated from these same episodes, so an upper bound of what it
learns in a round), and the best path of each offer (what a perfect generator reaches).
"""

from __future__ import annotations

import argparse
import collections
import time
from pathlib import Path

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "selfplay" / "tiny-cpu.toml"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="runs/tiny-cpu/warm_start/shared/final_model")
    ap.add_argument("--offers", type=int, default=60)
    ap.add_argument("--choices", type=int, default=6)
    ap.add_argument("--max-hops", type=int, default=3)
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--temperatures", default="1.0,1.6")
    args = ap.parse_args()
    if not Path(args.model).is_dir():
        raise SystemExit(f"bench_frontier: no model at {args.model} (run the main job first: hatch run train)")

    from osint_gym.proposals import Offer, Proposal, validate_proposal
    from osint_selfplay import data
    from osint_selfplay.config import load_config
    from osint_selfplay.curriculum import FrontierCurriculum, choice_bin
    from osint_selfplay.rewards import in_band
    from osint_selfplay.solver import SolverSampler
    from osint_selfplay.worlds import WorldPool

    cfg = load_config(str(CONFIG), [f"generator.max_hops={args.max_hops}", f"generator.offer_choices={args.choices}",
                                    f"generator.solver_samples={args.k}"])
    pool = WorldPool.for_run(cfg)
    items, where = [], []
    for i, row in enumerate(data.offer_rows(pool, cfg, 0, args.offers)):
        offer, world = Offer.from_json(row["offer"]), pool.world(row["world_seed"])
        for k in range(1, len(offer.choices) + 1):
            _, task = validate_proposal(world, Proposal("", "", (), (k,)), offer=offer, max_hops=args.max_hops)
            if task is not None:
                items.append((world, task))
                where.append((i, offer, k))
    print(f"{args.model}: {args.offers} offers of {args.choices} paths (1-{args.max_hops} hops), {len(items)} valid "
          f"paths, {args.k} episodes each")
    print("| T | seconds | band share, 1 / 2 / 3 hops | uniform pick | curriculum pick | best path |")
    print("|---|---|---|---|---|---|")
    for t in (float(x) for x in args.temperatures.split(",")):
        t0 = time.perf_counter()
        sampler = SolverSampler.from_config(cfg, args.model, seed=0, temperature=t)
        rates = sampler.solve_rates(items)
        sampler.close()
        seconds = time.perf_counter() - t0
        by_hops = collections.defaultdict(list)
        per_offer: dict[int, list[tuple[object, float]]] = collections.defaultdict(list)
        cur = FrontierCurriculum()
        for (i, offer, k), (_, task), p in zip(where, items, rates):
            by_hops[task.query.n_hops].append(in_band(p))
            per_offer[i].append((choice_bin(offer, k), p))
            cur.observe(choice_bin(offer, k), round(p * args.k), args.k)
        uniform = sum(sum(in_band(p) for _, p in ch) / len(ch) for ch in per_offer.values()) / len(per_offer)
        curriculum = 0.0
        for ch in per_offer.values():
            w = [cur.rate(b) * (1 - cur.rate(b)) for b, _ in ch]
            curriculum += sum(wi * in_band(p) for wi, (_, p) in zip(w, ch)) / sum(w)
        best = sum(any(in_band(p) for _, p in ch) for ch in per_offer.values()) / len(per_offer)
        hops = " / ".join(f"{100 * sum(v) / len(v):.1f}% (n={len(v)})" for _, v in sorted(by_hops.items()))
        print(f"| {t} | {seconds:.0f} | {hops} | {100 * uniform:.1f}% | {100 * curriculum / len(per_offer):.1f}% | "
              f"{100 * best:.1f}% |")


if __name__ == "__main__":
    main()

"""How hard the generator's offers are for a frozen answerer: every offered path's solve rate.

For the first N choose-mode offers of the main job's sampling stream, each of the offer's numbered paths
is resolved and verified as the generator's `P: k` would be, and the frozen answerer plays it k times
(episodes through the env at the solver's temperature, as the learnability reward does). Prints the mean
solve rate, how many paths land in the frontier band and how many have a solve rate of 0 or 1, overall
and by hop count, for filter-free and for filtered offers (`generator.offer_filters`).

Run: ``python benchmarks/bench_offers.py MODEL_DIR [--offers 32] [--filters 0,1] [--set generator.max_hops=2 ...]``
(a folder that ``bench_recipe.py --save`` or the main job wrote).
"""

from __future__ import annotations

import argparse
import statistics


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="a saved answerer folder")
    ap.add_argument("--config", default="configs/selfplay/tiny-cpu.toml")
    ap.add_argument("--offers", type=int, default=32, help="offers (each numbers 3 paths)")
    ap.add_argument("--filters", default="0,1", help="which offers: 0 filter-free, 1 filtered, 0,1 both")
    ap.add_argument("--set", nargs="*", default=[], help="config overrides, key=value")
    args = ap.parse_args()

    from osint_gym import proposals
    from osint_selfplay import streams
    from osint_selfplay.config import load_config
    from osint_selfplay.solver import SolverSampler
    from osint_selfplay.worlds import WorldPool

    cfg = load_config(args.config, args.set)
    g, band = cfg.generator, cfg.answerer.frontier
    pool = WorldPool.for_run(cfg)
    solver = SolverSampler.from_config(cfg, args.model, cfg.seed)  # as the run's learnability reward samples it
    for filters in [x.strip() == "1" for x in args.filters.split(",")]:
        items, hops = [], []
        for i in range(args.offers):
            world = pool.pick(i)
            offer = proposals.make_offer(world, streams.stream_seed(cfg.seed, streams.SAMPLE), i, mode="choose",
                                         max_hops=g.max_hops, filters=filters)
            for k in range(1, len(offer.choices) + 1):
                verdict, task = proposals.validate_proposal(world, proposals.parse_proposal(f"P: {k}"), offer=offer,
                                                            max_hops=g.max_hops, task_id=f"offer{i}-{k}")
                if task is None:
                    raise SystemExit(f"offer {offer.offer_id} path {k} did not verify: {verdict}")
                items.append((world, task))
                hops.append(task.query.n_hops)
        rates = solver.solve_rates(items)

        def line(rs: list[float]) -> str:
            inside = sum(band[0] <= p <= band[1] for p in rs)
            return (f"n={len(rs)} mean solve rate {statistics.mean(rs):.3f}, in [{band[0]}, {band[1]}] {inside}, "
                    f"0 or 1: {sum(p in (0.0, 1.0) for p in rs)}")

        print(
            f"{'filtered' if filters else 'filter-free'} offers, 1-{g.max_hops} hops, "
            f"{g.solver_samples} episodes each: {line(rates)}"
        )
        for h in sorted(set(hops)):
            print(f"  {h} hop(s): {line([p for p, x in zip(rates, hops) if x == h])}")


if __name__ == "__main__":
    main()

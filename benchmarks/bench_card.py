"""The benchmark card's figures: for each split, the shortcut table of its single-turn contexts (both modes)
and the multi-turn scores of the tool-only oracle and the scripted baselines.

Run: ``python benchmarks/bench_card.py [--splits v2:dev,v2:test,v2:hard,v1:dev,v1:test,v1:hard,v0:dev,v0:test]``
(the default: every one of them). Prints a Markdown table per split, then one JSON line: the ``MEASURED`` entries
of ``osint_gym.card`` (the card that the osint-gym README and ``to_hf_dataset`` carry). Single-turn rates are exact
expectations over the whole split (`osint_eval.audit`) or, for the named baselines, their seeded answers; multi-turn
rates are episodes
through the env under the default budgets.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from osint_eval.audit import audit
from osint_eval.baselines import MULTI_TURN_SHORTCUTS, SINGLE_TURN_SHORTCUTS
from osint_eval.policies import PolicyInput, make_policy
from osint_eval.runner import run_multi_turn
from osint_gym.benchmark import benchmark_tasks, benchmark_world
from osint_gym.schema import canonical_edge
from osint_gym.single_turn import CONTEXT_MODES, build_context, score_completion
from osint_gym.tasks.near_miss import reading

QUESTION_READING = ("next-to-named:max", "next-to-named:min")
MULTI_TURN = ("oracle", *MULTI_TURN_SHORTCUTS, "random-guess")


def single_turn(ref: str, mode: str) -> dict:
    tasks, world = benchmark_tasks(ref), benchmark_world(ref)
    contexts = [build_context(world, t, mode=mode) for t in tasks]
    rows = audit(world, tasks, contexts)
    uniform = rows[0].rate
    context_only = [r for r in rows[1:] if r.rule not in QUESTION_READING]
    strongest = max(context_only, key=lambda r: abs(r.rate - uniform))
    batch = [PolicyInput([], t, world, i, 0, context=c) for i, (t, c) in enumerate(zip(tasks, contexts))]
    named = {}
    for name in ("random-guess", *SINGLE_TURN_SHORTCUTS):
        answers = make_policy(name).act(batch)
        named[name] = sum(score_completion(t, a, c).correct for t, c, a in zip(tasks, contexts, answers)) / len(tasks)
    return {"uniform": uniform, "baselines": named, "farthest_rule": [strongest.rule, strongest.rate],
            "question_reading": {r.rule: r.rate for r in rows if r.rule in QUESTION_READING},
            "gold_edges_shown": sum({canonical_edge(e) for e in t.evidence} <= set(c.edges)
                                    for t, c in zip(tasks, contexts))}


def multi_turn(ref: str) -> dict:
    tasks, world = benchmark_tasks(ref), benchmark_world(ref)
    return {name: sum(r.correct for r in run_multi_turn(make_policy(name), world, tasks)) / len(tasks)
            for name in MULTI_TURN}


def decoys(ref: str) -> dict:
    """How the near-miss decoys meet a split's tasks: the tasks whose gold touches a named entity, their near-misses,
    and the world degree of the golds and of their near-misses (matched on it); the tasks with a constraint."""
    tasks, world = benchmark_tasks(ref), benchmark_world(ref)
    found = [(t, reading(world, t)) for t in tasks]
    touching = [(t, r) for t, r in found if r.gold]
    degree = lambda e: sum(1 for _ in world.incident_edges(e))  # noqa: E731
    counts = sorted(len(r.near_misses) for _, r in touching) or [0]
    near = [degree(c) for _, r in touching for c in r.near_misses] or [0]
    return {"gold_touches_named": len(touching), "near_misses_min": counts[0],
            "near_misses_median": statistics.median(counts),
            "gold_degree": statistics.mean([degree(t.answer) for t, _ in touching] or [0]),
            "near_miss_degree": statistics.mean(near),
            "with_constraints": sum(bool(t.query and t.query.constraints()) for t in tasks)}


def print_split(ref: str, entry: dict) -> None:
    mt = entry["multi_turn"]
    best = max((n for n in mt if n != "oracle"), key=lambda n: mt[n])
    print(f"## {ref} (n={entry['n']}): multi-turn oracle {100 * mt['oracle']:.1f}%, strongest scripted baseline "
          f"{best} {100 * mt[best]:.1f}%")
    if "decoys" in entry:
        d = entry["decoys"]
        print(f"decoys: {d['gold_touches_named']} tasks whose gold touches a named entity, near-misses per task "
              f"min {d['near_misses_min']} median {d['near_misses_median']}; world degree gold {d['gold_degree']:.1f} "
              f"near-miss {d['near_miss_degree']:.1f}; {d['with_constraints']} tasks with a constraint")
    print("multi-turn: " + ", ".join(f"{n} {100 * v:.1f}%" for n, v in mt.items()))
    print("| mode | uniform | " + " | ".join(SINGLE_TURN_SHORTCUTS) + " | farthest context rule | next-to-named:max | "
          "next-to-named:min | gold edges shown |")
    print("|---" * (6 + len(SINGLE_TURN_SHORTCUTS)) + "|")
    for mode, st in entry["single_turn"].items():
        u = st["uniform"]
        cells = " | ".join(f"{100 * st['baselines'][n]:.1f} ({100 * (st['baselines'][n] - u):+.1f})"
                           for n in SINGLE_TURN_SHORTCUTS)
        rule, rate = st["farthest_rule"]
        reading = " | ".join(f"{100 * st['question_reading'][r]:.1f} ({100 * (st['question_reading'][r] - u):+.1f})"
                             for r in QUESTION_READING)
        print(f"| {mode} | {100 * u:.1f} | {cells} | {rule} {100 * rate:.1f} ({100 * (rate - u):+.1f}) | {reading} | "
              f"{st['gold_edges_shown']}/{entry['n']} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--splits", default="v2:dev,v2:test,v2:hard,v1:dev,v1:test,v1:hard,v0:dev,v0:test")
    args = ap.parse_args()
    out = {}
    t0 = time.perf_counter()
    for ref in args.splits.split(","):
        entry = {"n": len(benchmark_tasks(ref)), "single_turn": {m: single_turn(ref, m) for m in CONTEXT_MODES},
                 "multi_turn": multi_turn(ref)}
        extra = {"decoys": decoys(ref)} if ref.startswith("v2:") else {}
        print_split(ref, entry | extra)
        out[ref] = entry
    print(f"seconds: {time.perf_counter() - t0:.1f}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()

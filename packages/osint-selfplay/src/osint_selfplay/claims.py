"""The run's headline as a fixed block of claims: one line each, the same names in every run, in summary.json
(``claims``) and at the end of the printed summary, so that readers and scripts find them.

Every figure carries its interval and sample size; a figure the run did not measure says why on its line
(``not run: hatch run train-controls``). Paired deltas are read from the closing evaluation's hard-task pool
(the hard tasks of every evaluated split, ``evaluation.hard``) and its first split's easy + medium subset.
"""

from __future__ import annotations

from osint_eval.schema import Estimate
from osint_eval.stats import difference_of_means, proportion_interval
from osint_selfplay.results import ArmFigures, SubsetFigures
from osint_selfplay.state import RunSummary

CONTROLS_LATER = "not run: hatch run train-controls (osint-selfplay controls RUN_DIR)"
# the paired claims on the evaluation's hard-task pool: name -> comparison
PAIRED = {
    "hard_final_vs_warm_start": "final vs warm_start",
    "hard_final_vs_sft_control": "final vs control",
    "hard_final_vs_uniform_control": "final vs uniform_control",
    "hard_final_vs_curriculum_control": "final vs curriculum_control",
    "hard_final_vs_reverse_schedule": "final vs reverse_control",
    "hard_final_vs_imitation_reference": "final vs imitation_reference",
}
NAMES = ("generator_reward_last_vs_first_quarter", "frontier_share_last_round", *PAIRED, "easy_medium_final",
         "easy_medium_final_vs_warm_start")
CONTROLS = ("control", "uniform_control", "curriculum_control", "reverse_control", "imitation_reference")


def generator_quarters(summary: RunSummary, seed: int = 0) -> str:
    """The mean reward of the generator's proposals over the last quarter of its GRPO steps (every round's, in
    order) minus the first quarter's, with a bootstrap interval."""
    steps = [s for rnd in summary.rounds for s in ((rnd.generator.generator_steps if rnd.generator else None) or [])]
    if len(steps) < 4:
        return f"not measured: {len(steps)} generator GRPO steps (a quarter needs at least 4)"
    q = len(steps) // 4
    first = [r for s in steps[:q] for r in s.rewards]
    last = [r for s in steps[-q:] for r in s.rewards]
    d = difference_of_means(last, first, seed=seed)
    return (f"{d.fmt(signed=True, show_n=False)} (steps 1-{q} vs {len(steps) - q + 1}-{len(steps)} of {len(steps)}; "
            f"n={len(first)} vs {len(last)} proposals)")


def _share(arm: ArmFigures) -> Estimate:
    k, n = arm.in_frontier, arm.valid
    return proportion_interval([1] * k + [0] * (n - k))


def frontier_last_round(summary: RunSummary) -> str:
    """The frontier share of the last round's valid proposals, the learned generator's and the curriculum's."""
    sample = summary.rounds[-1].sampled if summary.rounds else None
    if not sample or not sample.valid:
        return "not measured: no valid proposal in the last round's sample"
    line = _share(sample).fmt(pct=True)
    cur = sample.curriculum
    return line + (f" ; scripted curriculum {_share(cur).fmt(pct=True)}" if cur and cur.valid
                   else " ; scripted curriculum not measured (generator.curriculum = false)")


def paired_line(subset: SubsetFigures | None, comparison: str) -> str:
    """A paired delta of an evaluation subset (its hard pool, its easy + medium tasks): success in points with its
    interval, n and McNemar's p."""
    p = subset.comparisons.get(comparison) if subset else None
    if p is None:
        return CONTROLS_LATER if any(m in CONTROLS for m in comparison.split(" vs ")) else "not measured"
    if not p.n or p.success_delta is None or p.mcnemar is None:
        return "no paired task"
    where = f" on {' + '.join(subset.splits)}" if subset and subset.splits else ""
    return (f"{p.success_delta.fmt(pct=True, signed=True, show_n=False)} (n={p.n}){where}, "
            f"McNemar p={p.mcnemar.p_value:.3g}")


def claims(summary: RunSummary, seed: int = 0) -> dict[str, str]:
    """The claims block of a run summary, in `NAMES` order (evaluation lines say so when it did not run)."""
    ev = summary.evaluation
    out = {"generator_reward_last_vs_first_quarter": generator_quarters(summary, seed),
           "frontier_share_last_round": frontier_last_round(summary)}
    for name, comparison in PAIRED.items():
        out[name] = paired_line(ev.hard, comparison) if ev else "not measured: eval.enabled = false"
    if summary.uniform_control and summary.uniform_control.same_as_final:
        out["hard_final_vs_uniform_control"] = ("+0.0 pts by construction: no generated task reached the answerer, so "
                                                "its rows were the uniform control's (the same run)")
    em = ev.easy_medium if ev else None
    final = em.success.get("final") if em else None
    out["easy_medium_final"] = f"{final.fmt(pct=True)} on {ev.tasks}" if final and ev else "not measured"
    out["easy_medium_final_vs_warm_start"] = paired_line(em, "final vs warm_start") if em else "not measured"
    return {name: out[name] for name in NAMES}


def claim_lines(block: dict[str, str]) -> list[str]:
    """The printed block: ``claim <name>: <figure>`` per line, in `NAMES`' fixed order (summary.json sorts its keys,
    so a block read back from it comes in another order); a name outside `NAMES` follows them."""
    order = [name for name in NAMES if name in block] + sorted(set(block) - set(NAMES))
    return [f"claim {name}: {block[name]}" for name in order]

"""The run summary as readable text (printed at the end of ``osint-selfplay train``).

Figures with an interval are read through osint-eval's report schema and printed with its one formatter
(`osint_eval.schema.Estimate.fmt`), so the summary and the evaluation report show the same strings.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from osint_eval.schema import Curve, Estimate, PairedBlock
from osint_selfplay.claims import claim_lines
from osint_selfplay.evaluate import RUN_MODELS, comparison_order, model_order
from osint_selfplay.results import (
    AnswererResult,
    ArmFigures,
    ArmResult,
    ControlResult,
    EvaluationResult,
    GeneratorResult,
    RelabelCounts,
    RelabelResult,
    SFTResult,
    SubsetFigures,
    TaskCounts,
    TaskMix,
    WarmStartResult,
)
from osint_selfplay.state import RoundSummary, RunSummary

T = TypeVar("T")


def _est(e: Estimate | None, pct: bool = True) -> str:
    return e.fmt(pct=pct, show_n=False) if e else "n/a"


def _arm(arm: ArmFigures) -> str:
    """One arm of a round's frontier sample: valid proposals, frontier share, solve rate and hops."""
    rungs = (f", mean start depth {_num(arm.mean_depth, 2)} (steps left {_num(arm.mean_left, 2)})"
             if arm.mean_depth is not None else "")
    return (f"valid {arm.valid}/{arm.proposals}, frontier share {_pct(arm.frontier_share)} "
            f"({arm.in_frontier} in [0.2, 0.8]), mean solve rate {_pct(arm.mean_solve_rate)}, "
            f"mean hops {_num(arm.mean_hops, 2)}{rungs}")


def _round_lines(rnd: RoundSummary) -> list[str]:
    s, g, a = rnd.sampled, rnd.generator or GeneratorResult(), rnd.answerer
    head = [f"round {rnd.round}: generator reward {_num(g.reward_first)} -> {_num(g.reward_last)} "
            f"over {g.steps} GRPO steps, frontier share of its proposals {_pct(g.frontier_share)} "
            f"(the frozen answerer's {g.solve_rate_samples} episodes per distinct task)"]
    if s:
        head.append(f"  sample, learned generator: {_arm(s)}")
        if s.curriculum:
            head.append(f"  sample, scripted curriculum: {_arm(s.curriculum)}")
    lines = [*head, _answerer_line(a) if a else "  no answerer GRPO phase"]
    if rnd.relabel:
        lines.append(_relabel_line(rnd.relabel))
    zero = (a.zero_variance_by_source if a else None) or {}
    if zero:
        lines.append("  zero-variance answerer groups: " + ", ".join(
            f"{src} {z.zero_variance}/{z.groups} ({_pct(z.share)})" for src, z in sorted(zero.items())))
    dyn = a.mix.dynamic_sampling if a and a.mix else None
    if dyn:
        lines.append(f"  dynamic sampling of seed tasks: {dyn.candidates} candidates played, "
                     f"{dyn.all_solved} always and {dyn.none_solved} never solved; {dyn.replaced} replaced, "
                     f"{dyn.unreplaced} unreplaced (too few mixed); mean estimated solve rate "
                     f"{_num(dyn.mean_rate_candidates)} -> {_num(dyn.mean_rate_kept)} kept, in {_num(dyn.seconds)} s")
    if a and a.rollouts:
        ro = a.rollouts
        lines.append(
            f"  rollouts: {ro.n}, with a well-formed tool call {_pct(ro.well_formed_tool_call_share)}, "
            f"cut by the token budget {_pct(ro.cut_by_budget_share)}, mean tool calls {ro.mean_tool_calls:.2f}, "
            f"mean critical steps {ro.mean_critical_steps:.2f}"
        )
    return lines


def _answerer_line(a: AnswererResult) -> str:
    """An answerer phase's tasks (generated, seed, the top-up and the frontier band's cut) and its reward."""
    mix = a.mix or TaskMix()
    return (
        f"  answerer tasks: {mix.generated} generated + {mix.seed} seed, mean hops "
        f"{_num(mix.mean_hops, 2)}" + (f", mean start depth {_num(mix.mean_depth, 2)}" if mix.mean_depth is not None
                                       else "") + f" (top-up {mix.top_up}"
        + (f", {mix.outside_frontier} of {mix.valid_generated} valid outside the frontier band {mix.frontier}"
           if mix.frontier else "")
        + (f", {mix.unsolvable_under_budget} dropped: not solvable under the episode's budgets"
           if mix.unsolvable_under_budget else "")
        + f"); answerer reward {_num(a.reward_first)} -> {_num(a.reward_last)}"
        + (f" (groups with zero reward variance: {_pct(a.zero_variance_mean)})"
           if a.zero_variance_mean is not None else "")
    )


def _relabel_line(relabel: RelabelResult) -> str:
    c, t = relabel.relabel or RelabelCounts(), relabel.tasks or TaskCounts()
    return (
        f"  expert relabelling: {c.episodes} episodes played ({t.generated} generated + "
        f"{t.seed} seed tasks), {c.failed} failed; {c.kept} oracle continuations kept "
        f"of {c.states} states ({c.incorrect} incorrect, {c.unseen_ids} with unseen ids, "
        f"{c.ended} ended); {relabel.steps} SFT steps in {_num(relabel.seconds)} s, "
        f"{relabel.extra.rows_per_step if relabel.extra else 0} packed rows of each step relabelled "
        f"({relabel.relabelled_rows} conversations, {relabel.aggregated_rows} of earlier rounds), "
        f"the rest demonstrations; final loss {_num(relabel.final_loss)}")


def _in_order(ev: EvaluationResult) -> EvaluationResult:
    """``ev`` with its per-model and per-comparison tables in the summary's order (`model_order`)."""
    names = model_order(list(ev.headline))

    def pick(table: dict[str, T], keys: list[str]) -> dict[str, T]:
        return {k: table[k] for k in keys if k in table}

    def pairs(table: dict[str, PairedBlock]) -> dict[str, PairedBlock]:
        return pick(table, comparison_order(names, list(table)))

    def subset(sub: SubsetFigures | None) -> SubsetFigures | None:
        if sub is None or not sub.n_tasks:
            return sub
        return dataclasses.replace(sub, success=pick(sub.success, names), comparisons=pairs(sub.comparisons))

    return dataclasses.replace(ev, headline=pick(ev.headline, names), by_difficulty=pick(ev.by_difficulty, names),
                               comparisons=pairs(ev.comparisons), easy_medium=subset(ev.easy_medium),
                               hard=subset(ev.hard))


def _evaluation_lines(ev: EvaluationResult) -> list[str]:
    ev, lines = _in_order(ev), []
    if ev.dry_run:
        lines.append(
            f"DRY RUN: no gradient updates; the evaluation below is a smoke test on {ev.n_tasks} tasks, not a result"
        )
    lines.append(f"held-out evaluation on {ev.n_tasks} {ev.tasks} tasks ({ev.mode}, greedy; report: {ev.report}):")
    w = max(14, *(len(name) + 2 for name in ev.headline))
    lines.append(f"  {'model':<{w}}{'success rate [95% CI]':<28}{'mean reward [95% CI]':<30}tool calls  critical steps")
    for name, h in ev.headline.items():
        calls = h.tool_calls.mean if h.tool_calls else 0.0
        steps = h.critical_steps.mean if h.critical_steps else 0.0
        lines.append(f"  {name:<{w}}{_est(h.success):<28}{_est(h.reward, pct=False):<30}{calls:<12.2f}{steps:.2f}")
    sb = ev.strongest_baseline
    if sb:
        lines.append(f"  strongest scripted baseline: {sb.name} {_est(sb.success)}")
    lines += _difficulty_lines(ev)
    strongest = sb.name if sb else None
    lines += _comparison_lines(ev.comparisons, "", strongest)
    for split, fig in ev.splits.items():
        sb_split = fig.strongest_baseline
        lines.append(f"  held-out {split} ({fig.n_tasks} tasks; report: {fig.report}): " + ", ".join(
            f"{name} {_est(fig.headline[name].success)}"
            for name in model_order(list(fig.headline)) if name in RUN_MODELS or name == "oracle")
            + (f"; strongest scripted baseline {sb_split.name} {_est(sb_split.success)}" if sb_split else ""))
    hard = ev.hard
    if hard and hard.n_tasks:
        lines.append(f"  hard tasks of {' + '.join(hard.splits or [])} (n={hard.n_tasks}): " + ", ".join(
            f"{name} {_est(e)}" for name, e in hard.success.items()))
        lines += _comparison_lines(hard.comparisons, "hard ", strongest)
    em = ev.easy_medium
    if em and em.n_tasks:
        lines.append(f"  easy + medium tasks only (n={em.n_tasks}): " + ", ".join(
            f"{name} {_est(e)}" for name, e in em.success.items()))
        lines += _comparison_lines(em.comparisons, "easy + medium ", strongest)
    for source, z in ev.zero_variance_groups.items():
        lines.append(f"  zero-variance answerer groups, {source} tasks: {z.zero_variance}/{z.groups} ({_pct(z.share)})")
    lines += _curve_lines(ev.curves)
    st = ev.single_turn_reference
    if st:
        lines.append(f"  single-turn answerer {st.model}: " + (
            "not found (run the single-turn config first)" if st.missing
            else f"success {_est(st.success)} on the same tasks"))
    return lines


def _curve_lines(curves: list[dict[str, Any]]) -> list[str]:
    """Each training curve of the report on one line: its points in step order (plotted in report.html)."""
    lines = []
    for i, c in enumerate(curves):
        curve = Curve.from_dict(c, f"summary.evaluation.curves[{i}]")
        unit = "round" if curve.x_label == "round" else "step"
        points = [
            f"{unit} {p.x:g}" + ("" if p.label == f"{unit} {p.x:g}" else f" ({p.label})")
            + f" {p.value.fmt(pct=curve.rate, show_n=False)}"
            for p in curve.points
        ]
        if len(points) > 6:  # a long per-step series: its ends and its mean
            mean = sum(p.value.mean for p in curve.points) / len(curve.points)
            shown = f"{100 * mean:.1f}%" if curve.rate else f"{mean:+.3f}"
            points = [*points[:2], f"... mean {shown} over {len(curve.points)} steps ...", *points[-2:]]
        lines.append(f"  {curve.name} (n={curve.points[0].value.n if curve.points else 0}): " + "; ".join(points))
    return lines


def _difficulty_lines(ev: EvaluationResult) -> list[str]:
    by = ev.by_difficulty
    diffs = sorted({d for m in by.values() for d in m}, key=("easy", "medium", "hard").index)
    if not diffs:
        return []
    first = next(iter(by.values()))
    lines = ["  success by difficulty: " + ", ".join(f"{d} n={first[d].n}" for d in diffs if d in first)]
    w = max(14, *(len(name) + 2 for name in by))
    for name, m in by.items():
        lines.append(f"    {name:<{w}}" + "  ".join(f"{d} {_est(m[d])}" for d in diffs if d in m))
    return lines


def _comparison_lines(comparisons: dict[str, PairedBlock], prefix: str, strongest: str | None = None) -> list[str]:
    """Paired deltas (against a scripted baseline: only the strongest; the report has them all); one
    whose interval includes 0, or whose McNemar p is 0.05 or more, is printed as a null result."""
    lines = []
    for name, p in comparisons.items():
        base = name.rsplit(" vs ", 1)[-1]
        if base not in RUN_MODELS and strongest is not None and base != strongest:
            continue
        if not p.n or p.success_delta is None or p.reward_delta is None or p.mcnemar is None:
            lines.append(f"  {prefix}{name}: no paired task")
            continue
        d = p.success_delta
        # a difference needs both the paired bootstrap interval off 0 and McNemar's exact test at 5%
        # (with a handful of discordant tasks the bootstrap interval alone can miss 0 by chance)
        if d.lo <= 0 <= d.hi:
            verdict = "null (the interval includes 0)"
        elif p.mcnemar.p_value >= 0.05:
            verdict = "null (McNemar p >= 0.05)"
        else:
            verdict = "better" if d.lo > 0 else "worse"
        lines.append(
            f"  {prefix}{name}: success {d.fmt(pct=True, signed=True, show_n=False)} (paired, n={p.n}): {verdict}, "
            f"McNemar p={p.mcnemar.p_value:.3g}; reward {p.reward_delta.fmt(signed=True, show_n=False)}"
        )
    return lines


def _control_lines(summary: RunSummary) -> list[str]:
    """The controls and the imitation reference (osint_selfplay.controls): trained, or the command that trains
    them after the job.
    When no generated task reached the answerer, its GRPO rows were osint-gym seed tasks only, the rows
    (same stream, same order) the uniform-task control trains on: the two answerers are one run, the
    delta is 0 by construction, and the summary says so instead of printing a comparison."""
    rounds, run_dir = summary.rounds, summary.output_dir or "RUN_DIR"
    later = (
        f"not in this job; `osint-selfplay controls {run_dir}` trains it from this run and adds it to the evaluation"
    )
    mixes = [r.answerer.mix if r.answerer else None for r in rounds]
    generated = sum(m.generated for m in mixes if m)
    uniform = summary.uniform_control
    lines: list[str] = []
    if (uniform and uniform.same_as_final) or (rounds and all(mixes) and not generated):
        lines.append(
            "self-play vs uniform tasks: no generated task reached the answerer (0 in the frontier band or valid), "
            "so its rows were the uniform seed tasks the uniform-task control trains on: "
            "the same run, delta 0 by construction"
        )
    elif uniform:
        lines.append(_arm_line("uniform-task control", uniform, "seed tasks only", generated))
    elif rounds and all(mixes):
        lines.append(
            f"self-play vs uniform tasks: {generated} generated tasks trained the answerer; "
            f"the uniform-task control: {later}"
        )
    if summary.curriculum_control:
        arm = summary.curriculum_control
        used = sum(m.generated for m in arm.mix or [])
        tasks = f"{used} of the scripted curriculum's frontier tasks and seed tasks"
        lines.append(_arm_line("curriculum arm", arm, tasks, generated))
    if summary.reverse_control:
        depths = [m.mean_depth for m in summary.reverse_control.mix or []]
        tasks = ("seed tasks started at R3's rungs, from the last step back to the whole episode (mean start depth "
                 + ", ".join(_num(d, 2) for d in depths) + " by round)")
        lines.append(_arm_line("R3's fixed schedule", summary.reverse_control, tasks, generated))
    ws = summary.warm_start or SFTResult()
    for label, m in (("equal-compute control", summary.control), ("imitation reference", summary.imitation_reference)):
        if m:
            lines.append(_sft_line(label, m))
        elif ws.packed_rows and not ws.dry_run and rounds:
            lines.append(f"{label}: {later}")
    return lines


def _arm_line(label: str, arm: ArmResult, tasks: str, generated: int) -> str:
    """A control that repeats every round's answerer phase on other tasks (`osint_selfplay.controls`)."""
    return (f"{label}: every round's answerer phase again, chained from the model the first started from, on "
            f"{tasks} (the run: {generated} generated tasks); answerer reward "
            f"{_num(arm.reward_first)} -> {_num(arm.reward_last)}")


def format_summary(summary: RunSummary | dict[str, Any]) -> str:
    """The run summary as text; ``summary`` may be a summary.json's content."""
    if not isinstance(summary, RunSummary):
        summary = RunSummary.from_dict(summary)
    lines = ["== osint-selfplay run summary =="]
    for rnd in summary.rounds:
        lines += _round_lines(rnd)
    if summary.precision:
        lines.append(summary.precision.line())
    if summary.warm_start:
        lines.append(_sft_line("warm start", summary.warm_start))
    lines += _control_lines(summary)
    if summary.evaluation:
        lines += _evaluation_lines(summary.evaluation)
    if summary.claims:
        lines += claim_lines(summary.claims)
    return "\n".join(lines)


def _sft_line(label: str, m: SFTResult) -> str:
    if m.dry_run:
        return f"{label}: dry run (no training)"
    counts = m.demonstration_counts if isinstance(m, WarmStartResult) else None
    demos = f"{m.examples} demonstrations" + (
        f" ({counts.kept} investigator episodes of {counts.episodes} oracle runs: "
        f"{counts.incorrect} incorrect and {counts.unseen_ids} using unseen ids dropped"
        + (f"; {counts.renamed} with their made-up words renamed" if counts.renamed else "")
        + "; the rest generator proposals)"
        if counts
        else ""
    )
    speed = f", {m.tokens_per_second:.0f} tokens/s" if m.tokens_per_second else ""
    if m.extra and m.extra.conversations:  # the imitation reference's hard demonstrations
        demos += (f" + {m.extra.conversations} oracle demonstrations of hard tasks, {m.extra.rows_per_step} of every "
                  "step's packed rows")
    budget = ""
    if isinstance(m, ControlResult) and m.budget_steps is not None:  # the rounds' compute in the warm start's steps
        budget = (f" for the rounds' {m.budget_seconds or 0:.0f} s ({m.budget_steps} steps at the warm start's rate, "
                  "SFT steps counted as steps)")
        if m.branched_at:  # the warm start stretched
            b = m.branched_at
            budget = (f" from the warm start's step {b.step} ({_num(b.seconds)} s in, where its decay began), "
                      f"its schedule stretched by the rounds' {m.budget_seconds or 0:.0f} s ({m.budget_steps} steps "
                      "at the warm start's rate, SFT steps counted as steps)")
    precision = f" in {m.precision}" if m.precision else ""
    return (
        f"{label}: {demos}; {m.steps} steps{precision}, "
        f"{_num(m.epochs_done)} epochs in {_num(m.seconds)} s{budget}"
        f"{speed}; final loss {_num(m.final_loss)}"
    )


def _num(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"

"""The run summary as readable text (printed at the end of ``osint-selfplay train``).

Figures with an interval are read through osint-eval's report schema and printed with its one formatter
(`osint_eval.schema.Estimate.fmt`), so the summary and the evaluation report show the same strings.
"""

from __future__ import annotations

from typing import Any

from osint_eval.schema import Curve, Estimate, PairedBlock
from osint_selfplay.claims import claim_lines
from osint_selfplay.evaluate import RUN_MODELS, comparison_order, model_order
from osint_selfplay.state import RoundSummary, RunSummary


def _est(d: dict[str, Any] | None, where: str, pct: bool = True) -> str:
    return Estimate.from_dict(d, where).fmt(pct=pct, show_n=False) if d else "n/a"


def _arm(arm: dict[str, Any]) -> str:
    """One arm of a round's frontier sample: valid proposals, frontier share, solve rate and hops."""
    return (f"valid {arm.get('valid')}/{arm.get('proposals')}, frontier share {_pct(arm.get('frontier_share'))} "
            f"({arm.get('in_frontier')} in [0.2, 0.8]), mean solve rate {_pct(arm.get('mean_solve_rate'))}, "
            f"mean hops {_num(arm.get('mean_hops'), 2)}")


def _round_lines(rnd: RoundSummary) -> list[str]:
    s, g, a = rnd.sampled or {}, rnd.generator or {}, rnd.answerer or {}
    mix = a.get("mix", {})
    head = [f"round {rnd.round}: generator reward {_num(g.get('reward_first'))} -> {_num(g.get('reward_last'))} "
            f"over {g.get('steps')} GRPO steps, frontier share of its proposals {_pct(g.get('frontier_share'))} "
            f"(the frozen answerer's {g.get('solve_rate_samples')} episodes per distinct task)"]
    if s:
        head.append(f"  sample, learned generator: {_arm(s)}")
    if s.get("curriculum"):
        head.append(f"  sample, scripted curriculum: {_arm(s['curriculum'])}")
    grpo = (
        f"  answerer tasks: {mix.get('generated')} generated + {mix.get('seed')} seed, mean hops "
        f"{_num(mix.get('mean_hops'), 2)} (top-up {mix.get('top_up')}"
        + (
            f", {mix['outside_frontier']} of {mix['valid_generated']} valid outside the frontier band {mix['frontier']}"
            if mix.get("frontier")
            else ""
        )
        + (
            f", {mix['unsolvable_under_budget']} dropped: not solvable under the episode's budgets"
            if mix.get("unsolvable_under_budget")
            else ""
        )
        + "); "
        f"answerer reward {_num(a.get('reward_first'))} -> {_num(a.get('reward_last'))}"
        + (
            f" (groups with zero reward variance: {_pct(a['zero_variance_mean'])})"
            if a.get("zero_variance_mean") is not None
            else ""
        )
    )
    lines = [*head, grpo if a else "  no answerer GRPO phase"]
    relabel = rnd.relabel
    if relabel:
        c, t = relabel.get("relabel") or {}, relabel.get("tasks") or {}
        lines.append(
            f"  expert relabelling: {c.get('episodes')} episodes played ({t.get('generated')} generated + "
            f"{t.get('seed')} seed tasks), {c.get('failed')} failed; {c.get('kept')} oracle continuations kept "
            f"of {c.get('states')} states ({c.get('incorrect')} incorrect, {c.get('unseen_ids')} with unseen ids, "
            f"{c.get('ended')} ended); {relabel.get('steps')} SFT steps in {_num(relabel.get('seconds'))} s, "
            f"{(relabel.get('extra') or {}).get('rows_per_step', 0)} packed rows of each step relabelled "
            f"({relabel.get('relabelled_rows')} conversations, {relabel.get('aggregated_rows')} of earlier rounds), "
            f"the rest demonstrations; final loss {_num(relabel.get('final_loss'))}")
    zero = a.get("zero_variance_by_source") or {}
    if zero:
        lines.append("  zero-variance answerer groups: " + ", ".join(
            f"{src} {z['zero_variance']}/{z['groups']} ({_pct(z['share'])})" for src, z in sorted(zero.items())))
    dyn = mix.get("dynamic_sampling")
    if dyn:
        lines.append(f"  dynamic sampling of seed tasks: {dyn['candidates']} candidates played, "
                     f"{dyn['all_solved']} always and {dyn['none_solved']} never solved; {dyn['replaced']} replaced, "
                     f"{dyn['unreplaced']} unreplaced (too few mixed); mean estimated solve rate "
                     f"{_num(dyn['mean_rate_candidates'])} -> "
                     f"{_num(dyn['mean_rate_kept'])} kept, in {_num(dyn['seconds'])} s")
    if a.get("rollouts"):
        ro = a["rollouts"]
        lines.append(
            f"  rollouts: {ro['n']}, with a well-formed tool call {_pct(ro['well_formed_tool_call_share'])}, "
            f"cut by the token budget {_pct(ro['cut_by_budget_share'])}, mean tool calls {ro['mean_tool_calls']:.2f}, "
            f"mean critical steps {ro['mean_critical_steps']:.2f}"
        )
    return lines


def _in_order(ev: dict[str, Any]) -> dict[str, Any]:
    """``ev`` with its per-model and per-comparison tables in the summary's order (`model_order`)."""
    names = model_order(list(ev["headline"]))

    def pick(table: dict[str, Any], keys: list[str]) -> dict[str, Any]:
        return {k: table[k] for k in keys if k in table}

    def pairs(table: dict[str, Any]) -> dict[str, Any]:
        return pick(table, comparison_order(names, list(table)))

    out = {**ev, **{k: pick(ev[k], names) for k in ("headline", "by_difficulty") if ev.get(k)},
           "comparisons": pairs(ev["comparisons"])}
    for block in ("easy_medium", "hard"):
        sub = ev.get(block) or {}
        if sub.get("n_tasks"):
            out[block] = {**sub, "success": pick(sub["success"], names), "comparisons": pairs(sub["comparisons"])}
    return out


def _evaluation_lines(ev: dict[str, Any]) -> list[str]:
    ev, lines = _in_order(ev), []
    if ev.get("dry_run"):
        lines.append(
            f"DRY RUN: no gradient updates; the evaluation below is a smoke test on {ev['n_tasks']} tasks, not a result"
        )
    lines.append(
        f"held-out evaluation on {ev['n_tasks']} {ev['tasks']} tasks "
        f"({ev['mode']}, greedy; report: {ev.get('report')}):"
    )
    w = max(14, *(len(name) + 2 for name in ev["headline"]))
    lines.append(f"  {'model':<{w}}{'success rate [95% CI]':<28}{'mean reward [95% CI]':<30}tool calls  critical steps")
    for name, h in ev["headline"].items():
        where = f"summary.evaluation.headline.{name}"
        calls, steps = (
            Estimate.from_dict(h["tool_calls"], f"{where}.tool_calls"),
            Estimate.from_dict(h["critical_steps"], f"{where}.critical_steps"),
        )
        lines.append(
            f"  {name:<{w}}{_est(h['success'], f'{where}.success'):<28}"
            f"{_est(h['reward'], f'{where}.reward', pct=False):<30}"
            f"{calls.mean:<12.2f}{steps.mean:.2f}"
        )
    sb = ev.get("strongest_baseline")
    if sb:
        lines.append(
            f"  strongest scripted baseline: {sb['name']} "
            f"{_est(sb['success'], 'summary.evaluation.strongest_baseline.success')}"
        )
    lines += _difficulty_lines(ev)
    strongest = sb["name"] if sb else None
    lines += _comparison_lines(ev["comparisons"], "summary.evaluation.comparisons", "", strongest)
    for split, fig in (ev.get("splits") or {}).items():
        sb_split = fig.get("strongest_baseline")
        lines.append(f"  held-out {split} ({fig['n_tasks']} tasks; report: {fig.get('report')}): " + ", ".join(
            f"{name} {_est(h['success'], f'summary.evaluation.splits.{split}.headline.{name}.success')}"
            for name in model_order(list(fig["headline"])) if name in RUN_MODELS or name == "oracle"
            for h in [fig["headline"][name]])
            + (f"; strongest scripted baseline {sb_split['name']} "
               f"{_est(sb_split['success'], 'summary.evaluation.splits.strongest_baseline')}" if sb_split else ""))
    hard = ev.get("hard") or {}
    if hard.get("n_tasks"):
        lines.append(f"  hard tasks of {' + '.join(hard['splits'])} (n={hard['n_tasks']}): " + ", ".join(
            f"{name} {_est(e, f'summary.evaluation.hard.success.{name}')}" for name, e in hard["success"].items()))
        lines += _comparison_lines(hard["comparisons"], "summary.evaluation.hard.comparisons", "hard ", strongest)
    em = ev.get("easy_medium") or {}
    if em.get("n_tasks"):
        lines.append(f"  easy + medium tasks only (n={em['n_tasks']}): " + ", ".join(
            f"{name} {_est(e, f'summary.evaluation.easy_medium.success.{name}')}" for name, e in em["success"].items()))
        lines += _comparison_lines(
            em["comparisons"], "summary.evaluation.easy_medium.comparisons", "easy + medium ", strongest
        )
    for source, z in ev.get("zero_variance_groups", {}).items():
        lines.append(
            f"  zero-variance answerer groups, {source} tasks: {z['zero_variance']}/{z['groups']} ({_pct(z['share'])})"
        )
    lines += _curve_lines(ev.get("curves") or [])
    st = ev.get("single_turn_reference")
    if st:
        lines.append(
            f"  single-turn answerer {st['model']}: "
            + (
                "not found (run the single-turn config first)"
                if st.get("missing")
                else (
                    f"success {_est(st['success'], 'summary.evaluation.single_turn_reference.success')} "
                    "on the same tasks"
                )
            )
        )
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


def _difficulty_lines(ev: dict[str, Any]) -> list[str]:
    by = ev.get("by_difficulty") or {}
    diffs = sorted({d for m in by.values() for d in m}, key=("easy", "medium", "hard").index)
    if not diffs:
        return []
    first = next(iter(by.values()))
    lines = [
        "  success by difficulty: "
        + ", ".join(f"{d} n={Estimate.from_dict(first[d], d).n}" for d in diffs if d in first)
    ]
    w = max(14, *(len(name) + 2 for name in by))
    for name, m in by.items():
        lines.append(f"    {name:<{w}}" + "  ".join(f"{d} {_est(m[d], f'summary.evaluation.by_difficulty.{name}.{d}')}"
                                                    for d in diffs if d in m))
    return lines


def _comparison_lines(comparisons: dict[str, Any], where: str, prefix: str, strongest: str | None = None) -> list[str]:
    """Paired deltas (against a scripted baseline: only the strongest; the report has them all); one
    whose interval includes 0, or whose McNemar p is 0.05 or more, is printed as a null result."""
    lines = []
    for name, c in comparisons.items():
        base = name.rsplit(" vs ", 1)[-1]
        if base not in RUN_MODELS and strongest is not None and base != strongest:
            continue
        p = PairedBlock.from_dict(c, f"{where}.{name}")
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
    mixes = [(r.answerer or {}).get("mix") for r in rounds]
    generated = sum(m.get("generated", 0) for m in mixes if m)
    uniform: dict[str, Any] | None = summary.uniform_control
    lines: list[str] = []
    if (uniform and uniform.get("same_as_final")) or (rounds and all(mixes) and not generated):
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
        used = sum(m.get("generated", 0) for m in arm.get("mix", []))
        tasks = f"{used} of the scripted curriculum's frontier tasks and seed tasks"
        lines.append(_arm_line("curriculum arm", arm, tasks, generated))
    ws = summary.warm_start or {}
    for label, m in (("equal-compute control", summary.control), ("imitation reference", summary.imitation_reference)):
        if m:
            lines.append(_sft_line(label, m))
        elif ws.get("packed_rows") and not ws.get("dry_run") and rounds:
            lines.append(f"{label}: {later}")
    return lines


def _arm_line(label: str, arm: dict[str, Any], tasks: str, generated: int) -> str:
    """A control that repeats every round's answerer phase on other tasks (`osint_selfplay.controls`)."""
    return (f"{label}: every round's answerer phase again, chained from the model the first started from, on "
            f"{tasks} (the run: {generated} generated tasks); answerer reward "
            f"{_num(arm.get('reward_first'))} -> {_num(arm.get('reward_last'))}")


def format_summary(summary: RunSummary | dict[str, Any]) -> str:
    """The run summary as text; ``summary`` may be a summary.json's content."""
    if not isinstance(summary, RunSummary):
        summary = RunSummary.from_dict(summary)
    lines = ["== osint-selfplay run summary =="]
    for rnd in summary.rounds:
        lines += _round_lines(rnd)
    if summary.warm_start:
        lines.append(_sft_line("warm start", summary.warm_start))
    lines += _control_lines(summary)
    if summary.evaluation:
        lines += _evaluation_lines(summary.evaluation)
    if summary.claims:
        lines += claim_lines(summary.claims)
    return "\n".join(lines)


def _sft_line(label: str, m: dict[str, Any]) -> str:
    if m.get("dry_run"):
        return f"{label}: dry run (no training)"
    counts = m.get("demonstration_counts") or {}
    kept = counts["episodes"] - counts["incorrect"] - counts["unseen_ids"] if counts else 0
    demos = f"{m.get('examples')} demonstrations" + (
        f" ({kept} investigator episodes of {counts['episodes']} oracle runs: "
        f"{counts['incorrect']} incorrect and {counts['unseen_ids']} using unseen ids dropped"
        + (f"; {counts['renamed']} with their made-up words renamed" if counts.get("renamed") else "")
        + "; the rest generator proposals)"
        if counts
        else ""
    )
    speed = f", {m['tokens_per_second']:.0f} tokens/s" if m.get("tokens_per_second") else ""
    more = m.get("extra") or {}
    if more.get("conversations"):  # the imitation reference's hard demonstrations
        demos += (f" + {more['conversations']} oracle demonstrations of hard tasks, {more['rows_per_step']} of every "
                  "step's packed rows")
    budget = ""
    if m.get("budget_steps") is not None:  # osint_selfplay.controls: the rounds' compute in the warm start's steps
        budget = (f" for the rounds' {m['budget_seconds']:.0f} s ({m['budget_steps']} steps at the warm start's rate, "
                  "SFT steps counted as steps)")
    if m.get("branched_at") and m.get("budget_steps") is not None:  # the warm start stretched
        b = m["branched_at"]
        budget = (f" from the warm start's step {b['step']} ({_num(b['seconds'])} s in, where its decay began), "
                  f"its schedule stretched by the rounds' {m['budget_seconds']:.0f} s ({m['budget_steps']} steps at "
                  "the warm start's rate, SFT steps counted as steps)")
    return (
        f"{label}: {demos}; {m.get('steps')} steps, "
        f"{_num(m.get('epochs_done'))} epochs in {_num(m.get('seconds'))} s{budget}"
        f"{speed}; final loss {_num(m.get('final_loss'))}"
    )


def _num(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"

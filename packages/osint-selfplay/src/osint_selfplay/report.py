"""The run summary as readable text (printed at the end of ``osint-selfplay train``).

Figures with an interval are read through osint-eval's report schema and printed with its one formatter
(`osint_eval.schema.Estimate.fmt`), so the summary and the evaluation report show the same strings.
"""

from __future__ import annotations

from typing import Any

from osint_eval.schema import Estimate, PairedBlock


def _est(d: dict[str, Any] | None, where: str, pct: bool = True) -> str:
    return Estimate.from_dict(d, where).fmt(pct=pct, show_n=False) if d else "n/a"


def _round_lines(rnd: dict[str, Any]) -> list[str]:
    s, g, a = rnd.get("sampled", {}), rnd.get("generator", {}), rnd.get("answerer", {})
    mix = a.get("mix", {})
    lines = [
        f"round {rnd['round']}: generator reward {_num(g.get('reward_first'))} -> {_num(g.get('reward_last'))}; "
        f"valid proposals {s.get('valid')}/{s.get('proposals')} ({_pct(s.get('valid_rate'))}); "
        f"answerer solve rate on them {_pct(s.get('answerer_solve_rate_on_generated'))}; "
        f"answerer tasks: {mix.get('generated')} generated + {mix.get('seed')} seed (top-up {mix.get('top_up')}"
        + (f", {mix['unsolvable_under_budget']} dropped: not solvable under the episode's budgets" if mix.get("unsolvable_under_budget") else "")
        + "); "
        f"answerer reward {_num(a.get('reward_first'))} -> {_num(a.get('reward_last'))}"
    ]
    if a.get("rollouts"):
        ro = a["rollouts"]
        lines.append(f"  rollouts: {ro['n']}, with a well-formed tool call {_pct(ro['well_formed_tool_call_share'])}, "
                     f"cut by the token budget {_pct(ro['cut_by_budget_share'])}, mean tool calls {ro['mean_tool_calls']:.2f}, "
                     f"mean critical steps {ro['mean_critical_steps']:.2f}")
    return lines


def _evaluation_lines(ev: dict[str, Any]) -> list[str]:
    lines = []
    if ev.get("dry_run"):
        lines.append(f"DRY RUN: no gradient updates; the evaluation below is a smoke test on {ev['n_tasks']} tasks, not a result")
    lines.append(f"held-out evaluation on {ev['n_tasks']} {ev['tasks']} tasks ({ev['mode']}, greedy; report: {ev.get('report')}):")
    lines.append(f"  {'model':<14}{'success rate [95% CI]':<28}{'mean reward [95% CI]':<30}tool calls  critical steps")
    for name, h in ev["headline"].items():
        where = f"summary.evaluation.headline.{name}"
        calls, steps = Estimate.from_dict(h["tool_calls"], f"{where}.tool_calls"), Estimate.from_dict(h["critical_steps"], f"{where}.critical_steps")
        lines.append(f"  {name:<14}{_est(h['success'], f'{where}.success'):<28}{_est(h['reward'], f'{where}.reward', pct=False):<30}"
                     f"{calls.mean:<12.2f}{steps.mean:.2f}")
    for name, c in ev["comparisons"].items():
        p = PairedBlock.from_dict(c, f"summary.evaluation.comparisons.{name}")
        if not p.n or p.success_delta is None or p.reward_delta is None or p.mcnemar is None:
            lines.append(f"  {name}: no paired task")
            continue
        lines.append(f"  {name}: success {p.success_delta.fmt(pct=True, signed=True, show_n=False)} (paired, n={p.n}), "
                     f"reward {p.reward_delta.fmt(signed=True, show_n=False)}, McNemar p={p.mcnemar.p_value:.3g}")
    for source, z in ev.get("zero_variance_groups", {}).items():
        lines.append(f"  zero-variance answerer groups, {source} tasks: {z['zero_variance']}/{z['groups']} ({_pct(z['share'])})")
    st = ev.get("single_turn_reference")
    if st:
        lines.append(f"  single-turn answerer {st['model']}: " + ("not found (run the single-turn config first)" if st.get("missing")
                     else f"success {_est(st['success'], 'summary.evaluation.single_turn_reference.success')} on the same tasks"))
    return lines


def format_summary(summary: dict[str, Any]) -> str:
    lines = ["== osint-selfplay run summary =="]
    for rnd in summary.get("rounds", []):
        lines += _round_lines(rnd)
    if summary.get("evaluation"):
        lines += _evaluation_lines(summary["evaluation"])
    return "\n".join(lines)


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"

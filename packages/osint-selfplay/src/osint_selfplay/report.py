"""The run summary as readable text (printed at the end of ``osint-selfplay train``)."""

from __future__ import annotations

from typing import Any


def _est(d: dict[str, Any] | None, pct: bool = True) -> str:
    if not d or not d.get("n"):
        return "n/a"
    k, unit = (100.0, "%") if pct else (1.0, "")
    return f"{k * d['mean']:.1f}{unit} [{k * d['lo']:.1f}, {k * d['hi']:.1f}]" if pct else f"{d['mean']:.3f} [{d['lo']:.3f}, {d['hi']:.3f}]"


def format_summary(summary: dict[str, Any]) -> str:
    lines = ["== osint-selfplay run summary =="]
    for rnd in summary.get("rounds", []):
        s = rnd.get("sampled", {})
        g = rnd.get("generator", {})
        a = rnd.get("answerer", {})
        mix = a.get("mix", {})
        lines.append(
            f"round {rnd['round']}: generator reward {_num(g.get('reward_first'))} -> {_num(g.get('reward_last'))}; "
            f"valid proposals {s.get('valid')}/{s.get('proposals')} ({_pct(s.get('valid_rate'))}); "
            f"answerer solve rate on them {_pct(s.get('answerer_solve_rate_on_generated'))}; "
            f"answerer tasks: {mix.get('generated')} generated + {mix.get('seed')} seed (top-up {mix.get('top_up')}); "
            f"answerer reward {_num(a.get('reward_first'))} -> {_num(a.get('reward_last'))}"
        )
        if a.get("rollouts"):
            ro = a["rollouts"]
            lines.append(f"  rollouts: {ro['n']}, with a well-formed tool call {_pct(ro['well_formed_tool_call_share'])}, "
                         f"cut by the token budget {_pct(ro['cut_by_budget_share'])}, mean tool calls {ro['mean_tool_calls']:.2f}, "
                         f"mean critical steps {ro['mean_critical_steps']:.2f}")
    ev = summary.get("evaluation")
    if ev:
        lines.append(f"held-out evaluation on {ev['n_tasks']} {ev['tasks']} tasks ({ev['mode']}, greedy; report: {ev.get('report')}):")
        lines.append(f"  {'model':<14}{'success rate [95% CI]':<28}{'mean reward [95% CI]':<30}tool calls  critical steps")
        for name, h in ev["headline"].items():
            lines.append(f"  {name:<14}{_est(h['success']):<28}{_est(h['reward'], pct=False):<30}"
                         f"{h['tool_calls']['mean']:<12.2f}{h['critical_steps']['mean']:.2f}")
        for name, c in ev["comparisons"].items():
            mc = c.get("mcnemar", {})
            lines.append(f"  {name}: success {_signed(c.get('success_delta'))} (paired, n={c.get('n')}), "
                         f"reward {_signed(c.get('reward_delta'), pct=False)}, McNemar p={mc.get('p_value', float('nan')):.3g}")
        for source, z in ev.get("zero_variance_groups", {}).items():
            lines.append(f"  zero-variance answerer groups, {source} tasks: {z['zero_variance']}/{z['groups']} ({_pct(z['share'])})")
        st = ev.get("single_turn_reference")
        if st:
            lines.append(f"  single-turn answerer {st['model']}: " + ("not found (run the single-turn config first)" if st.get("missing")
                         else f"success {_est(st['success'])} on the same tasks"))
    return "\n".join(lines)


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _signed(d: dict[str, Any] | None, pct: bool = True) -> str:
    if not d or not d.get("n"):
        return "n/a"
    k = 100.0 if pct else 1.0
    u = " pts" if pct else ""
    return f"{k * d['mean']:+.1f}{u} [{k * d['lo']:+.1f}, {k * d['hi']:+.1f}]" if pct else f"{d['mean']:+.3f} [{d['lo']:+.3f}, {d['hi']:+.3f}]"

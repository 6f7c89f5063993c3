"""Reports: ``report.json`` (everything), ``report.md`` (tables to paste), ``report.html`` (one
self-contained file: inline CSS, inline SVG plots made with matplotlib, no script, no network).

Every string that came from a task, a tool or a model is escaped (`html.escape`) before it enters
the HTML, so a question or answer holding ``</script>`` or markup renders as text.
"""

from __future__ import annotations

import html
import io
import re
from pathlib import Path
from typing import Any

from osint_eval.errors import EvalError, OutputExistsError
from osint_eval.runner import EpisodeResult
from osint_eval.schema import Comparison, Curve, Estimate, ModelSummary, PairedBlock, Report
from osint_gym.files import atomic_write_json, atomic_write_text

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:70rem;\
color:#1d1d1f;padding:0 1rem}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5rem 0 1rem}th,td{border:1px solid #ccc;padding:.25rem .6rem;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#f4f4f6}
.ok{color:#137333;font-weight:600}.bad{color:#b3261e;font-weight:600}
details{border:1px solid #ddd;border-radius:6px;margin:.4rem 0;padding:.3rem .6rem}summary{cursor:pointer}
pre{white-space:pre-wrap;word-break:break-word;background:#f7f7f9;padding:.4rem;border-radius:4px;font-size:.8rem}
.plots{display:flex;flex-wrap:wrap;gap:1rem}.plot svg{max-width:34rem;height:auto}.muted{color:#666}
"""
MAX_EXPLORER_EPISODES = 150  # per model; the JSON report keeps all of them


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


REPORT_FILES = ("report.json", "report.md", "report.html")
HEADER = [
    "model",
    "success [95% CI] (n)",
    "mean reward [95% CI]",
    "evidence F1",
    "steps",
    "tool calls",
    "invalid actions",
    "parse failures",
]


def _pct(e: Estimate | None) -> str:
    return e.fmt(pct=True) if e is not None else "n/a"


def _num(e: Estimate | None) -> str:
    return e.fmt() if e is not None else "n/a"


def _delta(e: Estimate | None, pct: bool = False) -> str:
    return e.fmt(pct=pct, signed=True) if e is not None else "n/a"


def _dry_note(report: Report) -> str | None:
    if not report.dry_run:
        return None
    return f"DRY RUN: a smoke test on {report.tasks.n} tasks; these figures are not evaluation results."


def baseline_note(report: Report) -> str | None:
    """One line: the strongest scripted baseline and every other model's success minus it (the CLI,
    Markdown and HTML print it; None when the run had no scripted baseline)."""
    b = report.strongest_baseline
    if b is None:
        return None
    label = b.name if b.label == b.name else f"{b.name} ({b.label})"
    gaps = [
        f"{name} {100 * (m.overall.success.mean - b.success.mean):+.1f} pts"
        for name, m in report.models.items()
        if name != b.name
    ]
    return (f"Strongest scripted baseline: {label}, success {b.success.fmt(pct=True)}"
            + (f"; success minus it: {', '.join(gaps)}" if gaps else "") + ".")


def _model_names(report: Report) -> str:
    return ", ".join(f"{name} = {m.label}" for name, m in report.models.items() if m.label != name)


# ---------------------------------------------------------------------------- markdown
def _md_table(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def _model_rows(models: dict[str, ModelSummary], key: str | None) -> list[list[str]]:
    """Raw table rows (the caller escapes for Markdown or HTML)."""
    rows = []
    for name, m in models.items():
        for group, b in m.groups(key).items():
            rows.append([str(name) + ("" if key is None else f" / {group}"), _pct(b.success), _num(b.reward),
                         _num(b.evidence_f1), f"{b.steps.mean:.2f}", f"{b.tool_calls.mean:.2f}",
                         f"{100 * b.invalid_action_rate:.1f}%", f"{100 * b.parse_failure_rate:.1f}%"])
    return rows


def _comparison_rows(comp: Comparison) -> list[tuple[str, PairedBlock]]:
    return [("overall", comp.overall)] + [(g, v) for g, v in comp.by_difficulty.items()]


def _md_model_rows(models: dict[str, ModelSummary], key: str | None) -> list[list[str]]:
    return [[_md_cell(c) for c in row] for row in _model_rows(models, key)]


def _md_cell(text: str) -> str:
    """Safe inside a Markdown table: HTML escaped (Markdown renders raw HTML), pipes and newlines neutralised."""
    return html.escape(str(text), quote=False).replace("|", "\\|").replace("\n", " ")


def markdown(report: Report) -> str:
    t = report.tasks
    parts = [f"# OSINT-v0 evaluation: {_md_cell(report.title)}", ""]
    if _dry_note(report):
        parts += [f"**{_dry_note(report)}**", ""]
    parts += [f"Tasks: `{_md_cell(t.source)}` (n = {t.n}), mode `{report.mode}`, seed {report.seed}.", ""]
    if _model_names(report):
        parts += [f"Models: {_md_cell(_model_names(report))}.", ""]
    if t.proposals:
        p = t.proposals
        parts += [f"Generator proposals: {p.valid} valid of {p.total}; invalid by reason: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(p.reasons.items()) if k != "ok"), ""]
    parts += ["## Overall", "", _md_table(HEADER, _md_model_rows(report.models, None)), ""]
    if baseline_note(report):
        parts += [_md_cell(str(baseline_note(report))), ""]
    parts += ["## By difficulty", "", _md_table(HEADER, _md_model_rows(report.models, "by_difficulty")), ""]
    parts += ["## By family", "", _md_table(HEADER, _md_model_rows(report.models, "by_family")), ""]
    if report.comparisons:
        rows = []
        for comp in report.comparisons.values():
            for group, c in _comparison_rows(comp):
                if not c.n or c.mcnemar is None:
                    continue
                rows.append(
                    [
                        _md_cell(comp.described),
                        group,
                        str(c.n),
                        _delta(c.success_delta, pct=True),
                        _delta(c.reward_delta),
                        _delta(c.steps_delta),
                        _delta(c.tool_calls_delta),
                        f"{c.mcnemar.candidate_only}/{c.mcnemar.base_only}",
                        f"{c.mcnemar.p_value:.3g}",
                    ]
                )
        parts += [
            "## Paired comparison (candidate minus base, same tasks)",
            "",
            _md_table(
                [
                    "comparison",
                    "group",
                    "n",
                    "success delta [95% CI]",
                    "reward delta [95% CI]",
                    "steps delta [95% CI]",
                    "tool-call delta [95% CI]",
                    "discordant (cand/base)",
                    "McNemar p",
                ],
                rows,
            ),
            "",
        ]
    if report.curves:
        parts += ["## Training curves", ""]
        for curve in report.curves:
            rows = [[_md_cell(f"{p.x:g}"), _md_cell(p.label), p.value.fmt(pct=curve.rate)] for p in curve.points]
            parts += [
                f"### {_md_cell(curve.name)}",
                "",
                _md_table([curve.x_label, "measured at", curve.y_label], rows),
                "",
            ]
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------------------- plots
def _svg(fig: Any) -> str:
    import matplotlib

    matplotlib.rcParams["svg.hashsalt"] = "osint-eval"  # deterministic element ids: the same report, byte for byte
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg"):]  # drop the XML prolog and DOCTYPE: the SVG is inlined
    # drop the RDF metadata block (it holds the creation date, which would make reports differ run to run)
    return re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.DOTALL)


def success_plot(report: Report) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    models = list(report.models)
    present = {g for m in report.models.values() for g in m.by_difficulty}
    groups = [g for g in ("easy", "medium", "hard") if g in present] + sorted(present - {"easy", "medium", "hard"})
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    width = 0.8 / max(1, len(models))
    for i, name in enumerate(models):
        blocks = report.models[name].by_difficulty
        means = np.array([blocks[g].success.mean if g in blocks else np.nan for g in groups])
        lo = np.array([blocks[g].success.lo if g in blocks else np.nan for g in groups])
        hi = np.array([blocks[g].success.hi if g in blocks else np.nan for g in groups])
        x = np.arange(len(groups)) + i * width
        ax.bar(x, means, width, yerr=[means - lo, hi - means], capsize=3, label=name[:40])
    first = report.models[models[0]].by_difficulty
    ax.set_xticks(
        np.arange(len(groups)) + width * (len(models) - 1) / 2,
        [f"{g}\n(n={first[g].n if g in first else 0})" for g in groups],
    )
    ax.set_ylabel("success rate (95% CI)")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7)
    ax.set_title("Success per difficulty")
    return _svg(fig)


def curve_plot(curve: Curve) -> str:
    """One training curve: its points joined in order, each with its 95% interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    x = [p.x for p in curve.points]
    y = [p.value.mean for p in curve.points]
    lo = [p.value.mean - p.value.lo for p in curve.points]
    hi = [p.value.hi - p.value.mean for p in curve.points]
    ax.errorbar(x, y, yerr=[lo, hi], marker="o", capsize=3)
    for p in curve.points:
        if p.label:
            ax.annotate(p.label[:24], (p.x, p.value.mean), textcoords="offset points", xytext=(4, 6), fontsize=6)
    ax.set_xlabel(curve.x_label)
    ax.set_ylabel(curve.y_label)
    if curve.rate:
        ax.set_ylim(0, 1)
    ax.set_title(curve.name[:80])
    return _svg(fig)


def reward_plot(report: Report) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    for name, episodes in report.episodes.items():
        ax.hist(
            [e.reward for e in episodes],
            bins=30,
            range=(-0.4, 1.6),
            alpha=0.5,
            label=f"{name[:40]} (n={len(episodes)})",
        )
    ax.set_xlabel("episode reward")
    ax.set_ylabel("episodes")
    ax.legend(fontsize=7)
    ax.set_title("Reward distribution")
    return _svg(fig)


# ---------------------------------------------------------------------------- html
def _html_table(header: list[str], rows: list[list[str]], cls: str = "") -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _episode_html(ep: EpisodeResult) -> str:
    verdict = '<span class="ok">correct</span>' if ep.correct else '<span class="bad">wrong</span>'
    gold = {tuple(e) for e in ep.gold_evidence}
    agent = {tuple(e) for e in ep.agent_evidence}
    steps = "".join(
        (
            f"<li><b>action</b><pre>{_e(t['action'][:2000])}</pre>"
            f"<b>result</b><pre>{_e(t['observation'][:3000])}</pre></li>"
        )
        for t in ep.transcript
    )
    edges = "".join(
        f"<tr><td>{_e(' '.join(e))}</td><td>{'yes' if e in gold else 'no'}</td>"
        f"<td>{'yes' if e in agent else 'no'}</td></tr>"
        for e in sorted(gold | agent)
    )
    return (
        f"<details><summary>{verdict} <b>{_e(ep.task_id)}</b> ({_e(ep.family)}, {_e(ep.difficulty)}): "
        f"{_e(ep.question[:160])}</summary>"
        f"<p>Question: {_e(ep.question)}</p><p>Submitted: <code>{_e(ep.submitted)}</code> &middot; gold: "
        f"<code>{_e(', '.join(ep.gold_answers))}</code> &middot; reward {ep.reward:.3f} &middot; "
        f"steps {ep.steps} &middot; tool calls {ep.tool_calls}</p>"
        f"<table><thead><tr><th>evidence edge</th><th>gold</th><th>agent</th></tr></thead>"
        f"<tbody>{edges}</tbody></table>"
        f"<ol>{steps}</ol></details>"
    )


def _html_head(report: Report) -> list[str]:
    parts = [
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>OSINT-v0 evaluation: {_e(report.title)}</title><style>{CSS}</style></head><body>",
        f"<h1>OSINT-v0 evaluation: {_e(report.title)}</h1>",
    ]
    if _dry_note(report):
        parts.append(f'<p class="bad">{_e(_dry_note(report))}</p>')
    parts.append(f"<p class=\"muted\">Tasks <code>{_e(report.tasks.source)}</code> (n = {report.tasks.n}), mode "
                 f"<code>{_e(report.mode)}</code>, seed {report.seed}, git {_e(report.git_sha)}.</p>")
    if _model_names(report):
        parts.append(f"<p>Models: {_e(_model_names(report))}.</p>")
    return parts


def render_html(report: Report) -> str:
    parts = _html_head(report) + ["<h2>Summary</h2>", _html_table(HEADER, _model_rows(report.models, None), "summary")]
    if baseline_note(report):
        parts.append(f'<p class="baseline">{_e(baseline_note(report))}</p>')
    if report.comparisons:
        rows = [
            [
                c.described,
                str(c.overall.n),
                _delta(c.overall.success_delta, pct=True),
                _delta(c.overall.reward_delta),
                f"{c.overall.mcnemar.p_value:.3g}",
            ]
            for c in report.comparisons.values()
            if c.overall.n and c.overall.mcnemar
        ]
        parts += [
            "<h2>Paired comparison</h2>",
            _html_table(["comparison", "n", "success delta [95% CI]", "reward delta [95% CI]", "McNemar p"], rows),
        ]
    if report.curves:
        parts += [
            "<h2>Training curves</h2>",
            '<div class="plots">'
            + "".join(f'<div class="plot">{curve_plot(c)}</div>' for c in report.curves)
            + "</div>",
        ]
    parts += [
        "<h2>Plots</h2>",
        (
            f'<div class="plots"><div class="plot">{success_plot(report)}</div>'
            f'<div class="plot">{reward_plot(report)}</div></div>'
        ),
        "<h2>By difficulty</h2>",
        _html_table(HEADER, _model_rows(report.models, "by_difficulty")),
        "<h2>By family</h2>",
        _html_table(HEADER, _model_rows(report.models, "by_family")),
        "<h2>Episode explorer</h2>",
    ]
    for name, episodes in report.episodes.items():
        shown = episodes[:MAX_EXPLORER_EPISODES]
        parts.append(f"<h3>{_e(name)} <span class=\"muted\">({len(shown)} of {len(episodes)} episodes)</span></h3>")
        parts += [_episode_html(ep) for ep in shown]
    parts.append("</body></html>")
    return "\n".join(parts)


def check_out_dir(out_dir: str | Path, *, overwrite: bool = False) -> Path:
    """Refuse an output folder that is a file, or that already holds a report, unless ``overwrite``."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise EvalError(
            f"--out {out} is a file, not a folder; name a folder for report.json, report.md and report.html"
        )
    existing = [name for name in REPORT_FILES if (out / name).exists()]
    if existing and not overwrite:
        raise OutputExistsError(
            f"{out} already holds a report ({', '.join(existing)}); "
            "pass --overwrite to replace it, or choose another --out"
        )
    return out


def write_report(report: Report, out_dir: str | Path, *, overwrite: bool = False) -> dict[str, Path]:
    """Write report.json, report.md and report.html into ``out_dir`` (refused if one exists, unless ``overwrite``)."""
    out = check_out_dir(out_dir, overwrite=overwrite)
    paths = {"json": out / "report.json", "md": out / "report.md", "html": out / "report.html"}
    # insertion order, not sorted keys: the models and comparisons keep the order they were evaluated in
    atomic_write_json(paths["json"], report.to_dict(), indent=1, sort_keys=False)
    atomic_write_text(paths["md"], markdown(report))
    atomic_write_text(paths["html"], render_html(report))
    return paths

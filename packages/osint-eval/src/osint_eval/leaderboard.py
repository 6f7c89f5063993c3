"""``leaderboard.jsonl``: one line per evaluated model and task set; rendered as a sortable table."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from osint_eval.errors import EvalError

SORTABLE = ("success", "reward", "evidence_f1", "steps", "tool_calls", "n")


def entry(model: str, report: dict[str, Any], name: str) -> dict[str, Any]:
    o = report["models"][name]["summary"]["overall"]
    return {
        "model": model, "tasks": report["tasks"]["source"], "mode": report["mode"], "n": o["n"],
        "success": o["success"]["mean"], "success_lo": o["success"]["lo"], "success_hi": o["success"]["hi"],
        "reward": o["reward"]["mean"], "evidence_f1": o["evidence_f1"]["mean"], "steps": o["steps"]["mean"],
        "tool_calls": o["tool_calls"]["mean"], "seed": report["seed"], "date": time.strftime("%Y-%m-%d"),
        "report": report.get("out_dir"),
    }


def append(path: str | Path, entries: list[dict[str, Any]]) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("a", encoding="utf-8") as fh:
        for e in entries:
            fh.write(json.dumps(e, sort_keys=True) + "\n")


def load(path: str | Path) -> list[dict[str, Any]]:
    p = Path(path)
    if not p.is_file():
        raise EvalError(f"no leaderboard at {p}")
    rows = []
    for lineno, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                raise EvalError(f"{p}:{lineno}: not a JSON line") from None
    return rows


def render(rows: list[dict[str, Any]], sort_by: str = "success", tasks: str | None = None) -> str:
    if sort_by not in SORTABLE:
        raise EvalError(f"--sort-by must be one of {', '.join(SORTABLE)}; got {sort_by!r}")
    rows = [r for r in rows if tasks is None or r.get("tasks") == tasks]
    # higher is better except for steps and tool calls
    rows = sorted(rows, key=lambda r: r.get(sort_by) or 0, reverse=sort_by not in ("steps", "tool_calls"))
    header = f"{'#':>3}  {'model':<40} {'tasks':<10} {'mode':<11} {'n':>5} {'success [95% CI]':>22} {'reward':>7} {'F1':>5} {'steps':>6} {'calls':>6}"
    lines = [header, "-" * len(header)]
    for i, r in enumerate(rows, 1):
        ci = f"{100 * r['success']:.1f}% [{100 * r['success_lo']:.1f}, {100 * r['success_hi']:.1f}]"
        lines.append(f"{i:>3}  {str(r['model'])[:40]:<40} {str(r['tasks'])[:10]:<10} {r['mode']:<11} {r['n']:>5} {ci:>22} "
                     f"{r['reward']:>7.3f} {r['evidence_f1']:>5.2f} {r['steps']:>6.2f} {r['tool_calls']:>6.2f}")
    return "\n".join(lines)

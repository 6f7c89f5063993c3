"""``leaderboard.jsonl``: one line per evaluated model and task set; rendered as a sortable table.

A row is keyed by (model, task source, task-set fingerprint, mode, seed): evaluating the same model on
the same task set again replaces its row instead of adding a duplicate.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from osint_eval.errors import ReportError
from osint_eval.schema import Estimate, Report
from osint_gym.files import atomic_write_jsonl

SORTABLE = ("success", "reward", "evidence_f1", "steps", "tool_calls", "n")
_NUMBERS = ("success", "success_lo", "success_hi", "reward", "evidence_f1", "steps", "tool_calls")


@dataclass(frozen=True)
class LeaderboardRow:
    model: str
    tasks: str
    mode: str
    n: int
    success: float
    success_lo: float
    success_hi: float
    reward: float
    evidence_f1: float
    steps: float
    tool_calls: float
    seed: int
    date: str
    report: str | None = None
    task_fingerprint: str | None = None  # rows written before fingerprints existed have none

    @property
    def key(self) -> tuple[Any, ...]:
        return (self.model, self.tasks, self.task_fingerprint, self.mode, self.seed)

    @property
    def success_estimate(self) -> Estimate:
        return Estimate(self.success, self.success_lo, self.success_hi, self.n)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Any, where: str) -> LeaderboardRow:
        if not isinstance(d, dict):
            raise ReportError(f"{where}: expected an object, got {type(d).__name__}")
        missing = [k for k in ("model", "tasks", "mode", "n", *_NUMBERS, "seed") if k not in d]
        if missing:
            raise ReportError(f"{where}: missing {', '.join(missing)}")
        bad = [k for k in _NUMBERS if isinstance(d[k], bool) or not isinstance(d[k], (int, float))]
        if bad or isinstance(d["n"], bool) or not isinstance(d["n"], int):
            raise ReportError(f"{where}: {(bad or ['n'])[0]} must be a number, got {d[(bad or ['n'])[0]]!r}")
        return cls(
            model=str(d["model"]),
            tasks=str(d["tasks"]),
            mode=str(d["mode"]),
            n=d["n"],
            success=float(d["success"]),
            success_lo=float(d["success_lo"]),
            success_hi=float(d["success_hi"]),
            reward=float(d["reward"]),
            evidence_f1=float(d["evidence_f1"]),
            steps=float(d["steps"]),
            tool_calls=float(d["tool_calls"]),
            seed=d["seed"],
            date=str(d.get("date", "")),
            report=d.get("report"),
            task_fingerprint=d.get("task_fingerprint"),
        )


def entry(report: Report, name: str) -> LeaderboardRow:
    """The leaderboard row of model ``name`` in ``report`` (the row names the model by its label)."""
    m = report.models[name]
    o = m.overall
    return LeaderboardRow(m.label, report.tasks.source, report.mode, o.n, o.success.mean, o.success.lo, o.success.hi,
                          o.reward.mean, o.evidence_f1.mean, o.steps.mean, o.tool_calls.mean, report.seed,
                          time.strftime("%Y-%m-%d"), report.out_dir, report.tasks.fingerprint)


def append(path: str | Path, entries: list[LeaderboardRow]) -> int:
    """Add ``entries``; an earlier row with the same key is replaced. Returns how many rows were replaced."""
    p = Path(path)
    rows = load(p) if p.is_file() else []
    new_keys = {e.key for e in entries}
    kept = [r for r in rows if r.key not in new_keys]
    atomic_write_jsonl(p, [r.to_dict() for r in kept + entries])  # an interrupted write never leaves half a leaderboard
    return len(rows) - len(kept)


def load(path: str | Path) -> list[LeaderboardRow]:
    p = Path(path)
    if not p.is_file():
        raise ReportError(f"no leaderboard at {p}")
    rows = []
    for lineno, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                raise ReportError(f"{p}:{lineno}: not a JSON line") from None
            rows.append(LeaderboardRow.from_dict(data, f"{p}:{lineno}"))
    return rows


def render(rows: list[LeaderboardRow], sort_by: str = "success", tasks: str | None = None) -> str:
    if sort_by not in SORTABLE:
        raise ReportError(f"--sort-by must be one of {', '.join(SORTABLE)}; got {sort_by!r}")
    rows = [r for r in rows if tasks is None or r.tasks == tasks]
    # higher is better except for steps and tool calls
    rows = sorted(rows, key=lambda r: getattr(r, sort_by), reverse=sort_by not in ("steps", "tool_calls"))
    header = (
        f"{'#':>3}  {'model':<40} {'tasks':<10} {'mode':<11} {'n':>5} "
        f"{'success [95% CI]':>22} {'reward':>7} {'F1':>5} {'steps':>6} {'calls':>6}"
    )
    lines = [header, "-" * len(header)]
    for i, r in enumerate(rows, 1):
        ci = r.success_estimate.fmt(pct=True, show_n=False)
        lines.append(f"{i:>3}  {r.model[:40]:<40} {r.tasks[:10]:<10} {r.mode:<11} {r.n:>5} {ci:>22} "
                     f"{r.reward:>7.3f} {r.evidence_f1:>5.2f} {r.steps:>6.2f} {r.tool_calls:>6.2f}")
    return "\n".join(lines)

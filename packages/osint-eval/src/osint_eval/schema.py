"""The report schema: typed dataclasses for everything ``report.json`` holds, dicts only at the file boundary.

`Report` (one evaluation) holds a `TaskInfo`, a `ModelSummary` per model (a `MetricBlock` overall, by
difficulty and by family), a `Comparison` per paired comparison (`PairedBlock`s), every episode and,
for a training run, its `Curve` s (measurements over its optimizer steps).
Every number with an interval is an `Estimate`; `Estimate.fmt` is the one way a value is printed with
its interval (CLI, Markdown, HTML, leaderboard, osint-selfplay's run summary).

``to_dict`` writes the JSON shape, ``from_dict`` reads it back; a malformed file gives one
`ReportError` that names the file and the field
(``run1/report.json: report.models.oracle.summary.overall.success.n: missing``).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from osint_eval.errors import ReportError
from osint_eval.fields import jget, jint, jmap, jnum, jobj, jstr
from osint_eval.runner import EpisodeResult


# ---------------------------------------------------------------------------- values with intervals
@dataclass(frozen=True)
class Estimate:
    """A mean (or a rate) with its 95% interval and its sample size."""

    mean: float
    lo: float
    hi: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Any, where: str = "estimate") -> Estimate:
        return cls(jnum(d, "mean", where), jnum(d, "lo", where), jnum(d, "hi", where), jint(d, "n", where))

    def fmt(self, pct: bool = False, *, signed: bool = False, show_n: bool = True) -> str:
        """The one formatting of a value with its interval: ``"41.2% [38.1, 44.3] (n=1000)"``,
        ``"0.412 [0.381, 0.443] (n=1000)"``; signed (deltas): ``"+5.0 pts [+1.2, +8.9]"``, ``"+0.031 [...]"``."""
        n = f" (n={self.n})" if show_n else ""
        if self.n == 0 or math.isnan(self.mean):
            return f"n/a{n}"
        sign = "+" if signed else ""
        if pct:
            unit = " pts" if signed else "%"
            return f"{100 * self.mean:{sign}.1f}{unit} [{100 * self.lo:{sign}.1f}, {100 * self.hi:{sign}.1f}]{n}"
        return f"{self.mean:{sign}.3f} [{self.lo:{sign}.3f}, {self.hi:{sign}.3f}]{n}"


@dataclass(frozen=True)
class McNemar:
    candidate_only: int  # items the candidate got right and the base wrong
    base_only: int
    n: int
    p_value: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Any, where: str = "mcnemar") -> McNemar:
        return cls(
            jint(d, "candidate_only", where),
            jint(d, "base_only", where),
            jint(d, "n", where),
            jnum(d, "p_value", where),
        )


# ---------------------------------------------------------------------------- one model
ESTIMATES = ("success", "reward", "evidence_f1", "steps", "critical_steps", "tool_calls")
RATES = ("invalid_action_rate", "parse_failure_rate", "answered_rate")


@dataclass(frozen=True)
class MetricBlock:
    """One model's metrics on one group of episodes (all, one difficulty, one family)."""

    n: int
    success: Estimate  # a rate: Wilson interval
    reward: Estimate
    evidence_f1: Estimate
    steps: Estimate
    critical_steps: Estimate
    tool_calls: Estimate
    invalid_action_rate: float
    parse_failure_rate: float
    answered_rate: float
    components: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return (
            {"n": self.n}
            | {k: getattr(self, k).to_dict() for k in ESTIMATES}
            | {k: getattr(self, k) for k in RATES}
            | {"components": dict(self.components)}
        )

    @classmethod
    def from_dict(cls, d: Any, where: str) -> MetricBlock:
        comps = jmap(d, "components", where)
        def est(k: str) -> Estimate:
            return Estimate.from_dict(jget(d, k, where), f"{where}.{k}")

        return cls(
            n=jint(d, "n", where),
            success=est("success"),
            reward=est("reward"),
            evidence_f1=est("evidence_f1"),
            steps=est("steps"),
            critical_steps=est("critical_steps"),
            tool_calls=est("tool_calls"),
            invalid_action_rate=jnum(d, "invalid_action_rate", where),
            parse_failure_rate=jnum(d, "parse_failure_rate", where),
            answered_rate=jnum(d, "answered_rate", where),
            components={k: jnum(comps, k, f"{where}.components") for k in comps},
        )


def _blocks(d: Any, key: str, where: str) -> dict[str, MetricBlock]:
    m = jmap(d, key, where)
    return {k: MetricBlock.from_dict(v, f"{where}.{key}.{k}") for k, v in m.items()}


@dataclass(frozen=True)
class ModelSummary:
    """``name`` is the role in the report (``base``, ``candidate``, ``oracle``); ``label`` the model or policy
    evaluated."""

    name: str
    label: str
    policy: dict[str, Any]
    overall: MetricBlock
    by_difficulty: dict[str, MetricBlock]
    by_family: dict[str, MetricBlock]

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "policy": dict(self.policy), "summary": {
            "overall": self.overall.to_dict(), "by_difficulty": {k: b.to_dict() for k, b in self.by_difficulty.items()},
            "by_family": {k: b.to_dict() for k, b in self.by_family.items()}}}

    @classmethod
    def from_dict(cls, name: str, d: Any, where: str) -> ModelSummary:
        s, ws = jget(d, "summary", where), f"{where}.summary"
        return cls(
            name,
            str(jstr(d, "label", where)),
            jmap(d, "policy", where),
            MetricBlock.from_dict(jget(s, "overall", ws), f"{ws}.overall"),
            _blocks(s, "by_difficulty", ws),
            _blocks(s, "by_family", ws),
        )

    def groups(self, key: str | None) -> dict[str, MetricBlock]:
        """``None``: the overall block; ``"by_difficulty"`` / ``"by_family"``: one block per group."""
        return {"overall": self.overall} if key is None else dict(getattr(self, key))


# ---------------------------------------------------------------------------- comparisons
DELTAS = ("success_delta", "reward_delta", "steps_delta", "tool_calls_delta")


@dataclass(frozen=True)
class PairedBlock:
    """Candidate minus base on the same tasks; with no paired task (n = 0) every figure is None."""

    n: int
    success_delta: Estimate | None = None
    reward_delta: Estimate | None = None
    steps_delta: Estimate | None = None
    tool_calls_delta: Estimate | None = None
    mcnemar: McNemar | None = None

    def to_dict(self) -> dict[str, Any]:
        if not self.n:
            return {"n": 0}
        return (
            {"n": self.n}
            | {k: getattr(self, k).to_dict() for k in DELTAS}
            | {"mcnemar": self.mcnemar.to_dict()}  # type: ignore[union-attr]
        )

    @classmethod
    def from_dict(cls, d: Any, where: str) -> PairedBlock:
        n = jint(d, "n", where)
        if not n:
            return cls(0)
        def est(k: str) -> Estimate:
            return Estimate.from_dict(jget(d, k, where), f"{where}.{k}")

        return cls(
            n=n,
            success_delta=est("success_delta"),
            reward_delta=est("reward_delta"),
            steps_delta=est("steps_delta"),
            tool_calls_delta=est("tool_calls_delta"),
            mcnemar=McNemar.from_dict(jget(d, "mcnemar", where), f"{where}.mcnemar"),
        )


@dataclass(frozen=True)
class Comparison:
    """A paired comparison; the labels name the compared models (not just their roles)."""

    name: str
    base: str
    candidate: str
    base_label: str
    candidate_label: str
    overall: PairedBlock
    by_difficulty: dict[str, PairedBlock]
    by_family: dict[str, PairedBlock]

    @property
    def described(self) -> str:
        """``"candidate (ckpt/final) vs base (Qwen/Qwen2.5-0.5B)"``."""
        return f"{self.candidate} ({self.candidate_label}) vs {self.base} ({self.base_label})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "base": self.base,
            "candidate": self.candidate,
            "base_label": self.base_label,
            "candidate_label": self.candidate_label,
            "overall": self.overall.to_dict(),
            "by_difficulty": {k: b.to_dict() for k, b in self.by_difficulty.items()},
            "by_family": {k: b.to_dict() for k, b in self.by_family.items()},
        }

    @classmethod
    def from_dict(cls, name: str, d: Any, where: str) -> Comparison:
        def groups(key: str) -> dict[str, PairedBlock]:
            return {k: PairedBlock.from_dict(v, f"{where}.{key}.{k}") for k, v in jmap(d, key, where).items()}

        return cls(name=name, base=str(jstr(d, "base", where)), candidate=str(jstr(d, "candidate", where)),
                   base_label=str(jstr(d, "base_label", where)), candidate_label=str(jstr(d, "candidate_label", where)),
                   overall=PairedBlock.from_dict(jget(d, "overall", where), f"{where}.overall"),
                   by_difficulty=groups("by_difficulty"), by_family=groups("by_family"))


# ---------------------------------------------------------------------------- the report
@dataclass(frozen=True)
class Baseline:
    """The strongest scripted non-oracle policy of a run (a shortcut or the chance guess): a model's
    score means something only next to it."""

    name: str
    label: str
    success: Estimate

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "label": self.label, "success": self.success.to_dict()}

    @classmethod
    def from_dict(cls, d: Any, where: str) -> Baseline:
        return cls(str(jstr(d, "name", where)), str(jstr(d, "label", where)),
                   Estimate.from_dict(jget(d, "success", where), f"{where}.success"))


@dataclass(frozen=True)
class ProposalCounts:
    """Generator task sources: how many proposals were sampled, how many were valid, why the others failed."""

    total: int
    valid: int
    reasons: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Any, where: str) -> ProposalCounts:
        reasons = jmap(d, "reasons", where)
        return cls(
            jint(d, "total", where), jint(d, "valid", where), {k: jint(reasons, k, f"{where}.reasons") for k in reasons}
        )


@dataclass(frozen=True)
class TaskInfo:
    source: str
    world: str
    n: int
    fingerprint: str  # digest of the evaluated task ids, in order: two reports on the same task set share it
    proposals: ProposalCounts | None = None
    rejected: dict[str, int] = field(default_factory=dict)  # task files: tasks that failed verification, by reason

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "world": self.world, "n": self.n, "fingerprint": self.fingerprint,
                "proposals": self.proposals.to_dict() if self.proposals else None, "rejected": dict(self.rejected)}

    @classmethod
    def from_dict(cls, d: Any, where: str) -> TaskInfo:
        p, rejected = jobj(d, where).get("proposals"), jmap(d, "rejected", where)
        return cls(
            str(jstr(d, "source", where)),
            str(jstr(d, "world", where)),
            jint(d, "n", where),
            str(jstr(d, "fingerprint", where)),
            ProposalCounts.from_dict(p, f"{where}.proposals") if p is not None else None,
            {k: jint(rejected, k, f"{where}.rejected") for k in rejected},
        )


# ---------------------------------------------------------------------------- curves over training
@dataclass(frozen=True)
class CurvePoint:
    """One measurement during training: at ``x`` (an optimizer step), ``value`` with its interval and sample
    size; ``label`` names what was measured there (the phase, or the model)."""

    x: float
    value: Estimate
    label: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"x": self.x, "value": self.value.to_dict(), "label": self.label}

    @classmethod
    def from_dict(cls, d: Any, where: str = "point") -> CurvePoint:
        return cls(jnum(d, "x", where), Estimate.from_dict(jget(d, "value", where), f"{where}.value"),
                   str(jstr(d, "label", where, optional=True) or ""))


@dataclass(frozen=True)
class Curve:
    """A measured quantity over training (held-out success on a dev set, the share of GRPO groups without
    reward variance), plotted in the report. ``rate``: the values are shares, printed as percentages."""

    name: str
    x_label: str
    y_label: str
    points: list[CurvePoint] = field(default_factory=list)
    rate: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "x_label": self.x_label, "y_label": self.y_label, "rate": self.rate,
                "points": [p.to_dict() for p in self.points]}

    @classmethod
    def from_dict(cls, d: Any, where: str = "curve") -> Curve:
        points = jget(d, "points", where)
        if not isinstance(points, list):
            raise ReportError(f"{where}.points: expected a list, got {type(points).__name__}")
        rate = jobj(d, where).get("rate", True)
        if not isinstance(rate, bool):
            raise ReportError(f"{where}.rate: expected true or false, got {rate!r}")
        return cls(str(jstr(d, "name", where)), str(jstr(d, "x_label", where)), str(jstr(d, "y_label", where)),
                   [CurvePoint.from_dict(p, f"{where}.points[{i}]") for i, p in enumerate(points)], rate)


@dataclass(frozen=True)
class Report:
    title: str
    mode: str
    seed: int
    tasks: TaskInfo
    models: dict[str, ModelSummary]
    comparisons: dict[str, Comparison] = field(default_factory=dict)
    episodes: dict[str, list[EpisodeResult]] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str | None] = field(default_factory=dict)
    git_sha: str | None = None
    out_dir: str | None = None
    dry_run: bool = False  # a smoke test on a handful of tasks: its figures are not results
    strongest_baseline: Baseline | None = None  # None: the run had no scripted non-oracle policy
    curves: list[Curve] = field(default_factory=list)  # measured during training (osint-selfplay's runs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "mode": self.mode,
            "seed": self.seed,
            "dry_run": self.dry_run,
            "config": self.config,
            "versions": dict(self.versions),
            "git_sha": self.git_sha,
            "out_dir": self.out_dir,
            "tasks": self.tasks.to_dict(),
            "models": {k: m.to_dict() for k, m in self.models.items()},
            "comparisons": {k: c.to_dict() for k, c in self.comparisons.items()},
            "strongest_baseline": self.strongest_baseline.to_dict() if self.strongest_baseline else None,
            "curves": [c.to_dict() for c in self.curves],
            "episodes": {k: [e.to_dict() for e in eps] for k, eps in self.episodes.items()},
        }

    @classmethod
    def from_dict(cls, d: Any, where: str = "report") -> Report:
        dry = jget(d, "dry_run", where)
        if not isinstance(dry, bool):
            raise ReportError(f"{where}.dry_run: expected true or false, got {dry!r}")
        seed = jget(d, "seed", where)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ReportError(f"{where}.seed: expected an integer, got {seed!r}")
        sb = jobj(d, where).get("strongest_baseline")  # absent from reports written before it existed
        curves = jobj(d, where).get("curves", [])  # likewise
        if not isinstance(curves, list):
            raise ReportError(f"{where}.curves: expected a list, got {type(curves).__name__}")
        return cls(
            str(jstr(d, "title", where)),
            str(jstr(d, "mode", where)),
            seed,
            TaskInfo.from_dict(jget(d, "tasks", where), f"{where}.tasks"),
            {k: ModelSummary.from_dict(k, v, f"{where}.models.{k}") for k, v in jmap(d, "models", where).items()},
            {
                k: Comparison.from_dict(k, v, f"{where}.comparisons.{k}")
                for k, v in jmap(d, "comparisons", where).items()
            },
            {k: _episodes(v, f"{where}.episodes.{k}") for k, v in jmap(d, "episodes", where).items()},
            jmap(d, "config", where),
            jmap(d, "versions", where),
            jstr(d, "git_sha", where, optional=True),
            jstr(d, "out_dir", where, optional=True),
            dry,
            Baseline.from_dict(sb, f"{where}.strongest_baseline") if sb is not None else None,
            [Curve.from_dict(c, f"{where}.curves[{i}]") for i, c in enumerate(curves)],
        )


def _episodes(rows: Any, where: str) -> list[EpisodeResult]:
    if not isinstance(rows, list):
        raise ReportError(f"{where}: expected a list of episodes, got {type(rows).__name__}")
    out = []
    for i, row in enumerate(rows):
        try:
            out.append(EpisodeResult(**jobj(row, f"{where}[{i}]")))
        except TypeError as exc:
            raise ReportError(f"{where}[{i}]: not an episode record ({exc})") from None
    return out


def load_report(path: str | Path) -> Report:
    """Read a ``report.json`` (a file, or a report folder holding one)."""
    p = Path(path)
    if p.is_dir():
        p = p / "report.json"
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReportError(f"no report at {p}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"{p}: cannot read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise ReportError(f"{p}: not JSON (line {exc.lineno}: {exc.msg})") from None
    return Report.from_dict(data, f"{p}: report")

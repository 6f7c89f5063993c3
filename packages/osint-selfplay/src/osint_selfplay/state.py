"""The typed state of a self-play run: the models it moves between, and its summary.

`RunState` holds the model paths the loop passes from phase to phase; `RunSummary` is what
``summary.json`` holds, one `RoundSummary` per round, each phase's typed result
(`osint_selfplay.results`). ``to_dict`` / ``from_dict`` are the file boundary; ``from_dict`` reads the
summaries written before these classes existed (the same keys).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from osint_selfplay.errors import ConfigError
from osint_selfplay.precision import Precision
from osint_selfplay.results import (
    AnswererResult,
    ArmResult,
    ControlResult,
    DevPoint,
    EvaluationResult,
    GeneratorResult,
    PhaseResult,
    RelabelResult,
    SampleResult,
    WarmStartResult,
)

ControlResults = dict[str, ControlResult | ArmResult]  # {summary field: result} (`osint_selfplay.controls.train`)

ROUND_PHASES = ("generator", "sampled", "relabel", "answerer_first", "answerer")


@dataclass
class Models:
    """The model paths of the two roles (one path twice when one model plays both)."""

    generator: str
    answerer: str

    def to_dict(self) -> dict[str, str]:
        return {"generator": self.generator, "answerer": self.answerer}

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "models") -> Models:
        return cls(**_known(cls, data, where))

    @classmethod
    def both(cls, path: str) -> Models:
        return cls(generator=path, answerer=path)


@dataclass
class RunState:
    """The models a run holds while it runs: where it started (``bases``), the warm start's
    (equal to ``bases`` when it has none) and the current ones, which each phase advances."""

    bases: Models
    warm: Models
    current: Models


@dataclass
class RoundSummary:
    """One round: each phase's result under the name of its step (None: the phase did not run)."""

    round: int
    generator: GeneratorResult | None = None
    sampled: SampleResult | None = None
    relabel: RelabelResult | None = None
    answerer_first: AnswererResult | None = None
    answerer: AnswererResult | None = None

    def phases(self) -> list[PhaseResult]:
        """The results of the phases that ran, in schedule order."""
        return [m for m in (getattr(self, name) for name in ROUND_PHASES) if m is not None]

    def to_dict(self) -> dict[str, Any]:
        return {name: value.to_dict() if isinstance(value, PhaseResult) else value
                for name, value in _without_none(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "round") -> RoundSummary:
        values = _known(cls, data, where)
        for name, kind in _ROUND_KINDS.items():
            if values.get(name) is not None:
                values[name] = kind.from_dict(values[name], f"{where}.{name}")
        return cls(**values)


_ROUND_KINDS: dict[str, type[PhaseResult]] = {"generator": GeneratorResult, "sampled": SampleResult,
                                              "relabel": RelabelResult, "answerer_first": AnswererResult,
                                              "answerer": AnswererResult}


@dataclass
class RunSummary:
    """The run's summary (``summary.json``); each field is None until the part of the run it records ran."""

    rounds: list[RoundSummary] = field(default_factory=list)
    warm_start: WarmStartResult | None = None
    dev_curve_start: DevPoint | None = None
    control: ControlResult | None = None
    uniform_control: ArmResult | None = None
    curriculum_control: ArmResult | None = None
    reverse_control: ArmResult | None = None
    imitation_reference: ControlResult | None = None
    evaluation: EvaluationResult | None = None
    claims: dict[str, str] | None = None  # the headline, one line each (osint_selfplay.claims)
    output_dir: str | None = None
    final_models: Models | None = None
    warm_start_models: Models | None = None
    precision: Precision | None = None  # the warm start's, resolved from the machine (osint_selfplay.precision)

    def record(self, results: ControlResults) -> None:
        """Write the controls `osint_selfplay.controls.train` returns under their field names."""
        for name, result in results.items():
            if not isinstance(result, _SUMMARY_KINDS[name]):
                raise TypeError(f"summary.{name} holds a {_SUMMARY_KINDS[name].__name__}; got {type(result).__name__}")
            setattr(self, name, result)

    def to_dict(self) -> dict[str, Any]:
        out = {name: value.to_dict() if hasattr(value, "to_dict") else value
               for name, value in _without_none(self).items()}
        out["rounds"] = [r.to_dict() for r in self.rounds]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSummary:
        if not isinstance(data, dict):
            raise ConfigError(f"a run summary must be a JSON object; got {type(data).__name__}")
        values = _known(cls, data, "summary")
        rounds = data.get("rounds", [])
        values["rounds"] = [RoundSummary.from_dict(r, f"summary.rounds[{i}]") for i, r in enumerate(rounds)]
        for name, kind in _SUMMARY_KINDS.items():
            if values.get(name) is not None:
                values[name] = kind.from_dict(values[name], f"summary.{name}")
        return cls(**values)


_SUMMARY_KINDS: dict[str, Any] = {"warm_start": WarmStartResult, "dev_curve_start": DevPoint,
                                  "control": ControlResult, "uniform_control": ArmResult,
                                  "curriculum_control": ArmResult, "reverse_control": ArmResult,
                                  "imitation_reference": ControlResult,
                                  "evaluation": EvaluationResult, "final_models": Models,
                                  "warm_start_models": Models, "precision": Precision}


def _without_none(obj: Any) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj) if getattr(obj, f.name) is not None}


def _known(cls: type, data: dict[str, Any], where: str) -> dict[str, Any]:
    """``data``'s fields of ``cls``; an unknown key is a one-line error naming it."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where} must be a JSON object; got {type(data).__name__}")
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; expected {', '.join(sorted(names))}"
        )
    return dict(data)

"""The typed results of a run's phases: what each phase measured, as the modules that read it see it.

Every phase returns one of these; the loop writes it into the phase's marker (``to_dict``) and reads it
back from there (``from_dict``), so a resumed run and a finished one hold the same objects. Nothing reads a
phase's result by string key: ``to_dict`` / ``from_dict`` are its only file boundary (markers, ``summary.json``,
a sample's ``validation.json``).

A field that is None is left out of the file, except the ones marked `written` (a phase writes them even when
it measured nothing: ``reward_first`` of a GRPO phase that logged no reward). A key a file holds that its class
does not declare (a result written by an older or newer osint-selfplay) is kept in ``rest`` and written back as
it was; a field the file lacked (``absent``) is not written back while it holds its default. So reading and
writing a run's files changes nothing and loses nothing.

The conversion is written here rather than taken from a library (dacite, cattrs, pydantic): it must keep the files
the runs already wrote as they are (None left out but for `written` fields, unknown keys kept) and cost no
dependency; it is the ``to_dict`` / ``from_dict`` pair the other records of the project have, made generic.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar, Union

from osint_eval.schema import Baseline, Estimate, PairedBlock
from osint_selfplay.errors import ConfigError

R = TypeVar("R", bound="Record")


def written(default: Any = None) -> Any:
    """A field written to the file even when it is None (the phase measured nothing)."""
    return field(default=default, metadata={"written": True})


@dataclass(kw_only=True)
class Record:
    """A result with its file form: ``to_dict`` / ``from_dict``."""

    rest: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)  # keys this class does not know
    # fields the file it was read from lacked (an older writer's): written back only once they hold a value
    absent: frozenset[str] = field(default=frozenset(), repr=False, compare=False)
    DERIVED: ClassVar[tuple[str, ...]] = ()  # keys ``to_dict`` writes from fields, not read back

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.rest)
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in _OWN or (f.name in self.absent and value == _default(f)):
                continue
            if value is not None or f.metadata.get("written"):
                out[f.name] = _plain(value)
        return out

    def extended(self, cls: type[R], **more: Any) -> R:
        """This result as a ``cls`` (a subclass: a role's GRPO result, relabelling's SFT) with ``more`` of its
        fields."""
        mine = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return cls(**{**mine, **more})

    @classmethod
    def from_dict(cls: type[R], data: Any, where: str = "") -> R:
        where = where or cls.__name__
        if not isinstance(data, dict):
            raise ConfigError(f"{where} must be a JSON object; got {type(data).__name__}")
        hints = _hints(cls)
        known = {k: _typed(hints[k], v, f"{where}.{k}") for k, v in data.items() if k in hints}
        return cls(**known, rest={k: v for k, v in data.items() if k not in hints and k not in cls.DERIVED},
                   absent=frozenset(hints) - set(data))


_OWN = ("rest", "absent")  # a record's own bookkeeping, not its figures


def _default(f: dataclasses.Field[Any]) -> Any:
    return f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default


def figure_names(cls: type[Record]) -> tuple[str, ...]:
    """The fields of a record class but its bookkeeping (`_OWN`): the figures it holds."""
    return tuple(f.name for f in dataclasses.fields(cls) if f.name not in _OWN)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type[Record]) -> dict[str, Any]:
    """The type of every figure of ``cls`` (`figure_names`), resolved once per class."""
    if cls not in _HINTS:
        hints = typing.get_type_hints(cls)
        _HINTS[cls] = {name: hints[name] for name in figure_names(cls)}
    return _HINTS[cls]


def _plain(value: Any) -> Any:
    if hasattr(value, "to_dict"):  # a record, or osint-eval's schema values (`Estimate`, `PairedBlock`, `Curve`)
        return value.to_dict()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _typed(hint: Any, value: Any, where: str) -> Any:
    """``value`` read from a file as ``hint`` says: records and osint-eval's schema values built (in lists and as the
    values of dicts too), every other value kept as it is."""
    if value is None:
        return None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (Union, types.UnionType):
        hint = next(a for a in args if a is not type(None))
        origin, args = typing.get_origin(hint), typing.get_args(hint)
    if isinstance(hint, type) and hasattr(hint, "from_dict"):
        return hint.from_dict(value, where)
    if origin is list and args:
        if not isinstance(value, list):
            raise ConfigError(f"{where} must be a JSON list; got {type(value).__name__}")
        return [_typed(args[0], v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict and len(args) == 2:
        if not isinstance(value, dict):
            raise ConfigError(f"{where} must be a JSON object; got {type(value).__name__}")
        return {k: _typed(args[1], v, f"{where}.{k}") for k, v in value.items()}
    return value


# ---------------------------------------------------------------------------------------------- parts of results
@dataclass(kw_only=True)
class Count(Record):
    """Solved of n (a dev curve's difficulty cell)."""

    solved: int = 0
    n: int = 0


@dataclass(kw_only=True)
class StepMark(Record):
    """Where a packed SFT stood: its optimizer step, seconds in and next packed row (the decay's start)."""

    step: int = 0
    seconds: float = 0.0
    next_row: int = 0


@dataclass(kw_only=True)
class Health(Record):
    """Did a GRPO phase change any parameter, and did every step's groups lack reward variance?"""

    parameters_changed: int = 0
    parameters: int = 0
    zero_variance_every_step: bool = False


@dataclass(kw_only=True)
class ZeroVarianceStep(Record):
    """One GRPO step's share of its ``groups`` whose rewards had no variance."""

    step: int = 0
    share: float = 0.0
    groups: int = 0


@dataclass(kw_only=True)
class ZeroVariance(Record):
    """A phase's GRPO groups of one task source and those whose rewards had no variance."""

    groups: int = 0
    zero_variance: int = 0
    share: float = 0.0


@dataclass(kw_only=True)
class GeneratorStep(Record):
    """One generator GRPO step: each proposal's reward, the frozen answerer's solve rate of each valid one, and
    their hops (a line of the phase's ``steps.jsonl``)."""

    step: int = 0
    rewards: list[float] = field(default_factory=list)
    solve_rates: list[float] = field(default_factory=list)
    valid: int = 0
    proposals: int = 0
    frontier_share: float | None = written()
    hops: list[int] = field(default_factory=list)


@dataclass(kw_only=True)
class DynamicSampling(Record):
    """Dynamic sampling of seed tasks (`osint_selfplay.data.frontier_seed_tasks`)."""

    candidates: int = 0
    all_solved: int = 0
    none_solved: int = 0
    replaced: int = 0
    unreplaced: int = 0
    mean_rate_candidates: float | None = written()
    mean_rate_kept: float | None = written()
    kept_difficulties: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


@dataclass(kw_only=True)
class TaskMix(Record):
    """The tasks of an answerer phase (`osint_selfplay.data.mix_answerer_rows`): generated and seed tasks, the
    top-up, the frontier band's cut, and their hops."""

    generated: int = 0
    seed: int = 0
    top_up: int = 0
    wanted_generated: int = 0
    valid_generated: int = 0
    outside_frontier: int = 0
    frontier: list[float] = field(default_factory=list)
    rows: int = 0
    unsolvable_under_budget: int = 0
    dynamic_sampling: DynamicSampling | None = written()
    mean_hops: float | None = written()
    hops: dict[str, int] = field(default_factory=dict)
    generated_mean_hops: float | None = written()
    mean_depth: float | None = None  # the tasks' mean start depth (rungs: given demonstrator steps)
    depths: dict[str, int] | None = None  # tasks per start depth, where any task had one


@dataclass(kw_only=True)
class RolloutStats(Record):
    """A multi-turn answerer phase's rollouts (`osint_selfplay.rollout.MultiTurnRollout.summary`)."""

    n: int = 0
    well_formed_tool_call_share: float = 0.0
    cut_by_budget_share: float = 0.0
    mean_tool_calls: float = 0.0
    mean_critical_steps: float = 0.0
    mean_env_reward: float = 0.0
    decoding: str = ""
    decode_seconds: float = 0.0


@dataclass(kw_only=True)
class DemonstrationCounts(Record):
    """The oracle episodes behind a set of demonstrations and why some were dropped (`data.sft_multi_turn_rows`);
    ``renamed`` only where ``warm_start.rename_words``."""

    episodes: int = 0
    incorrect: int = 0
    unseen_ids: int = 0
    renamed: int | None = None

    @property
    def kept(self) -> int:
        return self.episodes - self.incorrect - self.unseen_ids


@dataclass(kw_only=True)
class RelabelCounts(Record):
    """Expert relabelling's episodes and states (`osint_selfplay.relabel`)."""

    episodes: int = 0
    solved: int = 0
    failed: int = 0
    states: int = 0
    ended: int = 0
    incorrect: int = 0
    followed: int = 0
    after_error: int = 0
    unseen_ids: int = 0
    duplicates: int = 0
    kept: int = 0


@dataclass(kw_only=True)
class TaskCounts(Record):
    """The tasks a phase played: generated ones and seed tasks (relabelling's, `osint_selfplay.data.relabel_tasks`)."""

    generated: int = 0
    seed: int = 0


@dataclass(kw_only=True)
class ExtraRows(Record):
    """A packed SFT's second set of conversations, ``rows_per_step`` of every step's packed rows."""

    conversations: int = 0
    packed_rows: int = 0
    dropped_too_long: int = 0
    rows_per_step: int = 0
    trained_tokens: int = 0


@dataclass(kw_only=True)
class ArmFigures(Record):
    """One arm of a round's frontier sample (`osint_selfplay.frontier.arm_figures`): its valid proposals, those
    in the frontier band, their mean solve rate and hops; ``reasons``: the validator's verdicts; ``bins``: the
    scripted curriculum's estimates."""

    proposals: int = 0
    valid: int = 0
    valid_rate: float = 0.0
    in_frontier: int = 0
    frontier_share: float | None = written()
    mean_solve_rate: float | None = written()
    mean_hops: float | None = written()
    hops: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, int] | None = None
    bins: dict[str, Any] | None = None
    mean_depth: float | None = None  # rungs: the valid proposals' mean start depth (given demonstrator steps)
    mean_left: float | None = None  # and the mean of the steps they leave the answerer
    depths: dict[str, int] | None = None  # valid proposals per start depth


# ---------------------------------------------------------------------------------------------- phase results
@dataclass(kw_only=True)
class PhaseResult(Record):
    """What every phase's marker holds: its wall time (set by the loop), and whether it was a dry run."""

    wall_seconds: float | None = None
    dry_run: bool | None = None

    def sft_compute(self) -> tuple[int, float]:
        """(optimizer steps, seconds) of packed SFT the phase trained (`osint_selfplay.controls.budget_steps`)."""
        return 0, 0.0


@dataclass(kw_only=True)
class DevPoint(PhaseResult):
    """One point of the dev curve (`osint_selfplay.curves.DevProbe`): greedy success at an optimizer step."""

    label: str = ""
    step: int = 0
    solved: int = 0
    n: int = 0
    seconds: float = 0.0
    by_difficulty: dict[str, Count] = field(default_factory=dict)


@dataclass(kw_only=True)
class TrainingResult(PhaseResult):
    """A phase that trained: its optimizer steps and seconds, and its dev curve where measured (``curve_seconds``:
    the curve's own time, not the phase's compute)."""

    steps: int | None = None
    seconds: float | None = None
    dev_curve: list[DevPoint] | None = None
    curve_seconds: float | None = None


@dataclass(kw_only=True)
class SFTResult(TrainingResult):
    """A supervised phase (`osint_selfplay.phases.run_sft`); the packed loop's figures where it packed
    (``decay_start``: where a warm start's decay began; ``branched_at``: where a continuation resumed)."""

    examples: int | None = None
    final_loss: float | None = None
    packed_rows: int | None = None
    dropped_too_long: int | None = None
    trained_tokens_per_epoch: int | None = None
    tokenize_seconds: float | None = None
    rows: int | None = None
    epochs_done: float | None = None
    next_row: int | None = None
    tokens: int | None = None
    tokens_per_second: float | None = None
    stopped_by: str | None = None
    decay_start: StepMark | None = None
    branched_at: StepMark | None = None
    extra: ExtraRows | None = None
    precision: str | None = None  # the packed loop's matrix products: float32 or bfloat16 (osint_selfplay.precision)


@dataclass(kw_only=True)
class WarmStartResult(SFTResult):
    """The warm start, with the oracle episodes behind its demonstrations."""

    demonstration_counts: DemonstrationCounts | None = None


@dataclass(kw_only=True)
class ControlResult(SFTResult):
    """The equal-compute control or the imitation reference (`osint_selfplay.controls`): the warm start given the
    rounds' compute (``budget_steps`` of its own steps for ``budget_seconds``), the model to evaluate."""

    budget_seconds: float | None = None
    budget_steps: int | None = None
    extra_demonstrations: DemonstrationCounts | None = None
    model: str | None = None


@dataclass(kw_only=True)
class RelabelResult(SFTResult):
    """A round's expert relabelling (`osint_selfplay.relabel`): the episodes it played and relabelled, its tasks,
    and the SFT on them. Files also hold ``sft_steps`` / ``sft_seconds`` (the same as ``steps`` / ``seconds``),
    which runs written before these classes read."""

    relabel: RelabelCounts | None = None
    tasks: TaskCounts | None = None
    aggregated_rows: int | None = None
    relabelled_rows: int | None = None
    start_model: str | None = None

    DERIVED: ClassVar[tuple[str, ...]] = ("sft_steps", "sft_seconds")

    def sft_compute(self) -> tuple[int, float]:
        return int(self.steps or 0), float(self.seconds or 0.0)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "sft_steps": self.steps, "sft_seconds": self.seconds}



@dataclass(kw_only=True)
class GRPOResult(TrainingResult):
    """A GRPO phase (`osint_selfplay.phases.run_grpo`): its health, the first and last logged mean reward, and each
    step's share of zero-variance groups (by ``zero_variance_metric``)."""

    prompts: int | None = None
    health: Health | None = None
    warnings: list[str] | None = None
    lm_head: str | None = None
    reward_first: float | None = written()
    reward_last: float | None = written()
    zero_variance_metric: str | None = None
    zero_variance_mean: float | None = written()
    zero_variance_steps: list[ZeroVarianceStep] | None = None



@dataclass(kw_only=True)
class GeneratorResult(GRPOResult):
    """The generator's GRPO phase (`osint_selfplay.frontier.generator_figures`): its proposals' validity, the frozen
    answerer's solve rates and frontier share over the phase, and every step's rewards."""

    validity: dict[str, int] | None = None
    reward_seconds: float | None = None
    solver_seconds: float | None = None
    frozen_answerer_solve_rate_mean: float | None = written()
    frontier_share: float | None = written()
    valid_proposals: int | None = None
    distinct_tasks_played: int | None = None
    generator_steps: list[GeneratorStep] | None = None
    frozen_answerer: str | None = None
    solve_rate_samples: int | None = None
    frozen_answerer_unsolvable_under_budget: int | None = None


@dataclass(kw_only=True)
class AnswererResult(GRPOResult):
    """An answerer GRPO phase: its tasks, the model it started from, its rollouts (multi-turn) or scoring time
    (single-turn), and its zero-variance groups by task source."""

    mix: TaskMix | None = None
    start_model: str | None = None
    rollouts: RolloutStats | None = None
    reward_seconds: float | None = None
    zero_variance_by_source: dict[str, ZeroVariance] | None = None


@dataclass(kw_only=True)
class SampleResult(ArmFigures, PhaseResult):
    """A round's frontier sample (`osint_selfplay.frontier.sample_round`): the learned generator's arm, the scripted
    curriculum's on the same offers where measured, the band and the frozen answerer that rated them."""

    band: list[float] | None = None
    curriculum: ArmFigures | None = None
    solve_rate_samples: int | None = None
    frozen_answerer: str | None = None


@dataclass(kw_only=True)
class ArmResult(Record):
    """A control that repeats every round's answerer phase on other tasks (`osint_selfplay.controls`): each round's
    result and mix, the first and last reward and the model to evaluate; or, when it would repeat the run
    (no generated task reached the answerer), ``same_as_final``."""

    rounds: list[AnswererResult] | None = None
    model: str | None = None
    mix: list[TaskMix] | None = None
    reward_first: float | None = written()
    reward_last: float | None = written()
    same_as_final: bool | None = None
    generated: int | None = None


# ---------------------------------------------------------------------------------------------- the evaluation
@dataclass(kw_only=True)
class SubsetFigures(Record):
    """Success of every model and the paired deltas on the tasks of some difficulties (`evaluate.subset_figures`):
    the first split's easy + medium tasks, or the hard tasks of every split (``splits``)."""

    difficulties: list[str] = field(default_factory=list)
    n_tasks: int = 0
    success: dict[str, Estimate] = field(default_factory=dict)
    comparisons: dict[str, PairedBlock] = field(default_factory=dict)
    splits: list[str] | None = None


@dataclass(kw_only=True)
class Headline(Record):
    """A model's headline figures on a split (`evaluate.HEADLINE`), each with its interval and n."""

    success: Estimate | None = None
    reward: Estimate | None = None
    tool_calls: Estimate | None = None
    critical_steps: Estimate | None = None


@dataclass(kw_only=True)
class SplitFigures(Record):
    """One held-out split's figures: every model's headline (`evaluate.HEADLINE`) and success by difficulty, the
    paired comparisons, the strongest scripted baseline, the easy + medium subset, and its report."""

    tasks: str = ""
    n_tasks: int = 0
    headline: dict[str, Headline] = field(default_factory=dict)
    by_difficulty: dict[str, dict[str, Estimate]] = field(default_factory=dict)
    easy_medium: SubsetFigures | None = None
    comparisons: dict[str, PairedBlock] = field(default_factory=dict)
    strongest_baseline: Baseline | None = written()
    report: str | None = None


@dataclass(kw_only=True)
class SingleTurnReference(Record):
    """An optional single-turn answerer on the same tasks (``eval.single_turn_model``), or that it is missing."""

    model: str = ""
    success: Estimate | None = None
    missing: bool | None = None


@dataclass(kw_only=True)
class EvaluationResult(SplitFigures, PhaseResult):
    """The closing evaluation (`osint_selfplay.evaluate`): the first split's figures, the other splits', the hard
    tasks of all of them, the evaluated models, the rounds' generator figures, and the report's curves."""

    mode: str = ""
    context_mode: str | None = written()
    models: dict[str, str] = field(default_factory=dict)
    splits: dict[str, SplitFigures] = field(default_factory=dict)
    hard: SubsetFigures | None = None
    generator_valid_rate: list[float | None] = field(default_factory=list)
    answerer_solve_rate_on_generated: list[float | None] = field(default_factory=list)
    zero_variance_groups: dict[str, ZeroVariance] = field(default_factory=dict)
    single_turn_reference: SingleTurnReference | None = written()
    # osint-eval `Curve`s in their file form (their steps stay integers)
    curves: list[dict[str, Any]] = field(default_factory=list)

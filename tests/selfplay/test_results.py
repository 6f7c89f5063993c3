"""Typed phase results (`osint_selfplay.results`): a run's files read into records and written back unchanged, the
unknown and the missing keys of other writers kept as they were, and no module reading a result by string key."""

from __future__ import annotations

import ast
import dataclasses
import json
import typing
from pathlib import Path

import pytest

from osint_eval.schema import Estimate, PairedBlock
from osint_selfplay import results
from osint_selfplay.errors import ConfigError
from osint_selfplay.report import format_summary
from osint_selfplay.results import (
    AnswererResult,
    ArmResult,
    ControlResult,
    DevPoint,
    EvaluationResult,
    GeneratorStep,
    GRPOResult,
    Record,
    RelabelResult,
    SampleResult,
    SFTResult,
    TaskMix,
    WarmStartResult,
)
from osint_selfplay.state import RoundSummary, RunSummary

ROOT = Path(__file__).resolve().parents[2]
# the summary.json of a main job and its controls (`hatch run train` then `hatch run train-controls`, 2026-12-06)
REAL = ROOT / "tests" / "data" / "selfplay-summary-with-controls.json"
PACKAGE = ROOT / "packages" / "osint-selfplay" / "src" / "osint_selfplay"


def _records(value, where="summary"):
    """Every record in ``value`` with where it sits."""
    if isinstance(value, (Record, RunSummary, RoundSummary)):
        if isinstance(value, Record):
            yield where, value
        for f in dataclasses.fields(value):
            yield from _records(getattr(value, f.name), f"{where}.{f.name}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _records(v, f"{where}[{i}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _records(v, f"{where}.{k}")


def test_a_real_run_summary_reads_into_typed_results_and_writes_back_the_same_text():
    data = json.loads(REAL.read_text())
    summary = RunSummary.from_dict(data)
    assert json.dumps(summary.to_dict(), sort_keys=True) == json.dumps(data, sort_keys=True)
    rnd = summary.rounds[0]
    assert isinstance(rnd.generator, results.GeneratorResult) and isinstance(rnd.sampled, SampleResult)
    assert isinstance(rnd.answerer, AnswererResult) and isinstance(rnd.answerer.mix, TaskMix)
    assert isinstance(summary.warm_start, WarmStartResult) and isinstance(summary.dev_curve_start, DevPoint)
    assert isinstance(summary.control, ControlResult) and isinstance(summary.uniform_control, ArmResult)
    assert isinstance(summary.evaluation, EvaluationResult)
    assert isinstance(summary.evaluation.hard.comparisons["final vs warm_start"], PairedBlock)
    assert isinstance(summary.evaluation.headline["final"].success, Estimate)
    assert all(isinstance(s, GeneratorStep) for s in rnd.generator.generator_steps)
    # every key the loop writes is a field: nothing of a real run is left untyped
    assert [(where, sorted(r.rest)) for where, r in _records(summary) if r.rest] == []
    assert format_summary(summary) == format_summary(data)


def test_figures_the_file_holds_are_the_typed_values():
    data = json.loads(REAL.read_text())
    summary = RunSummary.from_dict(data)
    gen, ans = summary.rounds[1].generator, summary.rounds[1].answerer
    assert gen.reward_first == data["rounds"][1]["generator"]["reward_first"]
    assert gen.generator_steps[0].rewards == data["rounds"][1]["generator"]["generator_steps"][0]["rewards"]
    assert ans.mix.generated == data["rounds"][1]["answerer"]["mix"]["generated"]
    assert summary.warm_start.decay_start.next_row == data["warm_start"]["decay_start"]["next_row"]
    assert summary.control.budget_steps == data["control"]["budget_steps"]
    assert summary.curriculum_control.rounds[0].start_model == data["curriculum_control"]["rounds"][0]["start_model"]


def test_keys_another_writer_added_are_kept_and_fields_it_lacked_are_not_invented():
    old = {"steps": 3, "reward_first": 0.25, "from_a_newer_writer": {"x": 1}}
    result = GRPOResult.from_dict(old)
    assert result.steps == 3 and result.rest == {"from_a_newer_writer": {"x": 1}}
    # reward_last is written even when None by the loop; a file without it gets none back
    assert "reward_last" in result.absent and result.to_dict() == old
    result.reward_last = 0.5  # a value set since: written
    assert result.to_dict() == {**old, "reward_last": 0.5}
    assert GRPOResult().to_dict()["reward_first"] is None  # written: the phase logged no reward
    assert "steps" not in GRPOResult().to_dict()  # None and not written: left out


def test_relabelling_writes_its_sft_steps_for_older_readers_and_reads_them_from_steps():
    result = RelabelResult(steps=40, seconds=12.5, relabelled_rows=7)
    data = result.to_dict()
    assert data["sft_steps"] == 40 and data["sft_seconds"] == 12.5
    again = RelabelResult.from_dict(data)
    assert again == result and again.rest == {} and again.sft_compute() == (40, 12.5)
    assert GRPOResult(steps=9, seconds=3.0).sft_compute() == (0, 0.0)  # GRPO is not packed SFT


def test_a_result_extended_into_a_role_keeps_every_figure():
    sft = SFTResult(steps=5, seconds=1.5, final_loss=0.25, rest={"kept": True})
    warm = sft.extended(WarmStartResult, demonstration_counts=results.DemonstrationCounts(episodes=3))
    assert (warm.steps, warm.seconds, warm.final_loss, warm.rest) == (5, 1.5, 0.25, {"kept": True})
    assert warm.to_dict()["demonstration_counts"] == {"episodes": 3, "incorrect": 0, "unseen_ids": 0}


@pytest.mark.parametrize(("kind", "data", "message"), [
    (SFTResult, [1, 2], "SFTResult must be a JSON object; got list"),
    (AnswererResult, {"mix": "many"}, "AnswererResult.mix must be a JSON object; got str"),
    (results.GeneratorResult, {"generator_steps": {"step": 1}},
     "GeneratorResult.generator_steps must be a JSON list; got dict"),
    (SampleResult, {"curriculum": 3}, "SampleResult.curriculum must be a JSON object; got int"),
])
def test_a_malformed_result_file_is_a_one_line_error_naming_where(kind, data, message):
    with pytest.raises(ConfigError) as info:
        kind.from_dict(data)
    assert str(info.value) == message


def test_the_summary_holds_typed_results_only():
    """No phase result is a plain mapping: every summary field of a phase names its record type."""
    for cls, skip in ((RoundSummary, {"round"}), (RunSummary, {"rounds", "claims", "output_dir", "final_models",
                                                                "warm_start_models"})):
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            if f.name in skip:
                continue
            kinds = [a for a in typing.get_args(hints[f.name]) if a is not type(None)]
            assert len(kinds) == 1 and issubclass(kinds[0], Record), (cls.__name__, f.name, hints[f.name])


def test_only_the_loop_reads_or_writes_a_phase_marker():
    """A phase's result meets its file in one place (`SelfPlayRun.run_phase`); every other module gets the record."""
    found = []
    for path in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in ("done", "mark") and \
                    isinstance(node.value, ast.Attribute) and node.value.attr == "markers":
                found.append(path.name)
    assert found and set(found) == {"loop.py"}

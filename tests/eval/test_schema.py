"""The report schema: what the writer puts in report.json the reader gets back, typed; a malformed
file is one ReportError naming the file and the field; one formatter for values with intervals."""

from __future__ import annotations

import json
import math

import pytest

from osint_eval.errors import ReportError
from osint_eval.evaluate import evaluate
from osint_eval.policies import OraclePolicy, RandomGuessPolicy
from osint_eval.report import markdown, render_html, write_report
from osint_eval.schema import Estimate, Report, load_report
from osint_eval.tasks import load_tasks


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    ts = load_tasks("v0:dev", limit=12)
    rep = evaluate({"oracle": OraclePolicy(), "guess": RandomGuessPolicy(0)}, ts, comparisons=[("guess", "oracle")],
                   progress=False, seed=5, dry_run=True)
    out = tmp_path_factory.mktemp("schema")
    write_report(rep, out)
    return rep, out


def test_report_round_trips_through_json_unchanged(written):
    rep, out = written
    back = load_report(out)
    assert back == rep  # every dataclass field, every episode
    assert back.models["oracle"].overall.success == rep.models["oracle"].overall.success
    assert back.comparisons["oracle vs guess"].overall.mcnemar.base_only == 0
    assert markdown(back) == markdown(rep) and render_html(back) == render_html(rep)


def test_json_on_disk_keeps_the_documented_shape(written):
    _, out = written
    data = json.loads((out / "report.json").read_text())
    success = data["models"]["oracle"]["summary"]["overall"]["success"]
    assert set(success) == {"mean", "lo", "hi", "n"} and success["n"] == 12 and success["mean"] == 1.0
    comp = data["comparisons"]["oracle vs guess"]
    assert (comp["base"], comp["candidate"], comp["base_label"], comp["candidate_label"]) == (
        "guess",
        "oracle",
        "random-guess",
        "oracle",
    )


def test_dry_run_is_stated_in_every_output(written):
    rep, out = written
    assert json.loads((out / "report.json").read_text())["dry_run"] is True
    note = "DRY RUN: a smoke test on 12 tasks; these figures are not evaluation results."
    assert f"**{note}**" in (out / "report.md").read_text()
    assert note in (out / "report.html").read_text()


def _break(data: dict, path: list, value=None, delete=False) -> dict:
    node = data
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return data


@pytest.mark.parametrize(
    ("path", "value", "delete", "message"),
    [
        (
            ["models", "oracle", "summary", "overall", "success", "n"],
            None,
            True,
            "models.oracle.summary.overall.success.n: missing",
        ),
        (
            ["models", "guess", "summary", "overall", "reward", "mean"],
            "high",
            False,
            "models.guess.summary.overall.reward.mean: expected a number, got 'high'",
        ),
        (["tasks", "n"], -3, False, "tasks.n: expected a count (an integer >= 0), got -3"),
        (
            ["comparisons", "oracle vs guess", "overall", "mcnemar"],
            None,
            True,
            "comparisons.oracle vs guess.overall.mcnemar: missing",
        ),
        (["dry_run"], "yes", False, "dry_run: expected true or false, got 'yes'"),
        (["episodes", "guess"], {"a": 1}, False, "episodes.guess: expected a list of episodes, got dict"),
        (["models"], [], False, "models: expected an object, got list"),
    ],
)
def test_malformed_report_is_one_typed_error_naming_file_and_field(written, tmp_path, path, value, delete, message):
    _, out = written
    bad = tmp_path / "report.json"
    bad.write_text(json.dumps(_break(json.loads((out / "report.json").read_text()), path, value, delete)))
    with pytest.raises(ReportError) as info:
        load_report(bad)
    assert str(info.value) == f"{bad}: report.{message}" and "\n" not in str(info.value)


def test_unreadable_report_files_are_typed_errors(tmp_path):
    with pytest.raises(ReportError, match=r"no report at .*report\.json"):
        load_report(tmp_path)
    (tmp_path / "report.json").write_text("{not json")
    with pytest.raises(ReportError, match=r"report\.json: not JSON \(line 1"):
        load_report(tmp_path)
    with pytest.raises(ReportError, match=r"^report\.dry_run: missing$"):
        Report.from_dict({})


def test_one_formatter_for_values_with_intervals():
    rate = Estimate(0.501, 0.469, 0.531, 1000)
    assert rate.fmt(pct=True) == "50.1% [46.9, 53.1] (n=1000)"
    assert rate.fmt(pct=True, show_n=False) == "50.1% [46.9, 53.1]"
    assert Estimate(0.412, 0.381, 0.443, 9).fmt() == "0.412 [0.381, 0.443] (n=9)"
    assert Estimate(0.05, -0.012, 0.109, 200).fmt(pct=True, signed=True) == "+5.0 pts [-1.2, +10.9] (n=200)"
    assert Estimate(-0.031, -0.05, -0.01, 20).fmt(signed=True, show_n=False) == "-0.031 [-0.050, -0.010]"
    assert Estimate(math.nan, math.nan, math.nan, 0).fmt(pct=True) == "n/a (n=0)"
    with pytest.raises(ReportError, match=r"^x\.lo: missing$"):
        Estimate.from_dict({"mean": 1.0, "hi": 1.0, "n": 3}, "x")


def test_training_curves_round_trip_and_render_as_a_table_and_a_plot(written, tmp_path):
    from dataclasses import replace

    from osint_eval.schema import Curve, CurvePoint

    rep, _ = written
    dev = Curve("greedy success on 200 v0:dev tasks", "on-policy optimizer step", "success (95% CI)",
                [CurvePoint(0, Estimate(0.25, 0.2, 0.31, 200), "warm start"),
                 CurvePoint(300, Estimate(0.3, 0.24, 0.37, 200), "round 0 expert relabelling")])
    zero = Curve(
        "groups with zero reward variance", "step", "share", [CurvePoint(1, Estimate(0.5, 0.1, 0.9, 4), "GRPO")]
    )
    with_curves = replace(rep, curves=[dev, zero])
    write_report(with_curves, tmp_path)
    back = load_report(tmp_path)
    assert back.curves == [dev, zero] and back == with_curves
    md = (tmp_path / "report.md").read_text()
    assert "## Training curves" in md and "### greedy success on 200 v0:dev tasks" in md
    assert "| 300 | round 0 expert relabelling | 30.0% [24.0, 37.0] (n=200) |" in md
    page = (tmp_path / "report.html").read_text()
    assert "<h2>Training curves</h2>" in page and page.count("<svg") == 4  # two curves, then success and reward
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["curves"][0]["points"][1] == {"x": 300, "value": {"mean": 0.3, "lo": 0.24, "hi": 0.37, "n": 200},
                                               "label": "round 0 expert relabelling"}
    del data["curves"]  # a report written before curves existed still loads, with none
    (tmp_path / "report.json").write_text(json.dumps(data))
    assert load_report(tmp_path).curves == [] and "Training curves" not in markdown(load_report(tmp_path))
    data["curves"] = [{"name": "c", "x_label": "x", "y_label": "y", "points": [{"x": "late", "value": {}}]}]
    (tmp_path / "report.json").write_text(json.dumps(data))
    with pytest.raises(ReportError, match=r"report\.curves\[0\]\.points\[0\]\.x: expected a number, got 'late'$"):
        load_report(tmp_path)

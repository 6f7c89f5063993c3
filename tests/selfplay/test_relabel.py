"""Expert relabelling in the loop (`osint_selfplay.relabel`): the answerer plays, the oracle continues
its failed episodes from their states, SFT trains on the oracle's turns only; a round can use it in
place of GRPO, and the equal-compute control still gets the round's whole wall time."""

from __future__ import annotations

import json
import re

import pytest

from osint_gym.schema import ID_PATTERN
from osint_selfplay.config import load_config
from osint_selfplay.errors import ConfigError

from .conftest import micro_overrides

_ID = re.compile(ID_PATTERN)


def _micro(tmp_path, **extra):
    return load_config(None, micro_overrides(tmp_path / "run", **{
        "answerer.mode": "'multi_turn'", "answerer.max_turns": 6, "answerer.max_observation_chars": 4000,
        "answerer.observation_format": "'compact'", "answerer.action_format": "'short'", "answerer.tasks_per_round": 4,
        "answerer.bare_prompt": "true", "canonical_graph_mode": "'choose'", "generator.max_hops": 2,
        "grpo_generator.max_completion_length": 8, "warm_start.answerer_examples": 24, "warm_start.packing": "true",
        "warm_start.decay_fraction": 0.5, "warm_start.max_length": 768, "warm_start.batch_size": 2,
        "warm_start.control": "true", "eval.max_new_tokens": 24, "eval.difficulties": "[]", "eval.limit": 4,
        "model_topology": "'shared'", "eval.include_untrained": "false",
        "relabel.enabled": "true", "relabel.grpo": "false", "relabel.tasks": 6, "relabel.sft_seconds": 2, **extra}))


def test_a_relabelling_round_trains_on_the_teachers_turns_and_its_control_gets_its_time(tmp_path):
    from osint_selfplay.loop import SelfPlayRun

    summary = SelfPlayRun(_micro(tmp_path)).run()
    rnd = summary["rounds"][0]
    assert "answerer" not in rnd  # relabel.grpo = false: relabelling is the answerer's whole update
    phase = rnd["relabel"]
    counts = phase["relabel"]
    assert counts["episodes"] == 6 and counts["solved"] + counts["failed"] == 6
    outcomes = ("ended", "incorrect", "unseen_ids", "kept", "duplicates")
    assert counts["states"] == sum(counts[k] for k in outcomes)
    assert counts["unseen_ids"] == 0
    # the warm start's decay, on the mix
    assert phase["branched_at"]["step"] == summary["warm_start"]["decay_start"]["step"]
    assert summary["final_models"]["answerer"].endswith("round_000/relabel/final_model")
    relabelled = tmp_path / "run" / "round_000" / "relabel" / "relabelled.jsonl"
    rows = [json.loads(line) for line in relabelled.read_text().splitlines()]
    assert len(rows) == counts["kept"] > 0
    for row in rows:
        turns = [m for m in row["messages"] if m["role"] == "assistant"]
        assert 0 <= row["masked_turns"] < len(turns)
        seen = set()
        for k, m in enumerate(row["messages"]):
            earlier_turns = sum(x["role"] == "assistant" for x in row["messages"][:k])
            if m["role"] == "assistant" and earlier_turns >= row["masked_turns"]:
                assert set(_ID.findall(m["content"])) <= seen, m["content"]  # the teacher's ids were shown first
            if m["role"] != "assistant":
                seen.update(_ID.findall(m["content"]))
    assert phase["demonstrations"] == phase["examples"] - counts["kept"]
    control = summary["control"]
    rounds_seconds = sum(p["wall_seconds"] for p in rnd.values() if isinstance(p, dict))
    assert control["budget_seconds"] == pytest.approx(rounds_seconds) and rounds_seconds >= phase["wall_seconds"]
    assert {"final vs control", "final vs warm_start"} <= set(summary["evaluation"]["comparisons"])
    from osint_selfplay.report import format_summary

    text = format_summary(summary)
    assert "no answerer GRPO phase" in text and "answerer tasks:" not in text
    t = phase["tasks"]
    assert t["generated"] + t["seed"] == 6
    assert (f"expert relabelling: 6 episodes played ({t['generated']} generated + {t['seed']} seed tasks), "
            f"{counts['failed']} failed; "
            f"{counts['kept']} oracle continuations kept of {counts['states']} states") in text


@pytest.mark.parametrize(("key", "value", "message"), [
    ("relabel.tasks", 0, "relabel.tasks must be a number >= 1"),
    ("relabel.demonstration_share", 1.0, "relabel.demonstration_share must be in [0, 1)"),
    ("relabel.temperature", -1, "relabel.temperature must be in [0, 2]"),
    ("relabel.tasks_played", 3, "relabel"),
])
def test_bad_relabel_settings_are_one_line_errors(key, value, message):
    with pytest.raises(ConfigError, match=re.escape(message)) as info:
        load_config(None, [f"{key}={value}"])
    assert "\n" not in str(info.value)


def test_relabelled_rows_need_the_packed_loop(tmp_path):
    from osint_selfplay import phases

    cfg = load_config(None, micro_overrides(tmp_path, **{"warm_start.packing": "false"}))
    rows = [{"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], "masked_turns": 1}]
    with pytest.raises(ConfigError, match="only the packed loop can"):
        phases.run_sft("unused", rows, cfg, tmp_path, "answerer", "tiny")

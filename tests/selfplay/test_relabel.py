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
        "answerer.mode": "'multi_turn'", "episode.max_steps": 6, "episode.max_observation_chars": 4000,
        "episode.observation_format": "'compact'", "episode.action_format": "'short'", "answerer.tasks_per_round": 4,
        "episode.describe_tools": "false", "canonical_graph_mode": "'choose'", "generator.max_hops": 2,
        "grpo_generator.max_completion_length": 8, "warm_start.answerer_examples": 24, "warm_start.packing": "true",
        "warm_start.decay_fraction": 0.5, "warm_start.max_length": 768, "warm_start.batch_size": 2,
        "warm_start.control": "true", "eval.max_new_tokens": 24, "play.max_new_tokens": 24, "eval.difficulties": "[]",
        "eval.limit": 4,
        "model_topology": "'shared'", "eval.include_untrained": "false",
        "relabel.enabled": "true", "relabel.grpo": "false", "relabel.tasks": 6, "relabel.sft_steps": 5, **extra}))


@pytest.mark.slow
def test_a_relabelling_round_trains_on_the_teachers_turns_and_its_control_gets_its_time(tmp_path):
    from osint_selfplay.loop import SelfPlayRun

    summary = SelfPlayRun(_micro(tmp_path, **{"eval.curve_tasks": 3, "eval.curve_every": 2})).run().to_dict()
    rnd = summary["rounds"][0]
    assert "answerer" not in rnd  # relabel.grpo = false: relabelling is the answerer's whole update
    phase = rnd["relabel"]
    counts = phase["relabel"]
    assert counts["episodes"] == 6 and counts["solved"] + counts["failed"] == 6
    outcomes = ("ended", "incorrect", "followed", "after_error", "unseen_ids", "kept", "duplicates")
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
    # the warm start's demonstrations stream on where it stopped; a share of every step is relabelled
    assert phase["relabelled_rows"] == counts["kept"] and phase["aggregated_rows"] == 0
    assert phase["extra"]["rows_per_step"] == 1 and phase["extra"]["conversations"] <= counts["kept"]
    assert phase["branched_at"]["next_row"] == summary["warm_start"]["decay_start"]["next_row"]
    warm = summary["warm_start"]
    assert phase["steps"] == warm["steps"] + 5 - warm["decay_start"]["step"]  # its decay again, stretched by 5 steps
    # the dev curve: the warm start, every 2 steps of the relabelling SFT and its end, 3 v0:dev tasks each
    curve = phase["dev_curve"]
    assert [p["step"] for p in curve] == [
        *range(2, phase["steps"] + 1, 2),
        *([phase["steps"]] if phase["steps"] % 2 else []),
    ]
    assert all(p["n"] == 3 and 0 <= p["solved"] <= 3 for p in curve) and summary["dev_curve_start"]["step"] == 0
    assert phase["curve_seconds"] == pytest.approx(sum(p["seconds"] for p in curve))
    report = json.loads((tmp_path / "run" / "eval" / "report.json").read_text())
    dev = report["curves"][0]
    assert dev["name"] == "greedy success on 3 v0:dev tasks during the on-policy phases"
    assert [p["x"] for p in dev["points"]] == [0, *(p["step"] for p in curve)]
    assert (
        dev["points"][0]["label"] == "warm start"
        and dev["points"][1]["label"] == "answerer (round 0 expert relabelling)"
    )
    control = summary["control"]
    rounds_seconds = sum(p["wall_seconds"] - p.get("curve_seconds", 0.0) for p in rnd.values() if isinstance(p, dict))
    assert control["budget_seconds"] == pytest.approx(rounds_seconds) and rounds_seconds >= phase["sft_seconds"]
    rate = warm["steps"] / warm["seconds"]  # the relabelling's SFT steps count as steps, its other seconds at this rate
    others = rounds_seconds - phase["sft_seconds"]
    assert control["budget_steps"] == round(phase["sft_steps"] + others * rate)
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
    ("relabel.share", 1.0, "relabel.share must be in (0, 1)"),
    ("relabel.sft_steps", 0, "relabel.sft_steps must be a number >= 1"),
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


def test_relabelled_conversations_rename_made_up_words_as_the_demonstrations_do(tmp_path):
    """With ``warm_start.rename_words`` the demonstrations train every made-up word, not only those the training
    worlds write; a relabelled conversation is renamed the same way, consistently across its messages (the
    question, the student's turns, the observations and the teacher's turns)."""
    from osint_gym.agents import OracleAgent
    from osint_gym.world.names import two_syllable_words
    from osint_selfplay import data, relabel
    from osint_selfplay.worlds import WorldPool

    def words(text):
        return set(re.findall(r"(?<![A-Za-z])[A-Z][a-z]+(?![A-Za-z])", text)) & two_syllable_words()

    cfg = _micro(tmp_path, **{"warm_start.rename_words": "true", "answerer.seed_difficulties": '["easy"]'})
    plain = _micro(tmp_path, **{"warm_start.rename_words": "false", "answerer.seed_difficulties": '["easy"]'})
    pool = WorldPool(cfg.train_worlds, cfg.seed)
    checked = 0
    for world, task in data.seed_tasks(pool, cfg, 80, 0):
        named = words(task.question)
        if not named:
            continue
        spec = cfg.episode.spec()
        demo = spec.play_one(spec.make_env(world, task), OracleAgent(cfg.episode.action_format, names_first=True))
        student = [demo.turns[0].action]  # the demonstrator's first turn, then the teacher from there
        rows, _ = relabel.relabel_episode(pool, cfg, world, task, student)
        originals, _ = relabel.relabel_episode(pool, plain, world, task, student)
        assert len(rows) == len(originals) == 1
        renamed, original = rows[0]["messages"], originals[0]["messages"]
        assert all(not (words(m["content"]) & named) for m in renamed)  # no word of the world's own is left
        question = words(renamed[0]["content"])
        assert question and words(renamed[1]["content"]) <= question  # the student's lookup: the same new words
        # the same conversation otherwise: the renaming maps words to words and touches nothing else
        assert [m["role"] for m in renamed] == [m["role"] for m in original]
        strip = re.compile("|".join(sorted(two_syllable_words(), key=len, reverse=True)))
        assert [strip.sub("W", m["content"]) for m in renamed] == [strip.sub("W", m["content"]) for m in original]
        checked += 1
        if checked == 3:
            break
    assert checked == 3


def test_the_controls_budget_counts_sft_steps_as_steps_and_converts_every_other_second():
    from osint_selfplay.controls import budget_steps
    from osint_selfplay.results import AnswererResult, GeneratorResult, RelabelResult, SFTResult
    from osint_selfplay.state import RoundSummary

    warm = SFTResult(steps=1000, seconds=200.0)  # 5 steps a second on this machine
    rounds = [RoundSummary(round=0, generator=GeneratorResult(wall_seconds=10.0, steps=3),
                           relabel=RelabelResult(wall_seconds=100.0, steps=300, seconds=70.0, curve_seconds=6.0),
                           answerer=AnswererResult(wall_seconds=20.0, curve_seconds=4.0, steps=6))]
    assert rounds[0].relabel is not None and rounds[0].relabel.sft_compute() == (300, 70.0)
    assert {"sft_steps": 300, "sft_seconds": 70.0}.items() <= rounds[0].relabel.to_dict().items()  # older readers
    # generator 10 s -> 50; relabelling: its 300 steps, then 100 - 6 (the dev curve) - 70 (its SFT) = 24 s -> 120;
    # GRPO 20 - 4 = 16 s -> 80
    assert budget_steps(rounds, warm) == (300 + 50 + 120 + 80, 10.0 + 94.0 + 16.0)

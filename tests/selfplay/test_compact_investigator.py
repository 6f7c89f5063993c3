"""The compact rendering and short action syntax reach multi-turn training and evaluation."""

from __future__ import annotations

import json

import pytest

from osint_gym import chat
from osint_gym.compact import parse_compact
from osint_gym.tasks import verified
from osint_selfplay import data
from osint_selfplay.artifacts import read_jsonl
from osint_selfplay.config import load_config
from osint_selfplay.worlds import WorldPool

from .conftest import micro_overrides

_OVERRIDES = {
    "answerer.mode": "'multi_turn'", "episode.max_steps": 8, "episode.max_observation_chars": 1200,
    "episode.observation_format": "'compact'", "episode.action_format": "'short'",
    "answerer.tasks_per_round": 6, "answerer.generated_share": 0.0, "answerer.seed_difficulties": "['easy', 'medium']",
    "warm_start.answerer_examples": 12}


def _cfg(tmp_path):
    return load_config(None, micro_overrides(tmp_path, **_OVERRIDES))


def test_demonstrations_are_compact_observations_and_short_actions(tmp_path):
    cfg = _cfg(tmp_path)
    rows, counts = data.sft_multi_turn_rows(WorldPool(cfg.train_worlds, cfg.seed), cfg)
    assert len(rows) >= 10  # the oracle solves (nearly) every easy/medium task under these budgets
    for row in rows:
        msgs = row["messages"]
        assert msgs[0] == chat.system_message(short=True)
        actions = [m["content"] for m in msgs if m["role"] == "assistant"]
        assert not any(a.lstrip().startswith("{") for a in actions)  # short syntax, not JSON
        assert actions[-1].splitlines()[-1].startswith("answer ")
        for m in msgs[2:]:
            if m["role"] == "user":  # observations: compact lines that parse back into records
                assert m["content"].startswith("step ") and len(m["content"]) <= 1200
                parse_compact(m["content"])


def test_renamed_demonstrations_change_only_the_made_up_words_and_consistently(tmp_path):
    """warm_start.rename_words: the same demonstrations, each made-up two-syllable word (organisation
    and event names) replaced by one word throughout the episode; everything else byte for byte."""
    import re

    from osint_gym.world.names import two_syllable_words

    cfg = _cfg(tmp_path)
    pool = WorldPool(cfg.train_worlds, cfg.seed)
    plain, counts = data.sft_multi_turn_rows(pool, cfg)
    renamed, counts_renamed = data.sft_multi_turn_rows(pool, load_config(None, micro_overrides(tmp_path, **{
        **_OVERRIDES, "warm_start.rename_words": "true"})))
    assert counts.renamed is None and len(renamed) == len(plain)
    words, changed, episodes_changed = two_syllable_words(), 0, 0
    word = re.compile(r"[A-Za-z]+")
    for a, b in zip(plain, renamed):
        mapping: dict[str, str] = {}
        for ma, mb in zip(a["messages"], b["messages"]):
            assert ma["role"] == mb["role"]
            wa, wb = word.findall(ma["content"]), word.findall(mb["content"])
            assert word.sub("", ma["content"]) == word.sub("", mb["content"])  # ids' digits, punctuation, layout
            assert len(wa) == len(wb)
            for x, y in zip(wa, wb):
                if x in words:
                    assert y in words and mapping.setdefault(x, y) == y  # one word, renamed the same throughout
                else:
                    assert x == y
        assert len(set(mapping.values())) == len(mapping)  # no two words merged into one
        assert all(x != y for x, y in mapping.items())  # each one renamed
        changed += len(mapping)
        episodes_changed += bool(mapping)
    assert changed >= len(plain)  # organisations and events are named often (12 words in these 12 episodes)
    assert counts_renamed.renamed == episodes_changed > 0  # counted: the episodes whose words were renamed


def test_demonstrations_do_not_depend_on_the_number_of_worker_processes(tmp_path):
    """warm_start.workers: two spawned processes share the items; the rows (renamed words included)
    and the counts are those of one process, in the same order."""
    over = {**_OVERRIDES, "warm_start.rename_words": "true", "warm_start.answerer_examples": 9}
    cfg1 = load_config(None, micro_overrides(tmp_path, **over))
    cfg2 = load_config(None, micro_overrides(tmp_path, **{**over, "warm_start.workers": 2}))
    pool = WorldPool(cfg1.train_worlds, cfg1.seed)
    one, counts1 = data.sft_multi_turn_rows(pool, cfg1)
    two, counts2 = data.sft_multi_turn_rows(pool, cfg2)
    assert counts1 == counts2 and counts1.episodes == 9 and (counts1.renamed or 0) > 0
    assert len(one) >= 8 and one == two


def test_rename_made_up_words_is_seeded_and_avoids_words_already_present():
    import random
    import re

    from osint_gym.world.names import rename_made_up_words, two_syllable_words

    texts = [
        "Who attended Palzel Media Forum 2022 at Zelbor Studio?",
        'event event_0 name=" Palzel Media Forum 2022"\norganization org_4 name=" Zelbor Studio" Malmo Selin Ralven',
    ]
    out = rename_made_up_words(texts, random.Random(3))
    assert out == rename_made_up_words(texts, random.Random(3)) != rename_made_up_words(texts, random.Random(4))
    before, after = (re.findall(r"[A-Za-z]+", "\n".join(t)) for t in (texts, out))
    pairs = {(x, y) for x, y in zip(before, after) if x != y}
    assert {x for x, _ in pairs} == {"Palzel", "Zelbor", "Ralven"}  # the made-up words, nothing else
    new = {y for _, y in pairs}
    assert len(pairs) == len(new) == 3 and new <= two_syllable_words() and not new & {"Palzel", "Zelbor", "Ralven"}
    assert rename_made_up_words(["no names here, person_3"], random.Random(0)) == ["no names here, person_3"]


def test_round_rows_are_verified_under_the_compact_budget(tmp_path):
    cfg = _cfg(tmp_path)
    pool = WorldPool(cfg.train_worlds, cfg.seed)
    rows, counts = data.mix_answerer_rows(pool, cfg, [], 0)
    assert counts.rows == len(rows) >= 5 and counts.unsolvable_under_budget + len(rows) <= 6
    budgets = cfg.budgets()
    assert budgets.observation_format == "compact" and budgets.max_observation_chars == 1200
    for row in rows:
        task = json.loads(row["task"])
        assert row["prompt"][0] == chat.system_message(short=True)
        assert json.loads(task["stamp"])["budgets"]["observation_format"] == "compact"
        world = pool.world(row["world_seed"])
        from osint_gym.tasks import Task

        t = Task.from_dict(task)
        assert verified(world, t, budgets) is t  # the stamp covers the served budgets: nothing re-verified


def test_a_bare_prompt_is_the_question_alone_in_demonstrations_and_round_rows(tmp_path):
    from osint_gym.tasks import Task

    cfg = load_config(
        None,
        micro_overrides(
            tmp_path,
            **{
                "answerer.mode": "'multi_turn'",
                "episode.max_observation_chars": 1200,
                "episode.observation_format": "'compact'",
                "episode.action_format": "'short'",
                "episode.describe_tools": "false",
                "answerer.tasks_per_round": 6,
                "answerer.generated_share": 0.0,
                "warm_start.answerer_examples": 8,
            },
        ),
    )
    pool = WorldPool(cfg.train_worlds, cfg.seed)
    demos, counts = data.sft_multi_turn_rows(pool, cfg)
    rows, _ = data.mix_answerer_rows(pool, cfg, [], 0)
    assert len(demos) >= 6 and len(rows) >= 5
    for msgs in [d["messages"] for d in demos] + [r["prompt"] for r in rows]:
        assert msgs[0]["role"] == "user" and "\n" not in msgs[0]["content"] and "get_profile(" not in msgs[0]["content"]
        assert all(m["role"] != "system" for m in msgs)
    for row in rows:
        assert row["prompt"] == [{"role": "user", "content": Task.from_dict(json.loads(row["task"])).question}]


@pytest.mark.slow
def test_the_main_jobs_shape_runs_end_to_end_then_its_controls(tmp_path, monkeypatch, capsys):
    """A micro version of configs/selfplay/tiny-cpu.toml: packed warm start on demonstrator episodes,
    one round with the env in the loop, the paired multi-turn evaluation; then `osint-selfplay controls`
    (hatch run train-controls): the equal-compute and uniform-task controls join that evaluation."""
    from osint_selfplay.cli import main
    from osint_selfplay.loop import SelfPlayRun

    cfg = load_config(None, micro_overrides(tmp_path / "run", **{
        "answerer.mode": "'multi_turn'", "episode.max_steps": 6, "episode.max_observation_chars": 4000,
        "episode.observation_format": "'compact'", "episode.action_format": "'short'", "answerer.tasks_per_round": 8,
        "episode.describe_tools": "false",
        "canonical_graph_mode": "'choose'", "generator.offer_filters": "true", "generator.max_hops": 2,
        "answerer.frontier": "[0.0, 1.0]", "grpo_generator.max_completion_length": 8, "answerer.seed_candidates": 2,
        "warm_start.answerer_examples": 24, "warm_start.packing": "true", "warm_start.control": "false",
        "warm_start.decay_fraction": 0.5,
        "warm_start.max_length": 768, "warm_start.batch_size": 2, "grpo_answerer.max_completion_length": 64,
        "grpo_answerer.per_device_train_batch_size": 4, "grpo_answerer.num_generations": 2, "eval.max_new_tokens": 24,
        "play.max_new_tokens": 24,
        "eval.difficulties": "[]", "eval.limit": 6, "model_topology": "'shared'"}))
    from osint_selfplay import phases

    # the micro generator rarely writes a valid proposal: sample the first offered path ("P: 1") instead, so
    # generated tasks reach the answerer (osint-gym still resolves, phrases and verifies each one)
    monkeypatch.setattr(phases, "sample_completions", lambda model, prompts, **kw: ["P: 1"] * len(prompts))
    first = SelfPlayRun(cfg).run().to_dict()
    assert (
        "control" not in first and "uniform_control" not in first and "control" not in first["evaluation"]["headline"]
    )
    report_before = json.loads((tmp_path / "run" / "eval" / "report.json").read_text())
    from osint_selfplay.report import format_summary

    assert f"equal-compute control: not in this job; `osint-selfplay controls {tmp_path / 'run'}`" in format_summary(
        first
    )
    saved = tmp_path / "run" / "warm_start" / "shared" / "decay_start.pt"
    saved.rename(tmp_path / "aside.pt")  # without the warm start's decay state the control cannot resume it: one line
    capsys.readouterr()
    assert main(["controls", str(tmp_path / "run")]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(errors) == 1 and errors[0].startswith("osint-selfplay: error: the equal-compute SFT control resumes")
    assert "decay_start.pt is missing" in errors[0] and "train it inside the job (warm_start.control" in errors[0]
    (tmp_path / "aside.pt").rename(saved)
    assert main(["controls", str(tmp_path / "run")]) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    ws, control = summary["warm_start"], summary["control"]
    counts = ws["demonstration_counts"]
    assert (
        counts["episodes"] == 24 and counts["unseen_ids"] == 0 and counts["incorrect"] <= 2
    )  # a 6-step budget cuts a rare one
    assert ws["examples"] == 24 - counts["incorrect"] + cfg.warm_start.generator_examples
    assert ws["packed_rows"] > 0 and ws["steps"] > 0 and ws["stopped_by"] == "epochs"
    rounds_seconds = sum(p["wall_seconds"] for p in summary["rounds"][0].values() if isinstance(p, dict))
    assert control["budget_seconds"] == pytest.approx(rounds_seconds) and control["stopped_by"] == "max_steps"
    # the rounds' seconds in the warm start's own optimizer steps (the rate it trained at on this machine)
    assert control["budget_steps"] == round(rounds_seconds * ws["steps"] / ws["seconds"]) > 0
    # the control resumed the warm start where its decay began (its saved state), not from its decayed end
    assert control["branched_at"]["step"] == ws["decay_start"]["step"] > 0
    # the warm start's decay again, stretched, plus the rounds' steps
    assert control["steps"] == ws["steps"] + control["budget_steps"] - ws["decay_start"]["step"]
    assert control["model"].endswith("control/final_model")
    ev = summary["evaluation"]
    uniform, mix = summary["uniform_control"], summary["rounds"][0]["answerer"]["mix"]
    (arm,) = uniform["rounds"]  # the run's one answerer phase again, on seed tasks only
    assert uniform["model"].endswith("round_000/answerer_uniform/final_model")
    assert arm["start_model"] == summary["rounds"][0]["answerer"]["start_model"]  # the same starting point
    assert arm["mix"]["generated"] == 0 and arm["mix"]["seed"] == 8 and arm["mix"]["top_up"] == mix["wanted_generated"]
    assert arm["steps"] == summary["rounds"][0]["answerer"]["steps"]
    assert {"untrained", "warm_start", "final", "control", "uniform_control", "oracle", "naive-search"} <= set(
        ev["headline"]
    )
    assert {"final vs control", "final vs warm_start", "control vs warm_start", "final vs uniform_control",
            "uniform_control vs warm_start"} <= set(ev["comparisons"])
    report = json.loads((tmp_path / "run" / "eval" / "report.json").read_text())
    for name in report_before["models"]:  # the models evaluated by the job were not run again
        assert report["episodes"][name] == report_before["episodes"][name]
    assert report["tasks"]["fingerprint"] == report_before["tasks"]["fingerprint"]
    assert [e["task_id"] for e in report["episodes"]["uniform_control"]] == [
        e["task_id"] for e in report["episodes"]["final"]
    ]
    assert set(ev["by_difficulty"]["final"]) <= {"easy", "medium", "hard"} and ev["easy_medium"]["difficulties"] == [
        "easy",
        "medium",
    ]
    assert all(h["success"]["n"] == 6 for h in ev["headline"].values())
    rnd = summary["rounds"][0]
    sampled, mix = rnd["sampled"], rnd["answerer"]["mix"]
    assert sampled["proposals"] == 16 and sampled["solve_rate_samples"] == 2
    assert sum(sampled["reasons"].values()) == 16 and sampled["reasons"].get("ok", 0) == sampled["valid"]
    tasks = [
        json.loads(line)
        for line in (tmp_path / "run" / "round_000" / "sampled" / "tasks.jsonl").read_text().splitlines()
    ]
    assert len(tasks) == sampled["valid"] and all(
        json.loads(t["provenance"])["solve_rate"] in (0.0, 0.5, 1.0) for t in tasks
    )
    assert mix["valid_generated"] == sampled["valid"] and mix["outside_frontier"] == 0 and mix["frontier"] == [0.0, 1.0]
    assert sampled["valid"] >= 4 and mix["generated"] == 4 and mix["generated"] + mix["seed"] == 8
    dyn = mix["dynamic_sampling"]  # the current answerer played 2 candidates per seed task, 2 samples each
    assert dyn["candidates"] == 2 * mix["seed"] == 8 and dyn["all_solved"] + dyn["none_solved"] <= 8
    assert dyn["replaced"] <= mix["seed"] and sum(dyn["kept_difficulties"].values()) == mix["seed"]
    assert arm["mix"]["dynamic_sampling"]["candidates"] == 16
    phase_dir = tmp_path / "run" / "round_000" / "answerer"
    seeds = [r for r in read_jsonl(phase_dir / "tasks.jsonl") if r["source"] == "seed"]
    assert len(seeds) == mix["seed"] and json.loads((phase_dir / "mix.json").read_text()) == mix
    zero = rnd["answerer"]["zero_variance_by_source"]
    assert sum(z["groups"] for z in zero.values()) >= 1 and set(zero) <= {"generated", "seed"}
    text = format_summary(summary)
    assert "equal-compute control: " in text and "not in this job" not in text and "final vs control: success" in text
    assert (
        f"from the warm start's step {ws['decay_start']['step']} (" in text
        and "its schedule stretched by the rounds'" in text
    )
    assert (
        "uniform-task control: every round's answerer phase again" in text
        and "final vs uniform_control: success" in text
    )
    assert "strongest scripted baseline" in text
    assert "dynamic sampling of seed tasks: 8 candidates played" in text
    assert (
        "zero-variance answerer groups:" in text and "frontier band [0.0, 1.0]" in text
        and "(the frozen answerer's 2 episodes per distinct task)" in text
    )

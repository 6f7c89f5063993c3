"""The compact observation format: every record type round-trips the facts the edges and the oracle
read, cuts keep whole lines, and the parser never crashes."""

from __future__ import annotations

import hashlib
import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from osint_gym.compact import (
    FORMAT_VERSION,
    RECORD_TYPES,
    CompactError,
    fit_compact,
    fit_compact_cut,
    parse_compact,
    record_line,
    reset_text,
)
from osint_gym.tools import TOOLS, Notes, tool_schemas
from osint_gym.views import platforms_in, record_edges, records_in
from osint_gym.world.loaders import load_metaqa_kb

from .test_loaders import EXCERPT

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))


def _call(world, name, **args):
    return {"call": name, "ok": True, "result": TOOLS[name](world, Notes(), args).data}


def _osint_calls(world):
    """One real tool result per record type and per listing shape, from the default world."""
    person = next(p for p in world.ids("person") if world.neighbors(p, "knows", "out"))
    account = next(a for a in world.ids("account") if world.neighbors(a, "authored", "out")
                   and world.neighbors(a, "mentions", "in") and world.neighbors(a, "commented_on", "out"))
    post = next(p for p in world.ids("post") if world.neighbors(p, "mentions", "out"))
    thread = next(t for t in world.ids("thread") if world.entity(t)["comments"])
    org, loc, event = world.ids("organization")[0], world.ids("location")[0], world.ids("event")[0]
    return {
        "person": _call(world, "get_profile", handle_or_id=person),
        "account": _call(world, "get_profile", handle_or_id=account),
        "organization": _call(world, "get_profile", handle_or_id=org),
        "location": _call(world, "get_profile", handle_or_id=loc),
        "event": _call(world, "get_profile", handle_or_id=event),
        "post": _call(world, "get_post", post_id=post),
        "thread": _call(world, "get_thread", thread_id=thread),
        "activity": _call(world, "get_user_activity", account=account, limit=20),
        "connections (person)": _call(world, "get_connections", person_or_account=person),
        "connections (account)": _call(world, "get_connections", person_or_account=account),
        "search_people": _call(world, "search_people", organization=org, limit=5),
        "search_posts": _call(world, "search_posts", query=event, limit=5),
        "search_threads": _call(world, "search_threads", query=event, limit=5),
        "get_user_posts": _call(world, "get_user_posts", account=account, limit=5),
        "get_mentions": _call(world, "get_mentions", account=account, limit=5),
        "search_notes": {
            "call": "search_notes",
            "ok": True,
            "result": {
                "query": "x",
                "total": 2,
                "results": [TOOLS["get_profile"](world, Notes(), {"handle_or_id": i}).data for i in (person, account)],
            },
        },
    }


def _facts(data):
    """What `record_edges` and the oracle read out of a tool result."""
    records = records_in(data)
    return {
        "ids": [(r["id"], r["type"]) for r in records],
        "edges": [record_edges(r) for r in records],
        "attributes": [{k: r.get(k) for k in ("display_name", "platform", "name", "handle", "date", "title", "text")}
                       for r in records],
        "platforms": platforms_in(data),
        "total": data.get("total") if isinstance(data, dict) else None,
    }


def _roundtrip(entry):
    text = fit_compact({"step": 3, "steps_left": 5, "results": [entry]}, 100_000)
    back = parse_compact(text)
    assert back["step"] == 3 and back["steps_left"] == 5 and len(back["results"]) == 1
    assert back["results"][0]["call"] == entry["call"] and back["results"][0]["ok"]
    return text, back["results"][0]["result"]


def test_every_osint_record_type_round_trips_its_edges_ids_and_attributes(world):
    calls = _osint_calls(world)
    for label, entry in calls.items():
        text, result = _roundtrip(entry)
        want = _facts(entry["result"])
        assert want["ids"], label
        assert _facts(result) == want, label
    assert sum(len(e) for f in map(_facts, (c["result"] for c in calls.values())) for e in f["edges"]) > 50
    seen = {t for entry in calls.values() for _, t in _facts(entry["result"])["ids"]}
    assert seen == {
        "person",
        "account",
        "organization",
        "location",
        "event",
        "post",
        "thread",
        "activity",
        "connections",
    }


def test_knowledge_graph_entity_pages_round_trip_their_facts_both_ways():
    kb = load_metaqa_kb(EXCERPT)
    film = next(e for e in kb.ids("entity") if " " in e and any(d == "out" for _, d, _ in kb.relations_of(e)))
    for entry in (_call(kb, "get_profile", handle_or_id=film),
                  _call(kb, "get_connections", person_or_account=film, relation="directed_by")):
        text, result = _roundtrip(entry)
        assert result["facts"] == entry["result"]["facts"]
        assert record_edges(result) == record_edges(entry["result"]) and record_edges(result)
    director = next(o for r, d, o in kb.relations_of(film) if r == "directed_by")
    text, result = _roundtrip(_call(kb, "get_profile", handle_or_id=director))
    assert any(k.endswith(" (inverse)") for k in result["facts"]) and '-directed_by= "' in text
    assert (film, "directed_by", director) in record_edges(result)


def test_the_line_grammar_ids_only_and_a_space_before_every_id_and_name(world):
    person = next(
        p for p in world.ids("person") if world.neighbors(p, "works_at", "out") and world.neighbors(p, "alias_of", "in")
    )
    page = TOOLS["get_profile"](world, Notes(), {"handle_or_id": person}).data
    line = record_line(page)[0]
    org = page["employer"]["id"]
    assert line.startswith(f'person {person} name=" {page["name"]}" employer= {org} city= {page["city"]["id"]}')
    for acc in page["accounts"]:
        # references: ids (and platform) only, the platform first so that a causal reader meets it before the id
        assert f" {acc['platform']}: {acc['id']}" in line and acc["handle"] not in line
    assert world.label(org) not in line
    assert "\n" not in line and "{" not in line


def test_every_id_and_handle_follows_a_space(world):
    import re

    text = "\n".join(
        fit_compact({"step": 1, "steps_left": 1, "results": [c]}, 10**6) for c in _osint_calls(world).values()
    )
    ids = re.findall(r"(.)(?:person|account|org|loc|event|post|thread)_\d+", text)
    handles = re.findall(r"(.)@[a-z]", text)
    assert len(ids) > 100 and set(ids) == {" "}
    assert handles and set(handles) == {" "}


def test_errors_and_headers_are_single_lines_and_read_back():
    obs = {"step": 2, "steps_left": 6, "results": [
        {"call": "get_profile", "ok": False, "error": "no entity matches\nhandle_or_id='x'"},
        {"call": "add_edge", "ok": True, "result": "added"}], "answer_submitted": True}
    text = fit_compact(obs, 1000)
    assert text.split("\n") == ["step 2/8", "get_profile error: no entity matches handle_or_id='x'", "add_edge ok",
                                "answer submitted"]
    back = parse_compact(text)
    assert back["results"][1] == {"call": "add_edge", "ok": True, "result": "added"} and back["answer_submitted"]
    rejected = fit_compact({"step": 1, "steps_left": 7, "error": "unknown tool 'x'"}, 1000)
    assert rejected == "step 1/8\nerror: unknown tool 'x'" and parse_compact(rejected)["error"] == "unknown tool 'x'"


@pytest.mark.parametrize("max_chars", [256, 400, 700, 1200])
def test_a_cut_drops_whole_trailing_record_lines_and_says_how_many(world, max_chars):
    entry = _call(world, "search_posts", query=world.ids("event")[0], limit=20)
    obs = {"step": 1, "steps_left": 7, "results": [entry, {"call": "add_edge", "ok": True, "result": "added"}]}
    full = fit_compact(obs, 10**6).split("\n")
    text, cut = fit_compact_cut(obs, max_chars)
    assert cut and len(text) <= max_chars
    lines = text.split("\n")
    dropped = int(lines[-1].split()[1])
    assert lines[-1] == f"truncated: {dropped} lines dropped to fit {max_chars} characters"
    kept = lines[:-1]
    assert set(kept) <= set(full) and len(kept) + dropped == len(full)
    assert kept[:2] == full[:2]  # the header and the call line stay; records go from the end
    assert "add_edge ok" in kept  # a call line outlives every record line
    back = parse_compact(text)
    records = back["results"][0]["result"]["results"]
    assert [r["id"] for r in records] == [r["id"] for r in entry["result"]["results"]][: len(records)]
    assert back["truncated"].startswith(f"{dropped} lines")


def test_a_cut_shortens_the_longest_listing_first(world):
    search = _call(world, "search_posts", query=world.ids("event")[0], limit=20)
    profile = _call(world, "get_profile", handle_or_id=world.ids("person")[0])
    obs = {"step": 1, "steps_left": 7, "results": [search, profile]}
    text, cut = fit_compact_cut(obs, 900)
    back = parse_compact(text)["results"]
    assert cut and len(text) <= 900
    assert back[1]["result"]["id"] == profile["result"]["id"]  # the single record outlives the long search
    assert 0 < len(back[0]["result"]["results"]) < len(search["result"]["results"])
    assert back[0]["result"]["total"] == search["result"]["total"]  # the listing still says how many there are


def test_an_observation_that_fits_is_not_cut(world):
    obs = {"step": 1, "steps_left": 7, "results": [_call(world, "get_profile", handle_or_id=world.ids("person")[0])]}
    text, cut = fit_compact_cut(obs, 16_384)
    assert not cut and "truncated" not in text


def test_compact_is_several_times_shorter_than_json(world):
    calls = _osint_calls(world)
    compact = sum(len(fit_compact({"step": 1, "steps_left": 1, "results": [c]}, 10**6)) for c in calls.values())
    as_json = sum(
        len(json.dumps({"step": 1, "steps_left": 1, "results": [c]}, separators=(",", ":"))) for c in calls.values()
    )
    assert compact * 2 < as_json


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "hello",
        "step x/3",
        "step 1/3\nget_profile ok\nperson person_1 =oops",
        'step 1/3\nget_profile ok\nperson person_1 name="unterminated',
        "step 1/3\ncomment author= account_1",
        "step 1/3\nperson person_1",
        "step 1/3\nget_profile ok\nperson person_1 orphan",
        "step 1/3\nget_profile ok\nperson",
        "step 1/3\nget_profile ok\nperson person_1 name= a b",
        "step 1/3\nperson_1 type=person",
        "step 1/3\nget_profile ok\nperson person_1 accounts= forum:",
        "step 1/3\nget_profile ok\nperson person_1 accounts= forum: city= loc_1",
        "step 1/3\nget_profile ok\nperson person_1 accounts= account_1:forum",
    ],
)
def test_malformed_compact_text_is_a_typed_error_that_names_the_line(bad):
    with pytest.raises(CompactError, match="line"):
        parse_compact(bad)


@FUZZ
@given(
    text=st.text(max_size=300)
    | st.builds(lambda a, b: f"step 1/4\n{a}\n{b}", st.text(max_size=120), st.text(max_size=120))
)
def test_parse_compact_raises_only_its_typed_error(text):
    t0 = time.perf_counter()
    try:
        out = parse_compact(text)
    except CompactError as exc:
        assert str(exc)
    else:
        assert isinstance(out, dict) and isinstance(out["step"], int)
    assert time.perf_counter() - t0 < 0.25


@FUZZ
@given(value=st.text(max_size=40), key=st.sampled_from(["name", "text", "handle", "bio"]))
def test_any_string_value_round_trips(value, key):
    record = {"id": "person_1", "type": "account", key: value}
    text = fit_compact(
        {"step": 1, "steps_left": 1, "results": [{"call": "get_profile", "ok": True, "result": record}]}, 10**6
    )
    back = parse_compact(text)["results"][0]["result"]
    assert back.get(key, "") == value or (value == "" and key not in back)


def _outside_records(text: str) -> str:
    """A compact observation without what tools returned: record and comment lines, and a listing's own fields."""
    kept = []
    for line in text.split("\n"):
        words = line.split(" ")
        if words[0] in RECORD_TYPES:
            continue
        if words[0] == "comment":
            continue
        kept.append(" ".join(words[:2]) if len(words) > 1 and words[1] == "ok" else line)
    return "\n".join(kept)


def test_no_leak_in_the_compact_rendering_before_answering():
    import re

    import numpy as np

    from osint_gym.env import OSINTEnv
    from osint_gym.tasks import names_entity

    from .test_leakage import COMBOS, _secrets

    env = OSINTEnv(seed=0, observation_format="compact")
    rng = np.random.default_rng(1)
    id_pattern = re.compile(r"\b(?:person|account|org|loc|event|post|thread)_\d+\b")
    tools = ["get_profile", "search_posts", "get_connections", "get_user_posts", "search_notes"]
    checked = 0
    for ep in range(400):
        family, difficulty = COMBOS[ep % len(COMBOS)]
        obs, _ = env.reset(seed=ep, options={"family": family, "difficulty": difficulty})
        secrets = _secrets(env.task)
        assert not any(names_entity(env.world, obs, s) for s in secrets), env.task.task_id
        seen = env.world.ids("person")[:20]
        for _ in range(5):
            refs = " ".join(str(seen[rng.integers(len(seen))]) for _ in range(int(rng.integers(1, 3))))
            action = f"{tools[rng.integers(len(tools))]} {refs}"
            obs, _, terminated, truncated, _ = env.step(action)
            seen = id_pattern.findall(obs) or seen
            visible = _outside_records(obs)
            for secret in secrets:
                if secret in visible:
                    assert secret in action, (env.task.task_id, secret, visible[:300])  # only the agent's own echo
            checked += 1
            if terminated or truncated:
                break
    assert checked >= 1500


@pytest.mark.parametrize("observation_format", ["json", "compact"])
def test_without_the_tool_description_the_reset_observation_is_the_question(observation_format):
    from osint_gym.env import OSINTEnv

    full = OSINTEnv(seed=0, observation_format=observation_format)
    bare = OSINTEnv(seed=0, observation_format=observation_format, describe_tools=False)
    obs_full, info_full = full.reset(seed=3)
    obs_bare, info_bare = bare.reset(seed=3)
    assert obs_bare == bare.task.question == full.task.question
    assert obs_full.startswith(obs_bare + "\n") and "get_profile" in obs_full and "get_profile" not in obs_bare
    assert info_bare["tools"] == info_full["tools"]  # the schemas stay in the info for agents that want them
    assert (
        bare.step("get_profile " + bare.task.question.split()[-1])[0]
        == full.step("get_profile " + full.task.question.split()[-1])[0]
    )


def test_describe_tools_must_be_a_bool():
    from osint_gym.env import OSINTEnv
    from osint_gym.errors import ConfigError

    with pytest.raises(ConfigError, match="describe_tools must be true or false"):
        OSINTEnv(seed=0, describe_tools="no")


# FORMAT_VERSION -> the digest of `_sample_renderings` it writes (osint-eval's tokenizer corpus version derives
# from the version, so a cached tiny model is rebuilt when the format changes)
RENDERINGS = {1: "30ffb41f92f0bc55"}


def _sample_renderings(world) -> str:
    calls = list(_osint_calls(world).values())
    texts = [fit_compact({"step": 3, "steps_left": 5, "results": [entry]}, 100_000) for entry in calls]
    texts.append(fit_compact({"step": 4, "steps_left": 4, "results": calls[:4]}, 300))  # a cut
    texts.append(reset_text("compact", "Who knows person_1?", 24, 4, tool_schemas(world), ""))
    return "\n".join(texts)


def test_a_change_of_the_rendering_needs_a_new_format_version(world):
    text = _sample_renderings(world)
    assert "\ntruncated: " in text and "\nsteps 24, calls per step 4, answer with one id\ntools " in text
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    assert RENDERINGS.get(FORMAT_VERSION) == digest, (
        f"the compact rendering changed (digest {digest}): bump osint_gym.compact.FORMAT_VERSION and pin the "
        "new digest here (if only the default world changed, pin the new digest under the same version)")

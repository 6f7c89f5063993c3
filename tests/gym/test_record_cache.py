"""Records are built once per world and shared read-only: caching must change no output, and no
tool result may change what later calls return."""

from __future__ import annotations

import copy
import json
import pickle
import random

import pytest

from osint_gym import text, views
from osint_gym.env import OSINTEnv
from osint_gym.frozen import freeze, thaw
from osint_gym.tasks import TaskSampler
from osint_gym.text import _encode_whole, fit_json
from osint_gym.tools import Notes, tools_for
from osint_gym.world import WorldConfig, generate_world

_ACTIONS = (
    '{"tool":"get_profile","args":{"handle_or_id":"person_%d"}}',
    '{"tool":"get_profile","args":{"handle_or_id":"account_%d"}}',
    '{"tool":"get_profile","args":{"handle_or_id":"org_%d"}}',
    '{"tool":"get_user_posts","args":{"account":"account_%d","limit":5}}',
    '{"tool":"get_mentions","args":{"account":"account_%d"}}',
    '{"tool":"get_user_activity","args":{"account":"account_%d","limit":3}}',
    '{"tool":"get_connections","args":{"person_or_account":"person_%d"}}',
    '{"tool":"get_connections","args":{"person_or_account":"account_%d"}}',
    '{"tool":"search_posts","args":{"query":"account_%d"}}',
    '{"tool":"search_threads","args":{"query":"the"}}',
    '{"tool":"get_thread","args":{"thread_id":"thread_%d"}}',
    '{"tool":"get_post","args":{"post_id":"post_%d"}}',
    '{"tool":"search_people","args":{"name":"a"}}',
    '{"tool":"search_notes","args":{"query":"person"}}',
    '{"add_edge":["account_%d","alias_of","person_3"]}',
    (
        '{"tool_calls":[{"tool":"get_profile","args":{"handle_or_id":"person_%d"}},'
        '{"tool":"get_profile","args":{"handle_or_id":"post_2"}}]}'
    ),
)


class _NoStore(dict):
    """A records store that keeps nothing: every record is built afresh (the uncached path)."""

    def __setitem__(self, key, value) -> None:
        pass


def _uncached(monkeypatch: pytest.MonkeyPatch, world) -> None:
    """Plain, freshly built records on every call: no sharing, no memo, the C encoder on plain dicts."""
    monkeypatch.setattr(views, "freeze", thaw)  # the name views looks up
    monkeypatch.setattr(text, "_encode_in_charset", text._encode_whole)
    world.cache["records"] = _NoStore()


def _trace(world, steps: int, chars: int) -> list:
    env = OSINTEnv(world=world, max_observation_chars=chars)
    rng = random.Random(7)
    obs, _ = env.reset(seed=0)
    trace: list = [obs]
    for i in range(steps):
        action = rng.choice(_ACTIONS)
        obs, reward, terminated, truncated, info = env.step(action.replace("%d", str(rng.randrange(60))))
        trace.append([obs, reward, terminated, truncated, {k: v for k, v in info.items() if k != "tools"}])
        if terminated or truncated:
            trace.append(json.dumps(env.episode().to_dict(), sort_keys=True))
            trace.append(env.reset(seed=i)[0])
    trace.append(json.dumps(env.episode().to_dict(), sort_keys=True))
    return trace


@pytest.mark.parametrize("chars", [16_384, 900])
def test_cached_records_change_no_observation_or_episode_record(monkeypatch: pytest.MonkeyPatch, chars: int) -> None:
    cached = _trace(generate_world(WorldConfig(n_people=150), seed=4), 400, chars)
    world = generate_world(WorldConfig(n_people=150), seed=4)
    _uncached(monkeypatch, world)
    assert _trace(world, 400, chars) == cached
    assert len(cached) > 400 and any('"truncated"' in str(t) for t in cached) == (chars == 900)


def test_cached_records_change_no_verified_task(monkeypatch: pytest.MonkeyPatch) -> None:
    sampler = TaskSampler(generate_world(WorldConfig(n_people=150), seed=4), 3)
    cached = [t.to_dict() for t in sampler.generate(200)]
    world = generate_world(WorldConfig(n_people=150), seed=4)
    _uncached(monkeypatch, world)
    plain = TaskSampler(world, 3)
    assert [t.to_dict() for t in plain.generate(200)] == cached
    assert plain.rejections == sampler.rejections


def test_cached_page_equals_a_fresh_build_for_every_entity_type(world) -> None:
    rng = random.Random(0)
    for etype, ids in world.by_type.items():
        for eid in rng.sample(ids, min(40, len(ids))):
            shared = views.page(world, eid)
            fresh = views._PAGES[etype].__wrapped__(world, eid)
            assert shared == fresh and shared is views.page(world, eid)
            assert shared.json_fragment() == _encode_whole(fresh)
            assert views.record_edges(shared) == views.record_edges(fresh)
            assert views.entities_in(shared) == views.entities_in(fresh)


def test_tool_result_cannot_mutate_the_shared_record(world) -> None:
    tools, notes = tools_for(world), Notes()
    data = tools["get_profile"](world, notes, {"handle_or_id": "person_3"}).data
    before = json.dumps(data)
    with pytest.raises(TypeError, match="read-only"):
        data["name"] = "someone else"
    with pytest.raises(TypeError, match="read-only"):
        data["accounts"].append({"id": "account_0"})
    with pytest.raises(TypeError, match="read-only"):
        data.update(name="x")
    with pytest.raises(TypeError, match="read-only"):
        data["events"][:0] = [{"id": "event_0"}]
    posts = tools["get_user_posts"](world, notes, {"account": "account_1", "limit": 3}).data
    with pytest.raises(TypeError, match="read-only"):
        posts["posts"].pop()
    assert json.dumps(tools["get_profile"](world, Notes(), {"handle_or_id": "person_3"}).data) == before


def test_copies_of_a_shared_record_are_plain_and_mutable(world) -> None:
    record = views.page(world, "person_3")
    for copied in (copy.deepcopy(record), pickle.loads(pickle.dumps(record)), thaw(record)):
        assert copied == record and type(copied) is dict and type(copied["accounts"]) is list
        copied["name"] = "changed"
        copied["accounts"].append({"id": "x"})
    assert record["name"] != "changed" and {"id": "x"} not in record["accounts"]


def test_observation_encoding_is_the_json_encoding_within_the_charset() -> None:
    frozen = freeze(
        {"id": "post_1", "type": "post", "text": "caf\u00e9 \u4e2d \U0001f600 \x07", "tags": [1, None, True]}
    )
    obs = {"step": 1, "steps_left": 3, "results": [{"call": "get_post", "ok": True, "result": frozen},
                                                   {"call": "x", "ok": False, "error": "bad \u2603", "n": 1.5}]}
    text = fit_json(obs, 16_384)
    assert text == _encode_whole(thaw(obs))
    assert json.loads(text) == thaw(obs) and "\\u4e2d" in text and "\u00e9" in text


def test_the_record_cache_is_bounded_and_rebuilds_identically(monkeypatch: pytest.MonkeyPatch) -> None:
    world = generate_world(WorldConfig(n_people=60), seed=2)
    monkeypatch.setattr(views, "MAX_CACHED_RECORDS", 10)
    people = world.ids("person")[:30]
    first = [json.dumps(views.page(world, p)) for p in people]
    assert len(world.cache["records"]) <= 10
    assert [json.dumps(views.page(world, p)) for p in people] == first

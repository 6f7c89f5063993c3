from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter

import pytest

from osint_gym.errors import ConfigError, UnknownEntityError
from osint_gym.world import WorldConfig, generate_world
from osint_gym.world.graph import World


def test_same_seed_gives_identical_world_and_other_seed_differs():
    a = generate_world(WorldConfig(n_people=80), seed=3)
    b = generate_world(WorldConfig(n_people=80), seed=3)
    c = generate_world(WorldConfig(n_people=80), seed=4)
    assert a.fingerprint() == b.fingerprint()
    assert a.fingerprint() != c.fingerprint()


def test_world_is_byte_identical_across_hash_seeds():
    code = (
        "from osint_gym.world import generate_world, WorldConfig; "
        "print(generate_world(WorldConfig(n_people=150), 7).fingerprint())"
    )
    prints = set()
    for hash_seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        prints.add(
            subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True).stdout
        )
    assert len(prints) == 1


def test_entity_and_relation_inventory(world):
    summary = world.summary()
    for etype in ("person", "account", "organization", "location", "event", "post", "thread"):
        assert summary[etype] > 0, etype
    relations = Counter(rel for _, rel, _ in world.edges())
    for rel in ("alias_of", "works_at", "lives_in", "based_in", "knows", "follows", "authored", "mentions",
                "references", "attended", "held_in", "discusses", "commented_on"):
        assert relations[rel] > 0, rel
    # knows is symmetric and stored both ways
    for u, rel, v in world.edges():
        if rel == "knows":
            assert world.has_edge(v, "knows", u)


def test_every_person_has_an_account_and_alias_density_holds():
    w = generate_world(WorldConfig(n_people=400, alias_density=2.0, decoy_rate=0.0), seed=1)
    owned = [a for a in w.ids("account") if w.neighbors(a, "alias_of", "out")]
    assert all(w.neighbors(p, "alias_of", "in") for p in w.ids("person"))
    assert len(owned) / 400 == pytest.approx(2.0, abs=0.15)


def test_adversarial_knobs_change_the_world():
    noisy = generate_world(
        WorldConfig(n_people=300, decoy_rate=0.2, stale_profile_rate=0.5, name_collision_rate=0.3), seed=2
    )
    clean = generate_world(WorldConfig.clean(n_people=300), seed=2)
    decoys = [a for a in noisy.ids("account") if noisy.entity(a).get("decoy")]
    assert len(decoys) == 60
    assert not [a for a in clean.ids("account") if clean.entity(a).get("decoy")]
    # decoys copy a real person's display name but belong to nobody
    names = {noisy.entity(p)["name"] for p in noisy.ids("person")}
    assert all(noisy.entity(d)["display_name"] in names and not noisy.neighbors(d, "alias_of", "out") for d in decoys)
    stale = sum(bool(noisy.entity(a).get("stale")) for a in noisy.ids("account"))
    assert 0.35 < stale / len(noisy.ids("account")) < 0.6
    assert not any(clean.entity(a).get("stale") for a in clean.ids("account"))

    def collisions(w):
        return sum(c - 1 for c in Counter(w.entity(p)["name"] for p in w.ids("person")).values() if c > 1)

    assert collisions(noisy) > collisions(clean) + 40


def test_rumour_and_misattributed_posts_only_with_noise():
    noisy = generate_world(WorldConfig(n_people=200, noise_level=0.3, misattribution_rate=0.3), seed=0)
    clean = generate_world(WorldConfig.clean(n_people=200), seed=0)

    def kinds(w):
        texts = [w.entity(p)["text"] for p in w.ids("post")]
        return sum(t.startswith("Rumour") for t in texts), sum(t.startswith("Great talk at") for t in texts)

    rumours, misattributed = kinds(noisy)
    assert rumours > 20 and misattributed > 20
    assert kinds(clean) == (0, 0)
    # a misattributed post is about someone else's event: its author's owner did not attend it
    for p in noisy.ids("post"):
        if noisy.entity(p)["text"].startswith("Great talk at"):
            author = noisy.neighbors(p, "authored", "in")[0]
            owner = noisy.neighbors(author, "alias_of", "out")
            event = noisy.neighbors(p, "references", "out")[0]
            mentioned_owner = noisy.neighbors(noisy.neighbors(p, "mentions", "out")[0], "alias_of", "out")[0]
            assert noisy.has_edge(mentioned_owner, "attended", event)
            assert owner and owner[0] != mentioned_owner


def test_indices_resolve_handles_names_and_ids(world):
    account = world.ids("account")[3]
    handle = world.entity(account)["handle"]
    assert world.resolve("@" + handle) == account
    assert world.resolve(handle.upper()) == account
    org = world.ids("organization")[0]
    assert world.resolve(world.entity(org)["name"]) == org
    assert world.resolve("no such thing") is None
    with pytest.raises(UnknownEntityError, match="unknown entity 'nope'"):
        world.entity("nope")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"n_peple": 10}, "did you mean 'n_people'"),
        ({"decoy_rate": 1.5}, r"decoy_rate must be in \[0.0, 1.0\]"),
        ({"n_people": 2}, "n_people must be an integer >= 4"),
        ({"noise_level": "high"}, "noise_level must be a number"),
        ({"alias_density": 0.5}, r"alias_density must be in \[1.0, 6.0\]"),
    ],
)
def test_bad_world_config_names_the_key(data, message):
    with pytest.raises(ConfigError, match=message):
        WorldConfig.from_dict(data)


def test_bad_seed_is_rejected():
    with pytest.raises(ConfigError, match="world seed must be an integer"):
        generate_world(WorldConfig(n_people=10), seed="0")  # type: ignore[arg-type]


def test_world_pickles(world):
    import pickle

    clone = pickle.loads(pickle.dumps(world))
    assert clone.fingerprint() == world.fingerprint()
    assert clone.neighbors("person_0", "works_at", "out") == world.neighbors("person_0", "works_at", "out")


def test_shipped_world_configs_load(tmp_path):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "configs" / "gym"
    assert WorldConfig.from_toml(str(root / "world-default.toml")) == WorldConfig()
    assert WorldConfig.from_toml(str(root / "world-clean.toml")) == WorldConfig.clean()
    hard = WorldConfig.from_toml(str(root / "world-hard.toml"))
    assert hard.n_people == 2000 and hard.decoy_rate == 0.3
    bad = tmp_path / "bad.toml"
    bad.write_text("[world]\nn_people = 10\ndecoy_rat = 0.1\n")
    with pytest.raises(ConfigError, match="did you mean 'decoy_rate'"):
        WorldConfig.from_toml(str(bad))
    bad.write_text("[world\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        WorldConfig.from_toml(str(bad))
    with pytest.raises(ConfigError, match="cannot read world config"):
        WorldConfig.from_toml(str(tmp_path / "missing.toml"))


def test_incident_edges_are_the_canonical_edges_touching_an_entity(world):
    from osint_gym.schema import canonical_edge

    for eid in ("person_3", "account_10", "org_2"):
        expected = {canonical_edge(e) for e in world.edges() if eid in (e.head, e.tail)}
        got = list(world.incident_edges(eid))
        assert set(got) == expected and len(got) == len(expected)  # symmetric relations appear once


def test_a_world_pickled_with_a_plain_kind_string_loads_with_a_world_kind(world):
    from osint_gym.schema import WorldKind

    state = world.__getstate__()
    state["kind"] = "osint"
    clone = World.__new__(World)
    clone.__setstate__(state)
    assert clone.kind is WorldKind.OSINT and clone.kind.directory_filters


def test_generated_words_cover_every_name_title_and_separated_handle(world):
    """Tokenizers for small models make each of these words one token, or, for a made-up
    two-syllable word, its two syllables (osint_eval.modeling.lexicon): a word a world writes that the
    set misses would be copied as arbitrary pieces again."""
    import re

    from osint_gym.benchmark import benchmark_world
    from osint_gym.world.names import generated_words

    title, handle = generated_words()
    assert {"Lina", "Brandt", "Ralven", "Malmo", "Summit", "Rusty", "Open", "Source"} <= title
    assert {"lina", "brandt", "rusty", "heron"} <= handle and "Lina" not in handle
    separated = 0
    for w in (world, benchmark_world("v0:test")):
        for node, attrs in w.graph.nodes(data=True):
            for key in ("name", "display_name"):
                if key in attrs:
                    assert set(re.findall(r"[A-Za-z]+", attrs[key])) <= title, (node, attrs[key])
            h = attrs.get("handle", "")
            if re.search(r"[._]", h) and not attrs.get("decoy"):  # a lookalike decoy ("l1na_brandt_real") is not
                separated += 1
                assert set(re.findall(r"[a-z]+", h)) <= handle, (node, h)
    assert separated > 100

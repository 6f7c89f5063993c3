"""Procedural world generation: ``generate_world(config, seed)`` is a pure function of both.

Determinism: every random choice comes from one ``random.Random(seed)`` and every collection
that is iterated is a list or an insertion-ordered dict (never a set of strings, whose order
depends on PYTHONHASHSEED).
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

import networkx as nx

from osint_gym.schema import FORUM, MICROBLOG, PLATFORMS, EntityType, WorldKind, entity_id
from osint_gym.world import names as N
from osint_gym.world.config import WorldConfig, check_seed
from osint_gym.world.graph import World
from osint_gym.world.near_miss import (
    FORMER,
    BasePeople,
    NearMiss,
    decoy_count,
    mutual_acquaintances,
    past,
    plan_near_misses,
    shuffle_people,
)


def _count(rng: random.Random, mean: float) -> int:
    """An integer with the given mean: floor or ceil, mixed (cheaper than a Poisson draw)."""
    base = int(mean)
    return base + (1 if rng.random() < mean - base else 0)


def _date(rng: random.Random, year_lo: int = 2019, year_hi: int = 2025) -> str:
    return f"{rng.randint(year_lo, year_hi)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


class _Builder:
    def __init__(self, config: WorldConfig, seed: int) -> None:
        self.cfg = config
        self.rng = random.Random(seed)
        self.nodes: list[tuple[str, dict[str, Any]]] = []
        self.edges: list[tuple[str, str, str]] = []  # (head, tail, relation) as networkx wants

    def node(self, node_id: str, etype: str, **attrs: Any) -> str:
        attrs["type"] = etype
        self.nodes.append((node_id, attrs))
        return node_id

    def edge(self, head: str, relation: str, tail: str) -> None:
        self.edges.append((head, tail, relation))

    # ------------------------------------------------------------------ stages
    def places_orgs_events(self) -> None:
        cfg, rng = self.cfg, self.rng
        n = cfg.n_people
        namer = N.UniqueNamer()
        cities = list(N.CITIES)
        rng.shuffle(cities)
        self.locs: list[str] = []
        self.loc_name: dict[str, str] = {}
        for i in range(max(3, round(n / cfg.people_per_location))):
            base = cities[i] if i < len(cities) else N.syllable_word(rng, 3)
            name = namer.take(base, rng)
            country = N.COUNTRIES.get(base, "Freeland")
            lid = self.node(entity_id(EntityType.LOCATION, i), "location", name=name, country=country)
            self.locs.append(lid)
            self.loc_name[lid] = name
        self.orgs: list[str] = []
        self.org_name: dict[str, str] = {}
        self.org_loc: dict[str, str] = {}
        for i in range(max(3, round(n / cfg.people_per_org))):
            name = namer.take(f"{N.syllable_word(rng)} {rng.choice(N.ORG_KINDS)}", rng)
            industry = rng.choice(N.INDUSTRIES)
            oid = self.node(entity_id(EntityType.ORGANIZATION, i), "organization", name=name, industry=industry)
            loc = rng.choice(self.locs)
            self.edge(oid, "based_in", loc)
            self.orgs.append(oid)
            self.org_name[oid] = name
            self.org_loc[oid] = loc
        self.events: list[str] = []
        self.event_name: dict[str, str] = {}
        self.events_by_loc: dict[str, list[str]] = defaultdict(list)
        for i in range(max(3, round(n / cfg.people_per_event))):
            loc = rng.choice(self.locs)
            year = rng.randint(2019, 2025)
            # Event names carry a brand, not the host city: a city in the name would leak
            # the answer of every "where was this held" question.
            base = f"{N.syllable_word(rng)} {rng.choice(N.EVENT_TOPICS)} {rng.choice(N.EVENT_KINDS)} {year}"
            name = namer.take(base, rng, suffixes=(" II", " III", " Spring", " Autumn"))
            eid = self.node(entity_id(EntityType.EVENT, i), "event", name=name, date=_date(rng, year, year))
            self.edge(eid, "held_in", loc)
            self.events.append(eid)
            self.event_name[eid] = name
            self.events_by_loc[loc].append(eid)

    def people(self) -> None:
        cfg, rng = self.cfg, self.rng
        self.persons: list[str] = []
        self.person_name: dict[str, tuple[str, str]] = {}
        self.employer: dict[str, str] = {}
        self.home: dict[str, str] = {}
        self.attended: dict[str, list[str]] = {}
        self.by_org: dict[str, list[str]] = defaultdict(list)
        self.by_loc: dict[str, list[str]] = defaultdict(list)
        self.attendees: dict[str, list[str]] = defaultdict(list)
        # the near-miss decoys are people too, planted after the acquaintances (`near_misses`)
        for i in range(cfg.n_people - decoy_count(cfg.n_people, cfg.decoy_density)):
            pid = entity_id(EntityType.PERSON, i)
            first, last = self._name()
            org = rng.choice(self.orgs)
            loc = self.org_loc[org] if rng.random() < 0.6 else rng.choice(self.locs)
            self.node(pid, "person", name=f"{first} {last}", born=rng.randint(1955, 2003))
            self.edge(pid, "works_at", org)
            self.edge(pid, "lives_in", loc)
            events: list[str] = []
            for _ in range(min(5, _count(rng, cfg.events_per_person))):
                local = self.events_by_loc.get(loc)
                ev = rng.choice(local) if local and rng.random() < 0.5 else rng.choice(self.events)
                if ev not in events:
                    events.append(ev)
                    self.edge(pid, "attended", ev)
            self._person(pid, first, last, org, loc, events)

    def _name(self) -> tuple[str, str]:
        rng = self.rng
        if self.persons and rng.random() < self.cfg.name_collision_rate:
            return self.person_name[rng.choice(self.persons)]
        return rng.choice(N.FIRST_NAMES), rng.choice(N.LAST_NAMES)

    def _person(self, pid: str, first: str, last: str, org: str, loc: str, events: list[str]) -> None:
        """Record a person whose node and edges are added (the tables later stages read)."""
        for ev in events:
            self.attendees[ev].append(pid)
        self.persons.append(pid)
        self.person_name[pid] = (first, last)
        self.employer[pid], self.home[pid], self.attended[pid] = org, loc, events
        self.by_org[org].append(pid)
        self.by_loc[loc].append(pid)

    def near_misses(self) -> None:
        """Plant the near-miss decoys (`osint_gym.world.near_miss`) as people with their facts and acquaintances."""
        n_decoys = decoy_count(self.cfg.n_people, self.cfg.decoy_density)
        if not n_decoys:
            return  # no draw at all: a world without decoys is the one generated before the knob
        base = BasePeople(list(self.persons), self.employer, self.home, self.attended, self.knows, self.orgs,
                          self.locs, self.events)
        planted = plan_near_misses(self.rng, base, n_decoys)
        for pid in base.persons:
            self._past(pid, past(self.rng, base, self.employer[pid], self.home[pid], self.attended[pid], {}))
        first = len(self.persons)
        for near in planted:
            self._near_miss(entity_id(EntityType.PERSON, len(self.persons)), near, base)
        for i, j in mutual_acquaintances(planted):
            self._knows(entity_id(EntityType.PERSON, first + i), entity_id(EntityType.PERSON, first + j))

    def _past(self, pid: str, facts: dict[str, str]) -> None:
        for kind, entity in facts.items():
            self.edge(pid, FORMER[kind], entity)

    def _near_miss(self, pid: str, near: NearMiss, base: BasePeople) -> None:
        first, last = self._name()
        self.node(pid, "person", name=f"{first} {last}", born=self.rng.randint(1955, 2003))
        self.edge(pid, "works_at", near.employer)
        self.edge(pid, "lives_in", near.home)
        for ev in near.events:
            self.edge(pid, "attended", ev)
        self._past(pid, past(self.rng, base, near.employer, near.home, near.events, {near.pivot: near.former}))
        for other in near.knows:
            self._knows(pid, other)
        self._person(pid, first, last, near.employer, near.home, list(near.events))

    def _knows(self, a: str, b: str) -> None:
        self.knows[a].append(b)
        self.knows[b].append(a)
        self.edge(a, "knows", b)
        self.edge(b, "knows", a)

    def acquaintances(self) -> None:
        cfg, rng = self.cfg, self.rng
        self.knows: dict[str, list[str]] = defaultdict(list)
        for pid in self.persons:
            for _ in range(_count(rng, cfg.knows_per_person / 2)):
                roll = rng.random()
                pool = (
                    self.by_org[self.employer[pid]]
                    if roll < 0.4
                    else self.by_loc[self.home[pid]]
                    if roll < 0.7
                    else self.persons
                )
                other = rng.choice(pool)
                if other == pid or other in self.knows[pid]:
                    continue
                self._knows(pid, other)

    def _unique_handle(self, base: str) -> str:
        handle = base
        while handle in self.handles_used:
            handle = f"{base}{self.rng.randint(1, 999)}"
        self.handles_used.add(handle)
        return handle

    def _add_account(self, platform: str, handle: str, display: str, bio: str, location: str, **extra: Any) -> str:
        aid = entity_id(EntityType.ACCOUNT, len(self.accts))
        self.node(
            aid, "account", handle=handle, platform=platform, display_name=display, bio=bio,
            location=location, joined=_date(self.rng, 2010, 2023), **extra,
        )
        self.accts.append(aid)
        self.acct_handle[aid] = handle
        self.acct_platform[aid] = platform
        return aid

    def accounts(self) -> None:
        cfg, rng = self.cfg, self.rng
        self.accts: list[str] = []
        self.acct_handle: dict[str, str] = {}
        self.acct_platform: dict[str, str] = {}
        self.owner: dict[str, str | None] = {}
        self.accounts_of: dict[str, list[str]] = defaultdict(list)
        self.handles_used: set[str] = set()
        unique_handle, add_account = self._unique_handle, self._add_account

        for pid in self.persons:
            first, last = self.person_name[pid]
            n_acc = 1 + _count(rng, cfg.alias_density - 1.0)
            for k in range(n_acc):
                platform = MICROBLOG if k == 0 else (FORUM if k == 1 else rng.choice(PLATFORMS))
                listed = rng.random() < cfg.public_link_rate
                stale = rng.random() < cfg.stale_profile_rate
                org = rng.choice(self.orgs) if stale else self.employer[pid]
                city = self.loc_name[rng.choice(self.locs) if stale else self.home[pid]]
                if listed:
                    handle = unique_handle(rng.choice(N.handle_variants(first, last)))
                    display = f"{first} {last}"
                    bio = f"{rng.choice(N.JOB_TITLES)} at {self.org_name[org]}."
                else:
                    handle = unique_handle(f"{rng.choice(N.ADJECTIVES)}_{rng.choice(N.ANIMALS)}{rng.randint(1, 99)}")
                    display = handle.replace("_", " ").title()
                    bio = rng.choice(("Opinions are my own.", f"Somewhere near {city}.", "Lurker."))
                aid = add_account(platform, handle, display, bio, city, listed=listed, stale=stale)
                self.edge(aid, "alias_of", pid)
                self.owner[aid] = pid
                self.accounts_of[pid].append(aid)

        for _ in range(round(cfg.decoy_rate * cfg.n_people)):
            victim = rng.choice(self.persons)
            first, last = self.person_name[victim]
            real = self.accounts_of[victim]
            base = self.acct_handle[rng.choice(real)] if real else rng.choice(N.handle_variants(first, last))
            aid = add_account(
                rng.choice(PLATFORMS),
                unique_handle(N.lookalike(base, rng)),
                f"{first} {last}",
                f"{rng.choice(N.JOB_TITLES)} at {self.org_name[self.employer[victim]]}.",
                self.loc_name[self.home[victim]],
                listed=False,
                decoy=True,
            )
            self.owner[aid] = None

    def follows(self) -> None:
        rng = self.rng
        for aid in self.accts:
            owner = self.owner[aid]
            seen: list[str] = []
            for _ in range(_count(rng, 3.0)):
                friends = self.knows.get(owner, []) if owner else []
                if friends and rng.random() < 0.7:
                    cands = self.accounts_of[rng.choice(friends)]
                    target = rng.choice(cands) if cands else rng.choice(self.accts)
                else:
                    target = rng.choice(self.accts)
                if target != aid and target not in seen:
                    seen.append(target)
                    self.edge(aid, "follows", target)

    def posts(self) -> None:
        cfg, rng = self.cfg, self.rng
        self.n_posts = 0

        def post(author: str, text: str, mentions: list[str], refs: list[str]) -> None:
            pid = self.node(entity_id(EntityType.POST, self.n_posts), "post", text=text, date=_date(rng))
            self.n_posts += 1
            self.edge(author, "authored", pid)
            for m in dict.fromkeys(mentions):
                self.edge(pid, "mentions", m)
            for r in dict.fromkeys(refs):
                self.edge(pid, "references", r)

        for aid in self.accts:
            owner = self.owner[aid]
            for _ in range(_count(rng, cfg.posts_per_account)):
                friends = self.knows.get(owner, []) if owner else []
                friend = rng.choice(friends) if friends else None
                friend_acct = rng.choice(self.accounts_of[friend]) if friend and self.accounts_of[friend] else None
                roll = rng.random()
                if friend_acct and roll < cfg.noise_level:
                    other_org = rng.choice(self.orgs)
                    post(aid, f"Rumour has it @{self.acct_handle[friend_acct]} is joining {self.org_name[other_org]}.",
                         [friend_acct], [other_org])
                elif (
                    friend_acct
                    and friend
                    and self.attended[friend]
                    and roll < cfg.noise_level + cfg.misattribution_rate
                ):
                    ev = rng.choice(self.attended[friend])
                    post(aid, f"Great talk at {self.event_name[ev]}! Proud of @{self.acct_handle[friend_acct]}.",
                         [friend_acct], [ev])
                else:
                    self._ordinary_post(post, aid, owner, friend_acct)

    def _ordinary_post(self, post: Any, aid: str, owner: str | None, friend_acct: str | None) -> None:
        rng = self.rng
        kind = rng.random()
        if owner is None:  # decoys echo their victim's public life without being part of it
            org = rng.choice(self.orgs)
            post(aid, f"Another day at {self.org_name[org]}.", [], [org])
        elif kind < 0.35 and self.attended[owner]:
            ev = rng.choice(self.attended[owner])
            mention = [friend_acct] if friend_acct and rng.random() < 0.4 else []
            tail = f" with @{self.acct_handle[mention[0]]}" if mention else ""
            post(aid, f"At {self.event_name[ev]} today{tail}.", mention, [ev])
        elif kind < 0.55:
            org = self.employer[owner]
            post(aid, f"Busy week at {self.org_name[org]}.", [], [org])
        elif kind < 0.7:
            loc = self.home[owner]
            post(aid, f"Coffee in {self.loc_name[loc]} this morning.", [], [loc])
        elif friend_acct:
            post(aid, f"Catching up with @{self.acct_handle[friend_acct]}.", [friend_acct], [])
        else:
            post(aid, f"Reading about {rng.choice(N.EVENT_TOPICS).lower()} today.", [], [])

    def threads(self) -> None:
        cfg, rng = self.cfg, self.rng
        forum = [a for a in self.accts if self.acct_platform[a] == FORUM] or list(self.accts)
        n_threads = 0

        def forum_account_of(pid: str) -> str | None:
            own = [a for a in self.accounts_of[pid] if self.acct_platform[a] == FORUM]
            return own[0] if own else None

        def thread(author: str, title: str, refs: list[str], discusses: str | None, voices: list[str]) -> None:
            nonlocal n_threads
            tid = entity_id(EntityType.THREAD, n_threads)
            n_threads += 1
            comments = []
            for c in range(_count(rng, 2.0)):
                commenter = voices[c] if c < len(voices) else rng.choice(forum)
                comments.append({"author": commenter, "text": rng.choice(_COMMENTS), "date": _date(rng)})
            self.node(tid, "thread", title=title, date=_date(rng), comments=comments)
            self.edge(author, "authored", tid)
            if discusses:
                self.edge(tid, "discusses", discusses)
            for r in refs:
                self.edge(tid, "references", r)
            for commenter in dict.fromkeys(c["author"] for c in comments):
                self.edge(commenter, "commented_on", tid)

        for ev in self.events:
            people = self.attendees.get(ev, [])
            voices = [a for a in (forum_account_of(p) for p in people) if a]
            for _ in range(_count(rng, cfg.threads_per_event)):
                author = voices[0] if voices and rng.random() < 0.8 else rng.choice(forum)
                title = rng.choice(_THREAD_TITLES).format(event=self.event_name[ev])
                thread(author, title, [ev], ev, [v for v in voices if v != author])
        for org in self.orgs:
            if rng.random() < 0.5:
                thread(rng.choice(forum), f"Anyone here working at {self.org_name[org]}?", [org], None, [])


_COMMENTS = (
    "I was there too.", "Great write-up.", "Does anyone have the slides?", "Same experience here.",
    "Who organised this?", "Count me in next time.", "The second day was better.",
)
_THREAD_TITLES = (
    "{event}: who is going?", "Notes from {event}", "{event} recap thread", "Was {event} worth it?",
)


def generate_world(config: WorldConfig | None = None, seed: int = 0) -> World:
    """Build a world from a config and a seed; the same pair gives a byte-identical world."""
    cfg = config if config is not None else WorldConfig()
    b = _Builder(cfg, check_seed(seed))
    b.places_orgs_events()
    b.people()
    b.acquaintances()
    b.near_misses()
    b.accounts()
    b.follows()
    b.posts()
    b.threads()
    nodes, edges = b.nodes, b.edges
    if decoy_count(cfg.n_people, cfg.decoy_density):
        nodes, edges = shuffle_people(b.rng, nodes, edges, b.persons)
    graph = nx.MultiDiGraph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from(edges)
    return World(graph, kind=WorldKind.OSINT, config=cfg, seed=seed, name=f"osint-{seed}")

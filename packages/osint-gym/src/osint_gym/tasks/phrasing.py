"""Question text from a structured query: several phrasings per hop, picked by the task's rng.

A question is built inside out: the start entity's name, then one noun phrase per hop
("the forum thread about X" -> "the account that started the forum thread about X" -> ...),
then a question wrapper chosen by the answer type.
"""

from __future__ import annotations

import random

from osint_gym.schema import RELATIONS, Direction
from osint_gym.tasks.query import Filter, Hop, Query
from osint_gym.world.graph import World

NOUNS = {
    "person": "person", "account": "account", "organization": "organization", "location": "city",
    "event": "event", "post": "post", "thread": "forum thread", "entity": "entity",
}

# (relation, direction) -> hop phrasings and filter clause, read from the relation specs.
# {x} is the previous noun phrase, {n} the target's noun, {v} a filter's value.
HOP_PHRASES: dict[tuple[str, Direction], tuple[str, ...]] = {
    (spec.name, d): spec.side(d).phrases for spec in RELATIONS.values() for d in Direction
}
FILTER_PHRASES: dict[tuple[str, Direction], str] = {
    (spec.name, d): clause for spec in RELATIONS.values() for d in Direction if (clause := spec.side(d).clause)
}

WRAPPERS = ("Which {n} is {np}?", "Identify {np}.", "Find {np}.", "What is the id of {np}?")
PERSON_WRAPPERS = ("Who is {np}?", "Identify {np}.", "Which person is {np}?")
CHAIN_ENDINGS = ("Which {n} do you reach?", "Identify that {n}.", "What is the id of that {n}?")


def _noun(filters: tuple[Filter, ...], default: str) -> str:
    noun = NOUNS.get(default, default)
    for f in filters:
        if f.relation == "type":
            noun = NOUNS.get(f.value, f.value)
    for f in filters:
        if f.relation == "platform":
            noun = f"{f.value} {noun}"
    return noun


def filter_clauses(world: World, filters: tuple[Filter, ...]) -> str:
    """The clauses a question adds for filters: ' who works at O and who lives in L'."""
    parts = []
    for f in filters:
        if f.relation in ("type", "platform"):
            continue
        template = FILTER_PHRASES.get((f.relation, f.direction), "with " + f.relation + " {v}")
        parts.append(template.format(v=world.surface(f.value)))
    return (" " + " and ".join(parts)) if parts else ""


def _hop_phrase(world: World, hop: Hop, x: str, ttype: str, rng: random.Random) -> str:
    templates = HOP_PHRASES.get((hop.relation, hop.direction), ("the {n} linked by " + hop.relation + " to {x}",))
    return rng.choice(templates).format(x=x, n=_noun(hop.filters, ttype)) + filter_clauses(world, hop.filters)


def _needs_chain(query: Query) -> bool:
    """Nested phrases ("the A of the B of X who ...") blur which noun a clause belongs to once an
    inner hop carries a filter or the walk is long; such questions are told step by step."""
    inner_filtered = any(
        f.relation not in ("type", "platform") for hop in query.hops[:-1] for f in hop.filters
    )
    return inner_filtered or len(query.hops) >= 3


def question_text(world: World, query: Query, answer_type: str, target_types: list[str], rng: random.Random) -> str:
    """The question for a query; target_types[i] is the type of the entity reached by hop i."""
    wrappers = PERSON_WRAPPERS if answer_type == "person" else WRAPPERS
    if query.start is None:
        np = f"the {NOUNS.get(query.select_type or 'entity', 'entity')}{filter_clauses(world, query.filters)}"
        return rng.choice(wrappers).format(np=np, n=NOUNS.get(answer_type, answer_type))
    if not _needs_chain(query):
        np = world.surface(query.start)
        for hop, ttype in zip(query.hops, target_types):
            np = _hop_phrase(world, hop, np, ttype, rng)
        return rng.choice(wrappers).format(np=np, n=NOUNS.get(answer_type, answer_type))
    start_type = world.type_of(query.start)
    sentences = [f"Start from {world.surface(query.start)}."]
    prev_noun = NOUNS.get(start_type, start_type)
    for i, (hop, ttype) in enumerate(zip(query.hops, target_types)):
        x = world.surface(query.start) if i == 0 else f"that {prev_noun}"
        lead = "Take" if i == 0 else "Then take"
        sentences.append(f"{lead} {_hop_phrase(world, hop, x, ttype, rng)}.")
        prev_noun = _noun(hop.filters, ttype)
    sentences.append(rng.choice(CHAIN_ENDINGS).format(n=NOUNS.get(answer_type, answer_type)))
    return " ".join(sentences)

"""Question text from a structured query: several phrasings per hop, picked by the task's rng.

A question is built inside out: the start entity's name, then one noun phrase per hop
("the forum thread about X" -> "the account that started the forum thread about X" -> ...),
then a question wrapper chosen by the answer type.
"""

from __future__ import annotations

import random

from osint_gym.schema import Direction
from osint_gym.tasks.query import Filter, Hop, Query
from osint_gym.world.graph import World

NOUNS = {
    "person": "person", "account": "account", "organization": "organization", "location": "city",
    "event": "event", "post": "post", "thread": "forum thread", "entity": "entity",
}

_O, _I = Direction.OUT, Direction.IN
# (relation, direction) -> phrasings; {x} is the previous noun phrase, {n} the target's noun.
HOP_PHRASES: dict[tuple[str, Direction], tuple[str, ...]] = {
    ("alias_of", _O): ("the person who operates {x}", "the real person behind {x}", "the owner of {x}"),
    ("alias_of", _I): ("the {n} of {x}", "the {n} run by {x}"),
    ("works_at", _O): ("the employer of {x}", "the organization where {x} works"),
    ("works_at", _I): ("the employee of {x}", "the person working at {x}"),
    ("lives_in", _O): ("the city where {x} lives", "the home city of {x}"),
    ("lives_in", _I): ("the person living in {x}", "the resident of {x}"),
    ("based_in", _O): ("the city where {x} is based", "the headquarters city of {x}"),
    ("based_in", _I): ("the organization based in {x}",),
    ("knows", _O): ("the acquaintance of {x}", "the person {x} knows"),
    ("knows", _I): ("the acquaintance of {x}", "the person who knows {x}"),
    ("follows", _O): ("the {n} followed by {x}", "the {n} that {x} follows"),
    ("follows", _I): ("the {n} following {x}", "the follower of {x}"),
    ("authored", _O): ("the {n} written by {x}", "the {n} by {x}"),
    ("authored", _I): ("the author of {x}", "the account that wrote {x}"),
    ("mentions", _O): ("the account mentioned in {x}", "the account tagged in {x}"),
    ("mentions", _I): ("the post mentioning {x}", "the post that tags {x}"),
    ("references", _O): ("the {n} referenced in {x}", "the {n} that {x} refers to"),
    ("references", _I): ("the {n} referring to {x}", "the {n} that references {x}"),
    ("attended", _O): ("the event attended by {x}", "the event {x} went to"),
    ("attended", _I): ("the person who attended {x}", "the attendee of {x}"),
    ("held_in", _O): ("the city where {x} took place", "the city that hosted {x}"),
    ("held_in", _I): ("the event held in {x}", "the event hosted in {x}"),
    ("discusses", _O): ("the event discussed in {x}", "the event that {x} is about"),
    ("discusses", _I): ("the forum thread about {x}", "the forum thread discussing {x}"),
    ("commented_on", _O): ("the forum thread {x} commented on",),
    ("commented_on", _I): ("the account that commented on {x}", "the commenter on {x}"),
}

FILTER_PHRASES: dict[tuple[str, Direction], str] = {
    ("works_at", _O): "who works at {v}",
    ("lives_in", _O): "who lives in {v}",
    ("attended", _O): "who attended {v}",
    ("knows", _O): "who knows {v}",
    ("references", _O): "that references {v}",
    ("mentions", _O): "that mentions {v}",
    ("authored", _I): "written by {v}",
    ("held_in", _O): "held in {v}",
    ("based_in", _O): "based in {v}",
    ("alias_of", _I): "who operates {v}",
    ("discusses", _O): "about {v}",
    ("commented_on", _I): "commented on by {v}",
    ("follows", _O): "that follows {v}",
    ("follows", _I): "followed by {v}",
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


def _clauses(world: World, filters: tuple[Filter, ...]) -> str:
    parts = []
    for f in filters:
        if f.relation in ("type", "platform"):
            continue
        template = FILTER_PHRASES.get((f.relation, f.direction), "with " + f.relation + " {v}")
        parts.append(template.format(v=world.surface(f.value)))
    return (" " + " and ".join(parts)) if parts else ""


def _hop_phrase(world: World, hop: Hop, x: str, ttype: str, rng: random.Random) -> str:
    templates = HOP_PHRASES.get((hop.relation, hop.direction), ("the {n} linked by " + hop.relation + " to {x}",))
    return rng.choice(templates).format(x=x, n=_noun(hop.filters, ttype)) + _clauses(world, hop.filters)


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
        np = f"the {NOUNS.get(query.select_type or 'entity', 'entity')}{_clauses(world, query.filters)}"
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

"""Task proposals: how a model proposes a task about the world, and how osint-gym validates it.

A generator is shown an `Offer`: in ``fixed`` mode a verified path to phrase as a question, in
``generate`` mode a context subgraph from which it picks its own path. It answers with::

    Q: <a question that names the start entity>
    A: <the answer entity id>
    E: <head relation tail>; <head relation tail>; ...

In ``fixed`` mode the ``E:`` line may be left out: the evidence is then the offered path itself
(taken from the offer, not from anything the model states).

In ``choose`` mode the offer shows a start entity and numbered paths from it (`CHOOSE_PATHS`
verified paths of one to ``max_hops`` hops, in a seeded order); the generator answers
with one number::

    P: 2

An offer with rungs shows each path's number of demonstrator steps too, and the generator may add how many of
them the answerer plays (``P: 2 1``: only the last; `osint_gym.rungs`): the task starts after the others
(``Task.start_depth``), and a path of K steps has K rungs.

osint-gym resolves it to exactly the offered path, phrases the question itself (`question_text`) and
verifies the task like any other, so a proposal cannot miscopy an id, a handle or a name: what is
left to the generator is which path to ask about, the choice its learnability reward shapes. A
number the offer did not show is ``out_of_range``, anything but one number ``malformed``; nothing
is repaired.

`validate_proposal` turns that into a `Task` and runs the same verification as every other task
(evidence replays, the start is named and the answer is not, the relation path from the start
determines exactly the answer, the tool-only oracle solves it). Failures carry a `FailureReason`.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from osint_gym.errors import ConfigError
from osint_gym.offers import (
    # offers live in osint_gym.offers; re-exported here, where callers have always found them
    CHOOSE_PATHS,
    MAX_CHOICES,
    MAX_PROPOSAL_HOPS,
    OFFER_MODES,
    Offer,
    chain_query,
    choice_task,
    make_offer,
    walk_path,
    walk_text,
)
from osint_gym.schema import Edge, canonical_edge
from osint_gym.streams import stream_seed
from osint_gym.tasks.duplicates import DuplicateFilter
from osint_gym.tasks.phrasing import question_text
from osint_gym.tasks.query import Query
from osint_gym.tasks.task import Budgets, FailureReason, Task, Verdict, difficulty_for_hops
from osint_gym.tasks.verify import (
    DEFAULT_MAX_PARALLEL_CALLS,
    DEFAULT_MAX_STEPS,
    MAX_QUESTION_CHARS,
    verify_task,
    world_fingerprint,
)
from osint_gym.world.graph import World

__all__ = ["CHOOSE_PATHS", "MAX_CHOICES", "MAX_PROPOSAL_HOPS", "OFFER_MODES", "Offer", "Proposal", "SampledBatch",
           "format_proposal", "generator_messages", "gold_proposal", "grounding", "make_offer", "parse_proposal",
           "resolve_choice", "validate_proposal", "validate_sampled", "walk_text"]

SYSTEM_PROMPT = "Write a question whose answer is one entity, as Q:, A: and E: lines."
CHOOSE_SYSTEM_PROMPT = "Choose the path to ask about: reply P: and its number."
RUNG_SYSTEM_PROMPT = "Choose a path and how many of its steps the answerer plays: reply P:, its number and the steps."
_LINE = re.compile(r"^\s*([QAEP])\s*:\s*(.*)$", re.IGNORECASE)


@dataclass(frozen=True)
class Proposal:
    question: str
    answer: str
    evidence: tuple[Edge, ...]
    # choose mode: the numbers written on the P: line: a path's number (1-based) and, for an offer with rungs, the
    # steps of its demonstration the answerer plays (the rest are given; without it, all of them)
    refs: tuple[int, ...] = ()


def generator_messages(world: World, offer: Offer) -> list[dict[str, str]]:
    """The chat prompt of the generator for an offer."""
    if offer.mode == "fixed":
        user = f"Path: {walk_text(offer)}\nStart: {world.surface(offer.start)} = {offer.start}"
    elif offer.mode == "choose":  # numbered paths: the proposal names one by its number (with rungs, its steps too)
        lines = "\n".join(f"{k}: {walk_text(offer, c, offer.query(k))}"
                          + (f" ({offer.steps[k - 1]} steps)" if offer.steps else "")
                          for k, c in enumerate(offer.choices, 1))
        user = f"Start: {world.surface(offer.start)} = {offer.start}\n{lines}"
        system = RUNG_SYSTEM_PROMPT if offer.steps else CHOOSE_SYSTEM_PROMPT
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]
    else:  # the generator picks the start and the path itself
        lines = "; ".join(f"{e.head} {e.relation} {e.tail}" for e in offer.context)
        names = "; ".join(
            f"{n} = {world.surface(n)}"
            for n in dict.fromkeys(x for e in offer.context for x in (e.head, e.tail))
            if world.surface(n) != n
        )
        user = f"Graph: {lines}\nNames: {names}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def format_proposal(proposal: Proposal) -> str:
    if proposal.refs:
        return "P: " + " ".join(str(k) for k in proposal.refs)
    text = f"Q: {proposal.question}\nA: {proposal.answer}"
    if proposal.evidence:
        text += "\nE: " + "; ".join(f"{e.head} {e.relation} {e.tail}" for e in proposal.evidence)
    return text


def gold_proposal(world: World, offer: Offer, seed: int = 0) -> str:
    """A correct proposal for an offer (warm-start demonstrations): the offered path, phrased
    (``fixed`` offers: question and answer; ``generate`` offers: the chosen path as well;
    ``choose`` offers: the number of the offered path)."""
    if offer.mode == "choose":  # the number of the offered path (with filters, its evidence is no chain)
        if offer.path not in offer.choices:
            raise ConfigError(f"offer {offer.offer_id!r}: its path is not one of its choices")
        k = offer.choices.index(offer.path) + 1
        if not offer.steps:
            return format_proposal(Proposal("", "", (), (k,)))
        # a rung drawn at random, so the format is taught without a preference the frontier reward should shape
        left = random.Random(f"gold:{seed}:{offer.offer_id}").randint(1, offer.steps[k - 1])
        return format_proposal(Proposal("", "", (), (k, left)))
    chain = chain_query(offer.start, offer.path)
    if chain is None:
        raise ConfigError(f"offer {offer.offer_id!r}: its path is not a chain from its start")
    query, path = chain
    rng = random.Random(f"gold:{seed}:{offer.offer_id}")
    question = question_text(world, query, world.type_of(path[-1]), [world.type_of(n) for n in path[1:]], rng)
    return format_proposal(Proposal(question, path[-1], offer.path if offer.mode == "generate" else ()))


def parse_proposal(completion: str) -> Proposal | str:
    """A `Proposal`, or a message saying what is malformed. Accepts Q/A/E lines, a ``P:`` line with
    a path's number (choose mode), or JSON ``{"question", "answer", "evidence": [[h, r, t], ...]}``.
    Never raises."""
    if not isinstance(completion, str) or not completion.strip():
        return "empty completion"
    text = completion.strip()[:4000]
    fields: dict[str, Any] = {}
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return "completion is not valid JSON"
        if not isinstance(data, dict):
            return "JSON proposal must be an object"
        fields = {"Q": data.get("question"), "A": data.get("answer"), "E": data.get("evidence")}
    else:
        for line in text.splitlines():
            m = _LINE.match(line)
            if m and m.group(1).upper() not in fields:
                fields[m.group(1).upper()] = m.group(2).strip()
    question, answer, evidence = fields.get("Q"), fields.get("A"), fields.get("E")
    if isinstance(fields.get("P"), str) and not question:  # choose mode: a path number only
        numbers = fields["P"].replace(",", " ").split()
        if not numbers or not all(n.isdigit() and len(n) <= 4 for n in numbers):
            return "the P: line must hold a path's number, e.g. 'P: 2'"
        return Proposal("", "", (), tuple(int(n) for n in numbers))
    if not isinstance(question, str) or not question:
        return "missing the Q: line"
    if not isinstance(answer, str) or not answer or len(answer.split()) != 1:
        return "the A: line must hold one entity id"
    edges: list[Edge] = []
    if isinstance(evidence, str):
        for part in evidence.split(";"):
            tokens = part.split()
            if not tokens:
                continue
            if len(tokens) != 3:
                return f"evidence item {part.strip()[:60]!r} is not 'head relation tail'"
            edges.append(Edge(*tokens))
    elif isinstance(evidence, list):
        for item in evidence:
            if not (isinstance(item, list) and len(item) == 3 and all(isinstance(x, str) for x in item)):
                return "JSON evidence items must be [head, relation, tail]"
            edges.append(Edge(*item))
    return Proposal(question, answer, tuple(edges))


def validate_proposal(
    world: World,
    proposal: Proposal | str,
    *,
    offer: Offer | None = None,
    max_hops: int = MAX_PROPOSAL_HOPS,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_parallel_calls: int = DEFAULT_MAX_PARALLEL_CALLS,
    task_id: str = "proposal",
) -> tuple[Verdict, Task | None]:
    """Turn a proposal into a verified task, stamped for ``world`` under the budgets it was verified with
    (`osint_gym.tasks.Task.stamp`), or say why it is not one."""
    if isinstance(proposal, str):
        return Verdict(FailureReason.MALFORMED, proposal), None
    chosen: tuple[Query, list[str]] | None = None  # a choice's query (with any filters) and the entities it visits
    depth = 0  # a rung: the demonstrator steps given before the answerer plays
    rung: dict[str, int] = {}  # and the demonstration's length, for the record
    if (offer is not None and offer.mode == "choose") or proposal.refs:
        resolved = resolve_choice(world, proposal, offer)
        if isinstance(resolved, Verdict):
            return resolved, None
        proposal, chosen = resolved
        assert offer is not None  # resolve_choice refuses a proposal without its choose-mode offer
        if offer.steps:
            steps = offer.steps[proposal.refs[0] - 1]
            depth = steps - (proposal.refs[1] if len(proposal.refs) > 1 else steps)
            rung = {"demonstration_steps": steps}
    if not proposal.evidence:
        if offer is None or offer.mode != "fixed":
            return Verdict(FailureReason.MALFORMED, "missing the E: line (the evidence path)"), None
        proposal = Proposal(proposal.question, proposal.answer, offer.path)
    hops = chosen[0].n_hops if chosen else len(proposal.evidence)  # a filter's edge is evidence, not a hop
    if hops > max_hops or len(proposal.question) > MAX_QUESTION_CHARS:
        return Verdict(FailureReason.TOO_LARGE, f"{hops} hops (max {max_hops}), {len(proposal.question)} chars"), None
    for e in proposal.evidence:
        for node in (e.head, e.tail):
            if node not in world:
                return Verdict(FailureReason.UNKNOWN_ENTITY, f"{node[:60]!r} is not an entity"), None
        if not world.has_edge(*e):  # symmetric relations are stored both ways
            return Verdict(FailureReason.EDGE_NOT_IN_WORLD, f"{tuple(e)} is not in the world"), None
    if proposal.answer not in world:
        return Verdict(FailureReason.UNKNOWN_ENTITY, f"answer {proposal.answer[:60]!r} is not an entity"), None
    if chosen is not None:
        query, path = chosen
    else:
        first = proposal.evidence[0]
        if len(proposal.evidence) == 1:
            start = first.head if first.tail == proposal.answer else first.tail
        else:
            second = proposal.evidence[1]
            start = first.head if first.head not in (second.head, second.tail) else first.tail
        chain = chain_query(start, proposal.evidence)
        if chain is None:
            return Verdict(FailureReason.NOT_A_PATH, "the evidence edges do not form a chain"), None
        query, path = chain
    if path[-1] != proposal.answer:
        return Verdict(
            FailureReason.ANSWER_MISMATCH, f"the evidence chain ends at {path[-1]!r}, not at the answer"
        ), None
    if len(set(path)) != len(path):
        return Verdict(FailureReason.NOT_A_PATH, "the evidence chain revisits an entity"), None
    task = Task(task_id, proposal.question, (proposal.answer,), tuple(canonical_edge(e) for e in proposal.evidence),
                "generated", difficulty_for_hops(query.n_hops), query, world.type_of(proposal.answer),
                {"source": "proposal", "world": world.name, "world_seed": world.seed, **rung}, start_depth=depth)
    verdict = verify_task(world, task, max_steps=max_steps, max_parallel_calls=max_parallel_calls)
    if not verdict.ok:
        return verdict, None
    # verified once: the task carries its stamp, so nothing downstream (the env, a dataset) verifies it again
    return verdict, task.stamped(world_fingerprint(world), Budgets(max_steps, max_parallel_calls))


def resolve_choice(
    world: World, proposal: Proposal, offer: Offer | None
) -> tuple[Proposal, tuple[Query, list[str]]] | Verdict:
    """A choose-mode proposal as the question, answer and evidence it stands for, with the query and
    the entities it visits: its number is the offered path it names, and osint-gym phrases the
    question (`osint_gym.offers.choice_task`, seeded by the offer and the number). With rungs (``offer.steps``) a
    second number may name how many of the path's demonstrator steps the answerer plays (1 to all of them). A
    `Verdict` says why it stands for none."""
    if offer is None or offer.mode != "choose":
        return Verdict(FailureReason.MALFORMED, "a path number (a P: line) answers a choose-mode offer only")
    most = 2 if offer.steps else 1
    if not 1 <= len(proposal.refs) <= most:
        shape = "a path number and its steps (P: k n)" if offer.steps else "one path number (P: k)"
        return Verdict(FailureReason.MALFORMED, f"a choose-mode offer takes {shape}, got {len(proposal.refs)} numbers")
    k = proposal.refs[0]
    if not 1 <= k <= len(offer.choices):
        return Verdict(FailureReason.OUT_OF_RANGE, f"path {k} was not offered (paths 1..{len(offer.choices)})")
    if len(proposal.refs) == 2 and not 1 <= proposal.refs[1] <= offer.steps[k - 1]:
        return Verdict(FailureReason.OUT_OF_RANGE, f"path {k} takes {offer.steps[k - 1]} steps; the answerer plays "
                                                   f"1..{offer.steps[k - 1]} of them, not {proposal.refs[1]}")
    task = choice_task(world, offer, k)
    if task is None or task.query is None:  # an offer built by make_offer never gets here; a hand-made one might
        return Verdict(FailureReason.NOT_A_PATH, f"offered path {k} does not walk from {offer.start}")
    chain = walk_path(offer.start, offer.choices[k - 1], offer.query(k))
    assert chain is not None  # choice_task walked it
    return Proposal(task.question, task.answer, offer.choices[k - 1], proposal.refs), chain


@dataclass
class SampledBatch:
    """Sampled proposals after validation: the valid tasks, the count per reason, and one record
    per completion (offer id, completion, reason, detail) in sampling order."""

    tasks: list[Task]
    reasons: dict[str, int]
    records: list[dict[str, str]]


def validate_sampled(
    worlds: list[World], offers: list[Offer], completions: list[str], *, max_hops: int, id_prefix: str
) -> SampledBatch:
    """Validate sampled completions in order (world ``i`` is offer ``i``'s); a valid task that
    repeats an earlier valid one (`DuplicateFilter`: same question, or same world, answer and
    evidence) counts as a ``duplicate``."""
    batch = SampledBatch([], {}, [])
    seen = DuplicateFilter()
    for i, (world, offer, completion) in enumerate(zip(worlds, offers, completions, strict=True)):
        verdict, task = validate_proposal(world, parse_proposal(completion), offer=offer, max_hops=max_hops,
                                          task_id=f"{id_prefix}{i}")
        reason = verdict.reason.value
        if task is not None and not seen.admit(task):
            reason, task = FailureReason.DUPLICATE.value, None
        batch.reasons[reason] = batch.reasons.get(reason, 0) + 1
        batch.records.append(
            {"offer_id": offer.offer_id, "completion": completion, "reason": reason, "detail": verdict.detail}
        )
        if task is not None:
            batch.tasks.append(task)
    return batch


def stream_offers(world: World, seed: int, stream: str, n: int, *, mode: str = "fixed", max_hops: int = 2,
                  filters: bool = False, choices: int = CHOOSE_PATHS, rungs: Budgets | None = None) -> list[Offer]:
    """Offers ``0 .. n-1`` of the named ``stream`` of ``seed`` in one world (`make_offer` seeded by
    `osint_gym.streams.stream_seed`), so that no two samplers of offers share an item; ``rungs``: the budgets whose
    demonstrator steps each choice carries (`make_offer`)."""
    s = stream_seed(seed, stream)
    return [make_offer(world, s, i, mode=mode, max_hops=max_hops, filters=filters, choices=choices, rungs=rungs)
            for i in range(n)]


Generate = Callable[[list[list[dict[str, str]]]], list[str]]  # generator prompts -> one completion each


def sample_tasks(worlds: list[World], offers: list[Offer], generate: Generate, *, max_hops: int,
                 id_prefix: str) -> SampledBatch:
    """The one "sample a generator, then validate" step: ``generate`` completes the generator prompt of
    every offer (`generator_messages`; world ``i`` is offer ``i``'s) and osint-gym validates the
    completions (`validate_sampled`). The caller owns the model; osint-gym owns the prompt and validity."""
    completions = generate([generator_messages(w, o) for w, o in zip(worlds, offers, strict=True)])
    return validate_sampled(worlds, offers, completions, max_hops=max_hops, id_prefix=id_prefix)


def grounding(offer: Offer, proposal: Proposal) -> float:
    """Share of the proposal's evidence edges that the offer showed (measured, not claimed); a
    ``fixed`` proposal that leaves the evidence to the offer, and a ``choose`` proposal's path
    number, are grounded by construction."""
    if proposal.refs:
        return 1.0 if offer.mode == "choose" else 0.0
    if not proposal.evidence:
        return 1.0 if offer.mode == "fixed" else 0.0
    shown = {canonical_edge(e) for e in offer.context}
    return sum(canonical_edge(e) in shown for e in proposal.evidence) / len(proposal.evidence)

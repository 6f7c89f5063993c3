"""Single-turn mode: the context is placed in the prompt and the model answers once.

Training (osint-selfplay) and evaluation (osint-eval) both use this module, so a model is scored
the same way in both. The context simulates records already retrieved: the gold evidence mixed
with distractors, as id triples (``"triples"``) or as rendered platform records (``"records"``).
The answer is scored by `osint_gym.reward.score_episode`, like an env episode.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass

from osint_gym.actions import parse_action
from osint_gym.errors import ConfigError
from osint_gym.reward import RewardBreakdown, RewardConfig, labelled_answer, score_episode
from osint_gym.schema import ID_PREFIX, Edge, EntityType, canonical_edge
from osint_gym.tasks.task import Task
from osint_gym.views import page, record_edges
from osint_gym.world.graph import World

CONTEXT_MODES = ("triples", "records")
SYSTEM_PROMPT = "Answer the question with one entity id from the context."


@dataclass(frozen=True)
class Context:
    text: str
    edges: tuple[Edge, ...]  # every edge the context shows (what an answer may cite)
    entities: tuple[str, ...]  # every entity the context shows by its id, in order of appearance
    lines: tuple[str, ...] = ()  # triples mode: line i shows edges[i]

    def to_json(self) -> str:
        """The context as one JSON string (a dataset column), read back by `from_json`."""
        return json.dumps({"text": self.text, "edges": [list(e) for e in self.edges], "entities": list(self.entities),
                           "lines": list(self.lines)})

    @classmethod
    def from_json(cls, text: str) -> Context:
        d = json.loads(text)
        return cls(d["text"], tuple(Edge(*e) for e in d["edges"]), tuple(d["entities"]), tuple(d.get("lines", ())))

    def line_edge(self, line: str) -> Edge | None:
        """The edge a line of this context shows (a citation copied from the context)."""
        try:
            return self.edges[self.lines.index(line.strip())]
        except ValueError:
            return None


def distractor_edges(world: World, around: Iterable[str], exclude: Iterable[Edge], rng: random.Random, n: int) -> list[Edge]:
    """Up to ``n`` edges incident to the entities ``around``, shuffled by ``rng``: each edge once
    and none of ``exclude``, both up to symmetry (a ``knows`` edge is the same edge both ways).

    The one source of distractors: single-turn contexts and ``generate``-mode proposal offers."""
    gold = {canonical_edge(e) for e in exclude}
    # incident_edges yields canonical edges, so comparing against canonical `gold` is symmetric
    pool = list(dict.fromkeys(e for node in dict.fromkeys(around) for e in world.incident_edges(node) if e not in gold))
    rng.shuffle(pool)
    return pool[: max(0, n)]


def build_context(world: World, task: Task, *, mode: str = "triples", n_distractors: int = 6, seed: int = 0) -> Context:
    """The context for a task: its evidence plus ``n_distractors`` nearby edges, shuffled (deterministic)."""
    if mode not in CONTEXT_MODES:
        raise ConfigError(f"context mode must be one of {CONTEXT_MODES}, got {mode!r}")
    rng = random.Random(f"{seed}:{task.task_id}:{task.question}")
    around = (n for e in task.evidence for n in (e.head, e.tail))
    edges = [canonical_edge(e) for e in task.evidence] + distractor_edges(world, around, task.evidence, rng, n_distractors)
    rng.shuffle(edges)
    entities = list(dict.fromkeys(n for e in edges for n in (e.head, e.tail)))
    if mode == "triples":
        # Entities the question names are written as the question writes them; every other
        # entity (the answer among them) by its id. The answer is never named (verified).
        named = {n: world.surface(n) for n in (task.query.named_entities() if task.query else []) if n in world}
        lines = [f"{named.get(e.head, e.head)} {e.relation} {named.get(e.tail, e.tail)}" for e in edges]
        return Context("\n".join(lines), tuple(edges), tuple(n for n in entities if n not in named), tuple(lines))
    records = [page(world, n) for n in entities]
    shown = tuple(dict.fromkeys(canonical_edge(e) for r in records for e in record_edges(r)))
    text = "\n".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records)
    return Context(text, shown, tuple(entities))


def answer_prompt(task: Task, context: Context) -> str:
    """The user turn of the single-turn answerer (also the prefix of tokenizer-corpus texts).
    The question comes first: a small model then reads the context knowing what it looks for."""
    return f"Question: {task.question}\nContext:\n{context.text}"


def answer_messages(task: Task, context: Context) -> list[dict[str, str]]:
    """The chat prompt of the single-turn answerer."""
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": answer_prompt(task, context)}]


def gold_completion(task: Task, context: Context | None = None, cite_evidence: bool = False) -> str:
    """What a perfect single-turn answer looks like (warm-start demonstrations): the answer id,
    optionally after the evidence lines it follows, copied from the context in path order
    (the format `parse_answer` reads)."""
    if not cite_evidence:
        return task.answer
    lines = []
    for e in task.evidence:
        shown = [ln for ln, edge in zip(context.lines, context.edges) if edge == canonical_edge(e)] if context else []
        lines.append(shown[0] if shown else f"{e.head} {e.relation} {e.tail}")
    return "\n".join(lines + [task.answer])


@dataclass(frozen=True)
class ParsedAnswer:
    answer: str | list[str] | None
    evidence: tuple[Edge, ...]
    error: str | None = None


def parse_answer(completion: str, context: Context | None = None) -> ParsedAnswer:
    """The single-turn answer format. The answer is on the first line labelled ``Answer:`` (to the
    end of that line; later lines are prose and ignored) or, without a label, on the last line;
    the lines before it may cite evidence, as a line copied from the context or as
    ``head relation tail`` ids. A JSON ``{"answer": ..., "evidence": [[h, r, t], ...]}`` (or any
    env action shape) works too. Lines are structure: only the answer line is judged, by
    `osint_gym.reward.judge_answer` (separators in it mean several candidates), so ids listed one
    per line score what the answer line alone scores. Never raises."""
    if not isinstance(completion, str) or not completion.strip():
        return ParsedAnswer(None, (), "empty completion")
    text = completion.strip()
    if text[0] in "{[<":
        return _parse_json_answer(text)
    found = labelled_answer(text)
    if found is not None:
        head, answer = found
        rest = [ln for ln in head.splitlines() if ln.strip()]
    else:
        *rest, answer = [ln.strip() for ln in text.splitlines() if ln.strip()]
    edges = []
    for line in rest:
        line = re.sub(r"^\s*evidence\s*:\s*", "", line, flags=re.IGNORECASE).strip()
        edge = context.line_edge(line) if context is not None else None
        if edge is None and len(line.split()) == 3:
            edge = Edge(*line.split())
        if edge is not None:
            edges.append(edge)
    if not answer:
        return ParsedAnswer(None, tuple(edges), "no answer after the Answer: label")
    return ParsedAnswer(answer, tuple(edges))


def _parse_json_answer(text: str) -> ParsedAnswer:
    parsed = parse_action(text)
    answers = [c for c in parsed.calls if c.name == "answer" and isinstance(c.args, dict)]
    edges = tuple(
        Edge(c.args["src"], c.args["rel"], c.args["dst"]) for c in parsed.calls
        if c.name == "add_edge" and isinstance(c.args, dict) and all(isinstance(c.args.get(k), str) for k in ("src", "rel", "dst"))
    )
    if answers:
        value = answers[0].args.get("entity_id")
        if isinstance(value, (str, list)):
            return ParsedAnswer(value, edges)
    return ParsedAnswer(None, edges, parsed.error or "no answer in the JSON")


def score_completion(task: Task, completion: str, context: Context, cfg: RewardConfig | None = None) -> RewardBreakdown:
    """Score a single-turn completion with the env's reward: the answer, and F1 of the cited edges
    the context actually shows (a citation the context does not show counts as an invalid action)."""
    cfg = cfg or RewardConfig()
    parsed = parse_answer(completion, context)
    shown = set(context.edges)
    cited = {canonical_edge(e) for e in parsed.evidence}
    supported = cited & shown
    invalid = len(cited - shown) + (1 if parsed.error else 0)
    shown_entities = {n for e in context.edges for n in (e.head, e.tail)}  # a KG name with a comma is one entity
    return score_episode(
        gold_answers=task.answers, gold_evidence=task.evidence, submitted=parsed.answer, evidence=supported,
        critical_steps=1, max_steps=1, penalties_paid=invalid * cfg.invalid_action_penalty, cfg=cfg, known=shown_entities,
    )


def random_guess(task: Task, context: Context, rng: random.Random) -> str:
    """The chance baseline: a random context entity of the type the question asks for."""
    types = {t.value for t in ID_PREFIX}
    prefix = ID_PREFIX[EntityType(task.answer_type)] if task.answer_type in types else None
    pool = [e for e in context.entities if prefix and e.startswith(prefix)] or list(context.entities)
    return rng.choice(pool) if pool else ""

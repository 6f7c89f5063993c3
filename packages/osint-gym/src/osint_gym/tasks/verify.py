"""Task verification: the one place that decides whether a task may enter any dataset.

A task is valid when its evidence replays in the world, its question names every entity its
query starts from or filters on and does not contain the answer, its query determines exactly
its answer(s), and the tool-only oracle reaches the answer within the step budget.
"""

from __future__ import annotations

from osint_gym.errors import TaskError
from osint_gym.tasks.oracle import run_oracle
from osint_gym.tasks.task import DEFAULT_BUDGETS, Budgets, FailureReason, Task, Verdict
from osint_gym.world.graph import World

DEFAULT_MAX_STEPS = DEFAULT_BUDGETS.max_steps
DEFAULT_MAX_PARALLEL_CALLS = DEFAULT_BUDGETS.max_parallel_calls
DEFAULT_MAX_OBSERVATION_CHARS = DEFAULT_BUDGETS.max_observation_chars
MAX_QUESTION_CHARS = 400
MAX_HOPS = 5


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def mentions(text: str, phrase: str) -> bool:
    """Whether ``phrase`` occurs in ``text`` as a whole word (case-insensitive).

    Word boundaries treat '_', digits, '@' and '.' inside a word as part of it, so "person_1" is not
    found in "person_12" nor "@ann" in "@ann.lee". A plain scan with str.find rather than a regex:
    verification checks thousands of distinct phrases, and compiling a pattern for each cost more
    than the search itself.
    """
    if not phrase:
        return False
    low, needle = text.lower(), phrase.lower()
    start = low.find(needle)
    while start != -1:
        end = start + len(needle)
        before = low[start - 1] if start else ""
        after = low[end] if end < len(low) else ""
        after2 = low[end + 1] if end + 1 < len(low) else ""
        ok_before = not before or not (_is_word(before) or before in "@.")
        ok_after = not after or not (_is_word(after) or (after == "." and _is_word(after2)))
        if ok_before and ok_after:
            return True
        start = low.find(needle, start + 1)
    return False


def names_entity(world: World, text: str, entity_id: str) -> bool:
    """The text names the entity by id, by its unambiguous surface form, or by a unique name."""
    if mentions(text, entity_id) or mentions(text, world.surface(entity_id)):
        return True
    label = world.label(entity_id)
    return len(world.by_name.get(label.lower(), ())) == 1 and mentions(text, label)


def world_fingerprint(world: World) -> str:
    """`World.fingerprint`, computed once per world object (worlds are never mutated)."""
    fp = world.cache.get("fingerprint")
    if fp is None:
        fp = world.cache["fingerprint"] = world.fingerprint()
    return fp


def verify_task(
    world: World,
    task: Task,
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_parallel_calls: int = DEFAULT_MAX_PARALLEL_CALLS,
    max_observation_chars: int = DEFAULT_MAX_OBSERVATION_CHARS,
    check_oracle: bool = True,
    observation_format: str = "json",
) -> Verdict:
    """Whether ``task`` may be served in ``world`` under these budgets (the oracle runs under the
    same step, parallel-call and observation budgets, and reads observations cut the way the
    served ``observation_format`` cuts them)."""
    for answer in task.answers:
        if answer not in world:
            return Verdict(FailureReason.UNKNOWN_ENTITY, f"answer {answer!r} is not an entity of this world")
    for edge in task.evidence:
        if not world.has_edge(*edge):
            return Verdict(FailureReason.EDGE_NOT_IN_WORLD, f"evidence edge {tuple(edge)} is not in the world")
    if len(task.question) > MAX_QUESTION_CHARS:
        return Verdict(
            FailureReason.TOO_LARGE, f"question has {len(task.question)} characters (max {MAX_QUESTION_CHARS})"
        )
    for answer in task.answers:
        if names_entity(world, task.question, answer):
            return Verdict(FailureReason.ANSWER_LEAKED, f"the question names the answer {answer!r}")
    query = task.query
    if query is None:
        return Verdict(FailureReason.MALFORMED, "task has no structured query to verify against")
    if query.n_hops > MAX_HOPS:
        return Verdict(FailureReason.TOO_LARGE, f"{query.n_hops} hops (max {MAX_HOPS})")
    for named in query.named_entities():
        if named not in world:
            return Verdict(FailureReason.UNKNOWN_ENTITY, f"query entity {named!r} is not in the world")
        if not names_entity(world, task.question, named):
            return Verdict(FailureReason.START_NOT_NAMED, f"the question does not name {world.surface(named)!r}")
    determined = query.evaluate(world)
    if set(determined) != set(task.answers):
        if set(task.answers) < set(determined):
            return Verdict(FailureReason.AMBIGUOUS, f"the question fits {len(determined)} entities")
        return Verdict(
            FailureReason.ANSWER_MISMATCH, f"the question determines {determined[:5]}, not {list(task.answers)}"
        )
    if check_oracle:
        result = run_oracle(world, query, max_steps, max_parallel_calls, max_observation_chars, observation_format)
        if result.answer is None or not set(result.found) <= set(task.answers) or (
            len(task.answers) == 1 and len(result.found) != 1
        ):
            why = "ran out of steps" if result.out_of_budget else f"found {list(result.found)[:5]}"
            return Verdict(FailureReason.UNSOLVABLE, f"the tool-only oracle {why} within {max_steps} steps")
    return Verdict.success()


def verified(world: World, task: Task, budgets: Budgets = DEFAULT_BUDGETS) -> Task:
    """``task`` carrying a stamp for ``world`` and ``budgets``: as it is if its stamp already covers
    them (nothing is verified twice), else verified now; a task that fails raises `TaskError`.

    The observation budget is always the served one: a cut observation can hide what the task needs.
    Step and parallel-call budgets below the defaults are a harder evaluation of a valid task (the
    episode may truncate), so those are verified at no less than the defaults."""
    fp = world_fingerprint(world)
    budgets = Budgets(
        max(budgets.max_steps, DEFAULT_BUDGETS.max_steps),
        max(budgets.max_parallel_calls, DEFAULT_BUDGETS.max_parallel_calls),
        budgets.max_observation_chars,
        budgets.observation_format,
    )
    if task.verified_for(fp, budgets):
        return task
    verdict = verify_task(
        world,
        task,
        max_steps=budgets.max_steps,
        max_parallel_calls=budgets.max_parallel_calls,
        max_observation_chars=budgets.max_observation_chars,
        observation_format=budgets.observation_format,
    )
    if not verdict.ok:
        raise TaskError(f"task {task.task_id!r} is not valid in world {world.name!r} under {budgets.to_dict()}: "
                        f"{verdict.reason.value}: {verdict.detail}")
    return task.stamped(fp, budgets)

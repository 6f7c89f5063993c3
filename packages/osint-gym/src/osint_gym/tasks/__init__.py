"""Procedural, verified investigation tasks."""

from osint_gym.tasks.duplicates import DuplicateFilter, task_signature
from osint_gym.tasks.families import create_family, list_families, register_family
from osint_gym.tasks.oracle import OracleResult, oracle_plan, run_oracle
from osint_gym.tasks.query import Filter, Hop, Query
from osint_gym.tasks.sampler import TaskSampler, TaskStream
from osint_gym.tasks.task import (
    DEFAULT_BUDGETS,
    DIFFICULTIES,
    Budgets,
    FailureReason,
    Stamp,
    Task,
    Verdict,
    difficulty_for_hops,
    load_jsonl,
    save_jsonl,
)
from osint_gym.tasks.verify import (
    DEFAULT_MAX_PARALLEL_CALLS,
    DEFAULT_MAX_STEPS,
    mentions,
    names_entity,
    verified,
    verify_task,
    world_fingerprint,
)

__all__ = [
    "DEFAULT_BUDGETS",
    "Budgets",
    "Stamp",
    "verified",
    "world_fingerprint",
    "DEFAULT_MAX_PARALLEL_CALLS",
    "DEFAULT_MAX_STEPS",
    "DIFFICULTIES",
    "DuplicateFilter",
    "FailureReason",
    "Filter",
    "Hop",
    "OracleResult",
    "Query",
    "Task",
    "TaskSampler",
    "TaskStream",
    "Verdict",
    "create_family",
    "difficulty_for_hops",
    "list_families",
    "load_jsonl",
    "mentions",
    "names_entity",
    "oracle_plan",
    "register_family",
    "run_oracle",
    "save_jsonl",
    "task_signature",
    "verify_task",
]

"""OSINT-v0 for TRL's native tool loop (``GRPOTrainer(environment_factory=...)``).

TRL calls ``reset(**row)`` before each rollout, exposes every public method as a tool (from its
type hints and docstring), runs the tool calls the model emits, and adds ``get_reward()`` to the
rewards. This class forwards each tool call to an `OSINTEnv` step, so the env's parsing, budgets,
evidence graph and reward apply unchanged. It imports nothing from TRL.

Example (a Qwen-family instruct model, whose chat template TRL recognises)::

    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer
    from osint_gym.benchmark import benchmark_tasks
    from osint_gym.trl_env import OSINTToolEnv, task_rows

    rows = task_rows(benchmark_tasks("v0:train", difficulty="easy", limit=512), split="v0:train")
    trainer = GRPOTrainer(
        model="Qwen/Qwen2.5-0.5B-Instruct",
        args=GRPOConfig(max_completion_length=1024, num_generations=8),
        train_dataset=Dataset.from_list(rows),
        environment_factory=OSINTToolEnv,   # reward: OSINTToolEnv.get_reward
    )
    trainer.train()
"""

from __future__ import annotations

import json
from typing import Any

from osint_gym.env import OSINTEnv
from osint_gym.reward import score_episode
from osint_gym.tasks import Task


def task_rows(tasks: list[Task], split: str) -> list[dict[str, Any]]:
    """Dataset rows for `OSINTToolEnv`: the question as the prompt, the task and its world as columns."""
    return [{"prompt": [{"role": "user", "content": t.question}], "task": json.dumps(t.to_dict()), "world": split} for t in tasks]


class OSINTToolEnv:
    """One OSINT-v0 episode per rollout, its tools as methods."""

    def __init__(self, max_steps: int = 24, max_parallel_calls: int = 4, max_observation_chars: int = 4000) -> None:
        self.max_steps, self.max_parallel_calls, self.max_observation_chars = max_steps, max_parallel_calls, max_observation_chars
        self.env: OSINTEnv | None = None
        self.done = False
        self.info: dict[str, Any] = {}

    def reset(self, **row: Any) -> str:
        from osint_gym.benchmark import benchmark_world

        task = Task.from_dict(json.loads(row["task"]) if isinstance(row["task"], str) else row["task"])
        self.env = OSINTEnv(world=benchmark_world(row.get("world", "v0:train")), tasks=[task], max_steps=self.max_steps,
                            max_parallel_calls=self.max_parallel_calls, max_observation_chars=self.max_observation_chars)
        obs, _ = self.env.reset(seed=0, options={"task_index": 0})
        self.done, self.info = False, {}
        return obs

    def _step(self, action: dict[str, Any]) -> str:
        if self.env is None:
            return "call reset() first"
        if self.done:
            return "The episode is over."
        obs, _, terminated, truncated, info = self.env.step(action)
        self.done, self.info = terminated or truncated, info
        return obs

    def get_reward(self) -> float:
        """The episode's osint-gym reward (an unanswered episode scores its penalties only)."""
        if self.env is None:
            return 0.0
        if "reward_breakdown" in self.info:
            return float(self.info["reward_breakdown"]["total"])
        env = self.env
        return float(score_episode(gold_answers=env.task.answers, gold_evidence=env.task.evidence, submitted=None,
                                   penalties_paid=env.penalty_paid, cfg=env.reward_config).total)

    # ------------------------------------------------------------------ tools (docstrings are the schemas)
    def search_posts(self, query: str, limit: int = 10) -> str:
        """Full-text search over microblog posts; every word must match.

        Args:
            query: Words, handles, names or ids to look for.
            limit: Maximum number of results, 1 to 20.
        """
        return self._step({"tool": "search_posts", "args": {"query": query, "limit": limit}})

    def get_post(self, post_id: str) -> str:
        """Fetch one post: author, text, mentioned accounts, referenced entities.

        Args:
            post_id: A post id such as post_12.
        """
        return self._step({"tool": "get_post", "args": {"post_id": post_id}})

    def get_user_posts(self, account: str, limit: int = 10) -> str:
        """Posts written by an account.

        Args:
            account: Account id or @handle.
            limit: Maximum number of results, 1 to 20.
        """
        return self._step({"tool": "get_user_posts", "args": {"account": account, "limit": limit}})

    def get_mentions(self, account: str, limit: int = 10) -> str:
        """Posts that mention an account.

        Args:
            account: Account id or @handle.
            limit: Maximum number of results, 1 to 20.
        """
        return self._step({"tool": "get_mentions", "args": {"account": account, "limit": limit}})

    def search_threads(self, query: str, limit: int = 10) -> str:
        """Full-text search over forum threads and their comments.

        Args:
            query: Words, handles, names or ids to look for.
            limit: Maximum number of results, 1 to 20.
        """
        return self._step({"tool": "search_threads", "args": {"query": query, "limit": limit}})

    def get_thread(self, thread_id: str) -> str:
        """Fetch one forum thread with its comments.

        Args:
            thread_id: A thread id such as thread_3.
        """
        return self._step({"tool": "get_thread", "args": {"thread_id": thread_id}})

    def get_user_activity(self, account: str, limit: int = 10) -> str:
        """Forum threads an account started and threads it commented on.

        Args:
            account: Account id or @handle.
            limit: Maximum number of results, 1 to 20.
        """
        return self._step({"tool": "get_user_activity", "args": {"account": account, "limit": limit}})

    def get_profile(self, handle_or_id: str) -> str:
        """The public page of any entity: a person's directory entry, an account profile, an organization, location, event, post or thread.

        Args:
            handle_or_id: An entity id, an @handle or an exact name.
        """
        return self._step({"tool": "get_profile", "args": {"handle_or_id": handle_or_id}})

    def search_people(self, name: str = "", organization: str = "", location: str = "", limit: int = 10) -> str:
        """Search the people directory by name, employer and/or city; all given filters must match.

        Args:
            name: Words of the person's name.
            organization: Organization id or exact name.
            location: Location id or exact name.
            limit: Maximum number of results, 1 to 20.
        """
        args = {k: v for k, v in (("name", name), ("organization", organization), ("location", location)) if v}
        return self._step({"tool": "search_people", "args": {**args, "limit": limit}})

    def get_connections(self, person_or_account: str) -> str:
        """Who a person knows, or whom an account follows and is followed by.

        Args:
            person_or_account: Person id, account id or @handle.
        """
        return self._step({"tool": "get_connections", "args": {"person_or_account": person_or_account}})

    def search_notes(self, query: str, limit: int = 10) -> str:
        """Search the records already retrieved in this episode.

        Args:
            query: Words to look for.
            limit: Maximum number of results, 1 to 20.
        """
        return self._step({"tool": "search_notes", "args": {"query": query, "limit": limit}})

    def add_edge(self, src: str, rel: str, dst: str) -> str:
        """Add an edge shown by a record you retrieved to your evidence graph.

        Args:
            src: Head entity id.
            rel: Relation name, e.g. alias_of.
            dst: Tail entity id.
        """
        return self._step({"add_edge": [src, rel, dst]})

    def answer(self, entity_id: str) -> str:
        """Submit one entity id as the final answer; this ends the episode.

        Args:
            entity_id: The id of the entity the question asks for.
        """
        return self._step({"answer": entity_id})

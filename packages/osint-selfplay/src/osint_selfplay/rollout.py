"""Multi-turn rollouts through OSINT-v0 for GRPO, as a TRL ``rollout_func``.

One rollout is one episode: reset on the row's task, then model turn -> osint-gym parses the action
-> env step -> the observation is appended as the next user turn -> model turn ... until the agent
answers, the env's step budget (``max_turns``) ends, or the token budget (the trainer's
``max_completion_length``, for the whole trajectory) would be exceeded. An episode cut by the token
budget is scored as unanswered, never as an error.

The completion ids interleave model tokens (``env_mask`` 1, trained) and environment tokens
(observations and chat-template glue, ``env_mask`` 0, excluded from the loss). The reward is the
episode's osint-gym reward, computed by the env from what happened; the counts the env measured
(tool calls, critical steps, useful parallel calls) travel with each rollout to the reward function.

Generation goes through the trainer's own single-turn generator, so the same code runs with
Hugging Face generation on a CPU and with vLLM on a GPU.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from osint_gym import chat
from osint_gym.env import OSINTEnv
from osint_gym.reward import score_episode
from osint_gym.tasks import Task

from osint_selfplay.trl_compat import generate_turn
from osint_selfplay.worlds import WorldPool


def prompt_key(prompt: Any) -> str:
    return json.dumps(prompt, sort_keys=True)


def episode_prompt(pool: WorldPool, task: Task, world_seed: int, max_turns: int, max_parallel_calls: int,
                   max_observation_chars: int) -> list[dict[str, str]]:
    """The row prompt of a multi-turn task: the system message and the env's reset observation."""
    env = OSINTEnv(world=pool.world(world_seed), tasks=[task], max_steps=max_turns, max_parallel_calls=max_parallel_calls,
                   max_observation_chars=max_observation_chars)
    obs, _ = env.reset(seed=0, options={"task_index": 0})
    return chat.start_messages(obs)


@dataclass
class _Episode:
    env: OSINTEnv
    messages: list[dict[str, str]]
    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    done: bool = False
    cut: bool = False  # ended by the token budget
    info: dict[str, Any] = field(default_factory=dict)


class MultiTurnRollout:
    """``rollout_func(prompts, trainer) -> dict`` for GRPOTrainer."""

    def __init__(self, pool: WorldPool, rows: list[dict[str, Any]], *, max_turns: int, max_parallel_calls: int,
                 max_observation_chars: int) -> None:
        self.pool = pool
        self.tasks = {prompt_key(r["prompt"]): (Task.from_dict(json.loads(r["task"])), r["world_seed"]) for r in rows}
        self.max_turns, self.max_parallel_calls, self.max_observation_chars = max_turns, max_parallel_calls, max_observation_chars
        self.stats: list[dict[str, Any]] = []  # one record per rollout, for the run summary

    # ------------------------------------------------------------------ chat glue
    @staticmethod
    def _render(tokenizer: Any, messages: list[dict[str, str]], gen: bool) -> str:
        return tokenizer.apply_chat_template(messages, add_generation_prompt=gen, tokenize=False)

    def env_ids(self, tokenizer: Any, messages: list[dict[str, str]], content: str, observation: str, ended_with_eos: bool) -> list[int]:
        """Tokens between the model's turn and its next one: the end of the assistant turn (unless the
        model already emitted the end-of-turn token), the observation as a user turn, the next
        assistant header. Derived from the chat template, so any template works."""
        with_turn = messages + [{"role": "assistant", "content": content}]
        closed = self._render(tokenizer, with_turn, gen=False)
        nxt = self._render(tokenizer, with_turn + [chat.observation_message(observation)], gen=True)
        start = self._render(tokenizer, messages, gen=True)
        glue = closed[closed.index(content, len(start)) + len(content):] if content else closed[len(start):]
        eos = tokenizer.eos_token or ""
        if ended_with_eos and eos and glue.startswith(eos):
            glue = glue[len(eos):]
        return tokenizer(glue + nxt[len(closed):], add_special_tokens=False)["input_ids"]

    # ------------------------------------------------------------------ rollout
    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        tokenizer = trainer.processing_class
        budget = trainer.max_completion_length
        eos_ids = set(getattr(trainer, "eos_token_ids", [tokenizer.eos_token_id]))
        episodes: list[_Episode] = []
        for prompt in prompts:
            task, world_seed = self.tasks[prompt_key(prompt)]
            env = OSINTEnv(world=self.pool.world(world_seed), tasks=[task], max_steps=self.max_turns,
                           max_parallel_calls=self.max_parallel_calls, max_observation_chars=self.max_observation_chars)
            env.reset(seed=0, options={"task_index": 0})  # every member of a group starts from the same state
            ids = tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=True)
            ids = ids["input_ids"] if hasattr(ids, "keys") else list(ids)
            episodes.append(_Episode(env, list(prompt), ids))
        while True:
            active = [e for e in episodes if not e.done]
            if not active:
                break
            outs = generate_turn(trainer, [e.prompt_ids + e.completion_ids for e in active])
            for ep, ids in zip(active, outs):
                ids = list(ids)[: budget - len(ep.completion_ids)]
                ep.completion_ids += ids
                ep.env_mask += [1] * len(ids)
                ended = bool(ids) and ids[-1] in eos_ids
                if not ended and len(ep.completion_ids) >= budget:
                    ep.done = ep.cut = True  # the turn did not finish inside the budget
                    continue
                content = tokenizer.decode(ids, skip_special_tokens=True)
                obs, _, terminated, truncated, info = ep.env.step(content)
                ep.info = info
                ep.messages = ep.messages + [{"role": "assistant", "content": content}]
                if terminated or truncated:
                    ep.done = True
                    continue
                extra = self.env_ids(tokenizer, ep.messages[:-1], content, obs, ended)
                if len(ep.completion_ids) + len(extra) >= budget:
                    ep.done = ep.cut = True  # no room for the observation and another turn
                    continue
                ep.completion_ids += extra
                ep.env_mask += [0] * len(extra)
                ep.messages = ep.messages + [chat.observation_message(obs)]
        return self._result(episodes)

    def _result(self, episodes: list[_Episode]) -> dict[str, Any]:
        out: dict[str, Any] = {"prompt_ids": [], "completion_ids": [], "logprobs": None, "env_mask": [], "env_reward": [],
                               "tool_calls": [], "critical_steps": [], "parallel_calls": [], "useful_parallel_calls": [],
                               "cut_by_budget": [], "well_formed_tool_call": []}
        for ep in episodes:
            env = ep.env
            if "reward_breakdown" in ep.info:
                total = ep.info["reward_breakdown"]["total"]
            else:  # cut by the token budget: scored as unanswered, like a truncated episode
                total = score_episode(gold_answers=env.task.answers, gold_evidence=env.task.evidence, submitted=None,
                                      penalties_paid=env.penalty_paid, cfg=env.reward_config).total
            summary = env.call_counts()
            out["prompt_ids"].append(ep.prompt_ids)
            out["completion_ids"].append(ep.completion_ids)
            out["env_mask"].append(ep.env_mask)
            out["env_reward"].append(total)
            out["tool_calls"].append(env.tool_calls)
            out["critical_steps"].append(env.critical_steps)
            out["parallel_calls"].append(summary["parallel_calls"])
            out["useful_parallel_calls"].append(summary["useful_parallel_calls"])
            out["cut_by_budget"].append(ep.cut)
            out["well_formed_tool_call"].append(env.tool_calls > 0)
            self.stats.append({k: out[k][-1] for k in ("env_reward", "tool_calls", "critical_steps", "parallel_calls",
                                                       "useful_parallel_calls", "cut_by_budget", "well_formed_tool_call")})
        return out

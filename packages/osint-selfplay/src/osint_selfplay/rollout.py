"""Multi-turn rollouts through OSINT-v0 for GRPO, as a TRL ``rollout_func``.

One rollout is one episode: reset on the row's task, then model turn -> osint-gym parses the action
-> env step -> the observation is appended as the next user (or tool) turn -> model turn ... until the agent
answers, the env's step budget (``spec.budgets.max_steps``) ends, or the token budget (the trainer's
``max_completion_length``, for the whole trajectory) would be exceeded. An episode cut by the token
budget is scored as unanswered, never as an error.

The completion ids interleave model tokens (``env_mask`` 1, trained) and environment tokens
(observations and chat-template glue, ``env_mask`` 0, excluded from the loss). Where the tokenizer's
chat template renders tools (`osint_gym.chat.supports_tools`, as instruct models' templates do), the
conversation is in that template's own format: the env's tool schemas go to the template, the
model's calls become its assistant tool calls and the observations ``tool`` messages; otherwise the
plain JSON-action format (`osint_gym.chat`). The reward is the
episode's osint-gym reward, computed by the env from what happened; the counts the env measured
(tool calls, critical steps, useful parallel calls) travel with each rollout to the reward function.

Episodes run through osint-gym's one episode loop (`osint_gym.spec.EpisodeSpec.play`) with a batch
agent that generates every pending turn together; when the token budget runs out the agent stops
its episode, which the env scores as its own truncation. Everything logged comes from the env's
episode record. Generation goes through the trainer's own single-turn generator, so the same code
runs with Hugging Face generation on a CPU and with vLLM on a GPU; with ``decoding`` ``"exact"`` or
``"prefix"`` (and no vLLM), `osint_eval.decoding.Decoder` decodes every turn instead, each row
limited to what is left of its token budget (``"prefix"`` prefills only the tokens a turn adds).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from osint_gym import chat
from osint_gym.env import OSINTEnv
from osint_gym.episode import EndReason, EpisodeRecord
from osint_gym.spec import EpisodeSpec
from osint_gym.tasks import Task
from osint_selfplay.data import prompt_key
from osint_selfplay.errors import SelfPlayError
from osint_selfplay.results import RolloutStats
from osint_selfplay.trl_compat import generate_turn, rollout_decoder
from osint_selfplay.worlds import WorldPool


@dataclass
class _Tokens:
    messages: list[dict[str, Any]]
    prompt_ids: list[int]
    tools: list[dict[str, Any]] | None  # the env's tool schemas, given to a native template (None: plain format)
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    last: str | None = None  # the model's last turn, once it has taken one
    last_ended: bool = False  # whether that turn ended with an end-of-turn token


class _TokenAgent:
    """The policy under training as a `BatchAgent`: one generation call per turn for every pending
    episode, token ids and the env mask kept per episode, ``None`` once the token budget is spent."""

    def __init__(self, rollout: MultiTurnRollout, trainer: Any) -> None:
        self.rollout, self.trainer, self.spec = rollout, trainer, rollout.spec
        self.tokenizer = trainer.processing_class
        self.budget = trainer.max_completion_length
        self.eos_ids = set(getattr(trainer, "eos_token_ids", [self.tokenizer.eos_token_id]))
        self.native = chat.supports_tools(getattr(self.tokenizer, "chat_template", None))
        self.state: dict[int, _Tokens] = {}
        self.decoder = rollout_decoder(trainer, rollout.decoding)

    def reset(self, index: int, env: OSINTEnv, observation: str, info: dict[str, Any]) -> None:
        # the spec's opening, as evaluation builds it (the row's prompt is its plain form, the rollout's key)
        messages = self.spec.start_messages(observation, info, native=self.native)
        tools = info["tools"] if self.native else None
        ids = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                                 **self.spec.template_kwargs(info, self.native))
        self.state[index] = _Tokens(messages, ids["input_ids"] if hasattr(ids, "keys") else list(ids), tools)

    def _add_observation(self, ep: _Tokens, observation: str) -> bool:
        """Append the environment's tokens (masked out of the loss); False if they do not fit."""
        assert ep.last is not None
        turn = ep.messages[-1]
        extra = self.rollout.env_ids(self.tokenizer, ep.messages[:-1], ep.last, observation, ep.last_ended,
                                     native=self.native, tools=ep.tools)
        if len(ep.completion_ids) + len(extra) >= self.budget:
            return False  # no room for the observation and another turn
        ep.completion_ids += extra
        ep.env_mask += [0] * len(extra)
        ep.messages += chat.result_messages(observation, turn, native=self.native)
        return True

    def act(self, pending: list[tuple[int, str]]) -> list[str | None]:
        actions: dict[int, str | None] = {}
        ready = []
        for i, observation in pending:
            ep = self.state[i]
            if ep.last is not None and not self._add_observation(ep, observation):
                actions[i] = None  # the env scores the stop as its own truncation (end="token_budget")
            else:
                ready.append(i)
        if ready:
            eps = [self.state[i] for i in ready]
            start = time.perf_counter()
            outs = generate_turn(self.trainer, [ep.prompt_ids + ep.completion_ids for ep in eps], self.decoder,
                                 [self.budget - len(ep.completion_ids) for ep in eps])
            self.rollout.decode_seconds += time.perf_counter() - start
            for i, ids in zip(ready, outs):
                actions[i] = self._take_turn(self.state[i], list(ids))
        return [actions[i] for i, _ in pending]

    def _take_turn(self, ep: _Tokens, ids: list[int]) -> str | None:
        ids = ids[: self.budget - len(ep.completion_ids)]
        ep.completion_ids += ids
        ep.env_mask += [1] * len(ids)
        ended = bool(ids) and ids[-1] in self.eos_ids
        if not ended and len(ep.completion_ids) >= self.budget:
            return None  # the turn did not finish inside the budget
        content = self.tokenizer.decode(ids, skip_special_tokens=True)
        ep.messages.append(chat.assistant_message(content, native=self.native))
        ep.last, ep.last_ended = content, ended
        return content


class MultiTurnRollout:
    """``rollout_func(prompts, trainer) -> dict`` for GRPOTrainer."""

    def __init__(self, pool: WorldPool, rows: list[dict[str, Any]], *, spec: EpisodeSpec,
                 decoding: str = "generate") -> None:
        self.pool, self.spec = pool, spec
        self.decoding = decoding  # see `osint_selfplay.trl_compat.rollout_decoder`
        self.tasks = {prompt_key(r["prompt"]): (Task.from_dict(json.loads(r["task"])), r["world_seed"]) for r in rows}
        self.stats: list[dict[str, Any]] = []  # one record per rollout, for the run summary
        self.decode_seconds = 0.0  # time spent generating model turns, summed over rollouts

    # ------------------------------------------------------------------ chat glue
    @staticmethod
    def _render(
        tokenizer: Any, messages: list[dict[str, Any]], gen: bool, tools: list[dict[str, Any]] | None = None
    ) -> str:
        return tokenizer.apply_chat_template(messages, add_generation_prompt=gen, tokenize=False,
                                             **chat.template_kwargs(tools, tools is not None))

    def env_ids(
        self,
        tokenizer: Any,
        messages: list[dict[str, Any]],
        content: str,
        observation: str,
        ended_with_eos: bool,
        *,
        native: bool = False,
        tools: list[dict[str, Any]] | None = None,
    ) -> list[int]:
        """Tokens between the model's turn and its next one: the end of the assistant turn (unless the
        model already emitted the end-of-turn token), the observation (a user turn, or in the native
        format a tool message), the next assistant header. Derived from the chat template, so any
        template works; a template whose rendering is not prefix-stable is refused with a clear error."""
        turn = chat.assistant_message(content, native=native)
        with_turn = messages + [turn]
        closed = self._render(tokenizer, with_turn, False, tools)
        nxt = self._render(tokenizer, with_turn + chat.result_messages(observation, turn, native=native), True, tools)
        start = self._render(tokenizer, messages, True, tools)
        # the end of the turn: what the template writes after this text as the turn's content (a native
        # template re-renders the model's calls in its own spelling, so the text turn is the reference)
        text = (
            closed
            if "tool_calls" not in turn
            else self._render(tokenizer, messages + [chat.assistant_message(content)], False, tools)
        )
        at = text.find(content, len(start)) if content else len(start)
        glue = text[at + len(content):]
        if at < 0 or not (nxt.startswith(closed) and closed.endswith(glue)):
            raise SelfPlayError(
                "the chat template does not render the conversation prefix by prefix (or closes tool-call "
                "turns unlike text turns), so environment tokens cannot be separated from the model's"
            )
        eos = tokenizer.eos_token or ""
        if ended_with_eos and eos and glue.startswith(eos):
            glue = glue[len(eos):]
        return tokenizer(glue + nxt[len(closed):], add_special_tokens=False)["input_ids"]

    # ------------------------------------------------------------------ rollout
    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        envs = []
        for prompt in prompts:
            task, world_seed = self.tasks[prompt_key(prompt)]
            envs.append(self.spec.make_env(self.pool.world(world_seed), task))
        agent = _TokenAgent(self, trainer)
        # every member of a group starts from the same state: the same task, reset the same way (the spec's)
        records = self.spec.play(envs, agent)
        return self._result(records, [agent.state[i] for i in range(len(envs))])

    def _result(self, records: list[EpisodeRecord], tokens: list[_Tokens]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "prompt_ids": [],
            "completion_ids": [],
            "logprobs": None,
            "env_mask": [],
            "env_reward": [],
            "tool_calls": [],
            "critical_steps": [],
            "parallel_calls": [],
            "useful_parallel_calls": [],
            "cut_by_budget": [],
            "well_formed_tool_call": [],
        }
        for record, ep in zip(records, tokens):
            out["prompt_ids"].append(ep.prompt_ids)
            out["completion_ids"].append(ep.completion_ids)
            out["env_mask"].append(ep.env_mask)
            out["env_reward"].append(record.reward)
            out["tool_calls"].append(record.tool_calls)
            out["critical_steps"].append(record.critical_steps)
            out["parallel_calls"].append(record.parallel_calls)
            out["useful_parallel_calls"].append(record.useful_parallel_calls)
            out["cut_by_budget"].append(record.end == EndReason.TOKEN_BUDGET)
            out["well_formed_tool_call"].append(record.tool_calls > 0)
            self.stats.append(
                {
                    k: out[k][-1]
                    for k in (
                        "env_reward",
                        "tool_calls",
                        "critical_steps",
                        "parallel_calls",
                        "useful_parallel_calls",
                        "cut_by_budget",
                        "well_formed_tool_call",
                    )
                }
            )
        return out

    def summary(self) -> RolloutStats:
        """The phase's rollouts for the run summary: their count, shares and means, and decoding time."""
        n = max(1, len(self.stats))
        return RolloutStats(
            n=len(self.stats),
            well_formed_tool_call_share=sum(s["well_formed_tool_call"] for s in self.stats) / n,
            cut_by_budget_share=sum(s["cut_by_budget"] for s in self.stats) / n,
            mean_tool_calls=sum(s["tool_calls"] for s in self.stats) / n,
            mean_critical_steps=sum(s["critical_steps"] for s in self.stats) / n,
            mean_env_reward=sum(s["env_reward"] for s in self.stats) / n,
            decoding=self.decoding,
            decode_seconds=self.decode_seconds,
        )

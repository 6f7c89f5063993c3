"""Policies: one interface (a batch of conversations in, a batch of completions out).

* `HFPolicy`: a Hugging Face causal LM (hub id, local folder or ``tiny:`` spec), batched generation,
  chat template applied, greedy by default, seedable sampling. Loaded once per run.
* `OpenAIPolicy`: any OpenAI-compatible ``/v1/chat/completions`` endpoint (vLLM, Ollama, OpenAI,
  ``transformers serve``); the key comes from an environment variable.
* Scripted baselines: `RandomGuessPolicy` (chance level: a random entity of the asked type among
  what the policy has seen), `RandomValidPolicy` (random valid tool calls, then a random answer)
  and `OraclePolicy` (osint-gym's tool-only oracle: the upper bound); the shortcut baselines live
  in `osint_eval.baselines` (its registry `SHORTCUTS`). The interface is `osint_eval.interface`.

Scripted policies also receive the task and the env, but only the oracle reads the task's
structured query (it is the privileged upper bound); the others use what the agent could see.
"""

from __future__ import annotations

import json
import os
import random
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from osint_eval.baselines import SHORTCUTS, ShortcutPolicy
from osint_eval.baselines import SHORTCUTS_BY_MODE as SHORTCUTS_BY_MODE  # re-exported
from osint_eval.errors import EvalError
from osint_eval.interface import Policy as Policy  # re-exported: the interface every policy implements
from osint_eval.interface import PolicyInput as PolicyInput
from osint_eval.reading import HANDLE, ID, answer_prefix
from osint_gym import chat
from osint_gym.agents import OracleAgent
from osint_gym.single_turn import random_guess
from osint_gym.tasks import DEFAULT_BUDGETS, run_oracle


# ---------------------------------------------------------------------------- scripted baselines
class RandomGuessPolicy(Policy):
    """Chance level: answers a random entity of the asked type among those it has seen.

    Single-turn: from the context. Multi-turn: it first looks up the first id or handle the
    question names, then guesses among the ids that came back."""

    def __init__(self, seed: int = 0) -> None:
        self.name = "random-guess"
        self.seed = seed

    def act(self, batch: list[PolicyInput]) -> list[str]:
        out = []
        for item in batch:
            rng = random.Random(f"{self.seed}:{item.task.task_id}:{item.turn}")
            if item.context is not None:
                out.append(random_guess(item.task, item.context, rng))
                continue
            if item.turn == 0:
                refs = ID.findall(item.task.question) + HANDLE.findall(item.task.question)
                if refs:
                    out.append(json.dumps({"tool": "get_profile", "args": {"handle_or_id": refs[0]}}))
                    continue
            prefix = answer_prefix(item.task)
            seen = [i for text in item.seen for i in ID.findall(text)]
            pool = [i for i in seen if prefix and i.startswith(prefix)] or seen
            out.append(json.dumps({"answer": rng.choice(pool) if pool else "none"}))
        return out


class RandomValidPolicy(Policy):
    """Random well-formed tool calls on ids it has seen, then a random seen id as the answer."""

    TOOLS = ("get_profile", "get_connections", "get_user_posts", "search_posts")

    def __init__(self, seed: int = 0, steps_before_answer: int = 3) -> None:
        self.name = "random-valid"
        self.seed = seed
        self.steps_before_answer = steps_before_answer

    def act(self, batch: list[PolicyInput]) -> list[str]:
        out = []
        for item in batch:
            rng = random.Random(f"{self.seed}:{item.task.task_id}:{item.turn}")
            seen = list(dict.fromkeys(i for text in item.seen for i in ID.findall(text) + HANDLE.findall(text)))
            if item.context is not None:
                ids = list(item.context.entities)
                out.append(rng.choice(ids) if ids else "none")
            elif item.turn >= self.steps_before_answer or not seen:
                ids = [s for s in seen if not s.startswith("@")]
                out.append(json.dumps({"answer": rng.choice(ids) if ids else "none"}))
            else:
                tool, ref = rng.choice(self.TOOLS), rng.choice(seen)
                arg = {"get_profile": "handle_or_id", "get_connections": "person_or_account",
                       "get_user_posts": "account", "search_posts": "query"}[tool]
                out.append(json.dumps({"tool": tool, "args": {arg: ref}}))
        return out


class OraclePolicy(Policy):
    """osint-gym's tool-only oracle: knows what the question means, reads facts from tools."""

    def __init__(self) -> None:
        self.name = "oracle"
        self._agents: dict[int, OracleAgent] = {}

    def act(self, batch: list[PolicyInput]) -> list[str]:
        out = []
        for item in batch:
            if item.context is not None:
                if item.task.query is None:
                    raise EvalError(
                        f"the oracle needs a task with a structured query; task {item.task.task_id!r} has none"
                    )
                result = run_oracle(
                    item.world, item.task.query, DEFAULT_BUDGETS.max_steps, DEFAULT_BUDGETS.max_parallel_calls
                )
                # the single-turn format: cited evidence lines, then the answer on the last line
                lines = [f"{e.head} {e.relation} {e.tail}" for e in result.evidence] + [result.answer or "none"]
                out.append("\n".join(lines))
                continue
            if item.turn == 0:
                agent = OracleAgent()
                agent.reset(item.env)
                self._agents[item.episode] = agent
            out.append(self._agents[item.episode].act(item.seen[-1]))
        return out


# ---------------------------------------------------------------------------- model policies
class HFPolicy(Policy):
    """A Hugging Face causal LM with batched generation (loaded once). If its chat template renders
    tools (``native_tools``), multi-turn conversations are in that template's own tool-call format
    and the env's tool schemas are passed to the template (see `osint_gym.chat`). ``decoding``: Hugging
    Face ``generate`` (``"generate"``), or `osint_eval.decoding.Decoder` in its ``"exact"`` or
    ``"prefix"`` mode (the fast paths for small models; ``"prefix"`` reuses each episode's earlier turns)."""

    is_model = True
    shardable = True

    def __init__(self, model: str, *, batch_size: int = 32, max_new_tokens: int = 64, temperature: float = 0.0,
                 top_p: float = 1.0, seed: int = 0, dtype: str = "auto", device: str | None = None,
                 decoding: str = "generate", shots: list[dict[str, Any]] | None = None) -> None:
        from osint_eval.modeling import DECODING_MODES, load_model_and_tokenizer

        if decoding not in DECODING_MODES:
            raise EvalError(f"decoding must be one of {', '.join(DECODING_MODES)}; got {decoding!r}")

        # shots: a few-shot demonstration (`fewshot.demonstrations`), turns put before each conversation's first
        # user turn; the model's name then says how many episodes it holds, so its rows are not the zero-shot ones
        self.shots = list(shots or [])
        self._shot_turns = [{"role": m["role"], "content": m["content"]} for m in self.shots]  # without the marker
        n_shots = sum(1 for m in self.shots if m["role"] == "user" and m.get("shot_start"))
        self.name = f"{model} ({n_shots}-shot)" if n_shots else model
        self.model_ref = model
        self._kwargs = {"batch_size": batch_size, "max_new_tokens": max_new_tokens, "temperature": temperature,
                        "top_p": top_p, "seed": seed, "dtype": dtype, "device": device, "decoding": decoding,
                        "shots": self.shots}
        self.model, self.tokenizer = load_model_and_tokenizer(model, dtype=dtype, device=device)
        self.decoder: Any = None
        if decoding != "generate":
            from osint_eval.decoding import Decoder

            self.decoder = Decoder(self.model, eos_token_ids=[self.tokenizer.eos_token_id],
                                   pad_token_id=self.tokenizer.pad_token_id, mode=decoding)
        if self.tokenizer.chat_template is None:
            raise EvalError(f"model {model!r} has no chat template; use an instruct/chat model")
        self.native_tools = chat.supports_tools(self.tokenizer.chat_template)
        if self.shots and self.native_tools:
            raise EvalError(f"model {model!r} renders tools in its template; few-shot demonstrations are plain-text "
                            "turns (use them with a model whose template renders no tools)")
        self.batch_size, self.max_new_tokens = batch_size, max_new_tokens
        self.temperature, self.top_p, self.seed = temperature, top_p, seed
        self.tokens_generated = 0
        self.last_unfinished: list[bool] = []

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its model reference and settings: a worker process loads the weights itself."""
        return (_hf_policy, (self.model_ref, self._kwargs))

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "type": "HFPolicy", "max_new_tokens": self.max_new_tokens,
                "temperature": self.temperature, "top_p": self.top_p, "seed": self.seed,
                "decoding": self._kwargs["decoding"], "shot_turns": len(self.shots)}

    def act(self, batch: list[PolicyInput]) -> list[str]:
        tools = [b.env.schemas if self.native_tools and b.env is not None else None for b in batch]
        return self.generate([self._with_shots(b.messages) for b in batch], tools=tools)

    def _with_shots(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``messages`` with the few-shot turns before their first user turn (after a system message)."""
        if not self.shots:
            return messages
        at = 1 if messages and messages[0]["role"] == "system" else 0
        return messages[:at] + self._shot_turns + messages[at:]

    def render(
        self, conversations: list[list[dict[str, Any]]], tools: list[list[dict[str, Any]] | None] | None = None
    ) -> list[str]:
        """The prompt text of each conversation (``tools[i]``: the schemas given to the template, if any)."""
        tools = tools or [None] * len(conversations)
        return [self.tokenizer.apply_chat_template(c, add_generation_prompt=True, tokenize=False,
                                                   **chat.template_kwargs(t, t is not None))
                for c, t in zip(conversations, tools)]

    def generate(self, conversations: list[list[dict[str, Any]]], *, num_return_sequences: int = 1,
                 temperature: float | None = None, tools: list[list[dict[str, Any]] | None] | None = None) -> list[str]:
        """Completions for each conversation (``num_return_sequences`` each, consecutive)."""
        temperature = self.temperature if temperature is None else temperature
        out: list[str] = [""] * (len(conversations) * num_return_sequences)
        unfinished: list[bool] = [False] * len(out)
        device = next(self.model.parameters()).device
        rendered = self.render(conversations, tools)
        # batches of similar length: a batch costs its longest prompt times its size (left padding)
        order = sorted(range(len(rendered)), key=lambda i: len(rendered[i]))
        n = num_return_sequences
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            texts = [rendered[i] for i in chunk]
            if self.decoder is not None:
                texts_out, cut = self._decode(texts, n, temperature, start)
            else:
                texts_out, cut = self._generate(texts, n, temperature, start, device)
            for k, i in enumerate(chunk):  # back in the callers' order, the n of a conversation consecutive
                out[i * n : (i + 1) * n], unfinished[i * n : (i + 1) * n] = (
                    texts_out[k * n : (k + 1) * n],
                    cut[k * n : (k + 1) * n],
                )
        self.last_unfinished = unfinished  # per completion: no end-of-turn token within max_new_tokens
        return out

    def _generate(self, texts: list[str], n: int, temperature: float, start: int,
                  device: Any) -> tuple[list[str], list[bool]]:
        """Hugging Face ``generate`` on one batch: the completions and, per completion, whether it has no end
        token."""
        import torch

        enc = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(device)
        kwargs: dict[str, Any] = {"max_new_tokens": self.max_new_tokens, "pad_token_id": self.tokenizer.pad_token_id,
                                  "eos_token_id": self.tokenizer.eos_token_id, "num_return_sequences": n}
        if temperature > 0:
            torch.manual_seed(self.seed + start)
            kwargs.update(do_sample=True, temperature=temperature, top_p=self.top_p)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        with torch.no_grad():
            gen = self.model.generate(**enc, **kwargs)
        new = gen[:, enc["input_ids"].shape[1]:]
        self.tokens_generated += int((new != self.tokenizer.pad_token_id).sum())
        cut = [not bool(row.any()) for row in (new == self.tokenizer.eos_token_id)]
        return self.tokenizer.batch_decode(new, skip_special_tokens=True), cut

    def _decode(self, texts: list[str], n: int, temperature: float, start: int) -> tuple[list[str], list[bool]]:
        """The same through `osint_eval.decoding.Decoder` (sampling draws from its own seeded generator)."""
        import torch

        ids = [row for row in self.tokenizer(texts, add_special_tokens=False)["input_ids"] for _ in range(n)]
        gen = torch.Generator().manual_seed(self.seed + start) if temperature > 0 else None
        new = self.decoder.generate(ids, max_new_tokens=self.max_new_tokens, temperature=temperature, top_p=self.top_p,
                                    generator=gen)
        self.tokens_generated += sum(len(t) for t in new)
        cut = [self.tokenizer.eos_token_id not in t for t in new]
        return self.tokenizer.batch_decode(new, skip_special_tokens=True), cut

    def close(self) -> None:
        del self.model


def _hf_policy(model: str, kwargs: dict[str, Any]) -> HFPolicy:
    return HFPolicy(model, **kwargs)


class OpenAIPolicy(Policy):
    """An OpenAI-compatible chat endpoint (``POST {base_url}/chat/completions``)."""

    is_model = True

    def __init__(self, base_url: str, model: str, *, api_key_env: str = "OPENAI_API_KEY", max_tokens: int = 64,
                 temperature: float = 0.0, timeout: float = 60.0, workers: int = 4, check: bool = True) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = f"{model}@{self.base_url}"
        self.api_key = os.environ.get(api_key_env, "")
        self.max_tokens, self.temperature, self.timeout, self.workers = max_tokens, temperature, timeout, workers
        if check:
            self._check_reachable()

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "type": "OpenAIPolicy", "model": self.model, "max_tokens": self.max_tokens,
                "temperature": self.temperature}

    def _request(self, path: str, payload: dict[str, Any] | None) -> dict[str, Any]:
        data = json.dumps(payload).encode() if payload is not None else None
        req = urllib.request.Request(
            self.base_url + path,
            data=data,
            method="POST" if data else "GET",
            headers={
                "Content-Type": "application/json",
                **({"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}),
            },
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return json.loads(resp.read().decode())
        except urllib.error.HTTPError as exc:
            body = exc.read().decode(errors="replace")[:200]
            raise EvalError(f"endpoint {self.base_url}{path} answered HTTP {exc.code}: {body}") from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            raise EvalError(f"endpoint {self.base_url} is unreachable: {getattr(exc, 'reason', exc)}") from None

    def _check_reachable(self) -> None:
        self._request("/models", None)

    def _complete(self, messages: list[dict[str, str]]) -> str:
        body = self._request("/chat/completions", {"model": self.model, "messages": messages,
                                                   "max_tokens": self.max_tokens, "temperature": self.temperature})
        try:
            return body["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise EvalError(f"endpoint returned an unexpected body: {json.dumps(body)[:200]}") from None

    def act(self, batch: list[PolicyInput]) -> list[str]:
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            return list(pool.map(self._complete, [b.messages for b in batch]))


SHORTCUT_NAMES = tuple(SHORTCUTS)  # the shortcut baselines' registry (`osint_eval.baselines`)
SCRIPTED = ("random-guess", "random-valid", "oracle") + SHORTCUT_NAMES
SCHEMES = ("openai:", "tiny:", "inspect:")


def check_policy_spec(spec: str) -> None:
    """Fail at once on a spec that is almost a scripted policy or a scheme (``orcale``, ``opnai:``): without
    this check it would be taken for a hub id and fail only after the network times out."""
    import difflib

    if spec in SCRIPTED or spec.startswith(SCHEMES) or os.path.exists(spec):
        return
    scheme, colon, _ = spec.partition(":")
    if colon and "/" not in scheme:
        close = difflib.get_close_matches(scheme + ":", SCHEMES, n=1, cutoff=0.5)
        hint = f"did you mean {close[0]!r}?" if close else f"known: {', '.join(SCHEMES)}"
        raise EvalError(f"unknown policy scheme {scheme + ':'!r} in {spec!r}; {hint}")
    close = difflib.get_close_matches(spec.lower(), SCRIPTED, n=1, cutoff=0.6)
    if close:
        raise EvalError(f"unknown policy {spec!r}; did you mean {close[0]!r}? (scripted: {', '.join(SCRIPTED)}; "
                        "a model is a local folder, a hub id or tiny:<hidden>x<layers>)")


def make_policy(spec: str, **kwargs: Any) -> Policy:
    """``random-guess``, ``random-valid``, ``oracle``, a shortcut baseline (`osint_eval.baselines`),
    ``openai:<base_url>#<model>``,
    ``inspect:<log>`` (the episodes of an Inspect eval of osint_gym/osint_v0), or a model
    (hub id, local folder, ``tiny:`` spec)."""
    check_policy_spec(spec)
    seed = kwargs.pop("seed", 0)
    if spec == "random-guess":
        return RandomGuessPolicy(seed)
    if spec == "random-valid":
        return RandomValidPolicy(seed)
    if spec == "oracle":
        return OraclePolicy()
    if spec in SHORTCUTS:
        return ShortcutPolicy(spec, seed)
    if spec.startswith("inspect:"):
        from osint_eval.inspect_log import InspectLogPolicy

        return InspectLogPolicy(spec[len("inspect:"):])
    if spec.startswith("openai:"):
        url, _, model = spec[len("openai:"):].partition("#")
        if not url or not model:
            raise EvalError(f"expected openai:<base_url>#<model>, got {spec!r}")
        return OpenAIPolicy(
            url, model, max_tokens=kwargs.get("max_new_tokens", 64), temperature=kwargs.get("temperature", 0.0)
        )
    return HFPolicy(spec, seed=seed, **kwargs)

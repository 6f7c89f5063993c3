"""Batched decoding for small causal LMs, without Hugging Face ``generate``'s per-call waste.

For a 1M-parameter model on a CPU, ``generate``'s time goes to three things a model this small
cannot hide: the key/value cache grows by ``torch.cat`` (every step copies the whole cache), finished
rows keep decoding until the longest turn of the batch ends, and every turn of a multi-turn episode
prefills the whole conversation again. `Decoder` removes each, in two modes:

* ``"exact"``: the same prefill as ``generate`` (left padding, the same position ids, the same
  forward calls), then decoding into a preallocated cache written in place, with finished rows
  dropped from the batch and a per-row token limit. Under greedy decoding its tokens equal
  ``generate``'s token for token (a test checks it on trained weights).
* ``"prefix"``: ``"exact"``, plus the key/value states of earlier calls are kept and a prompt that
  starts with an earlier sequence (the next turn of the same episode, or the same opening for a group
  of samples) prefills only what is new. A different prefill layout changes float32 sums in their last
  bits (about 1e-5 in the logits of the main job's model), so a greedy token can differ where two logits
  tie that closely; ``benchmarks/bench_generate.py`` counts how often against ``generate``.

Hugging Face ``generate`` stays the reference (``mode="generate"`` in callers) and the path for every
model this does not cover; a GPU run's rollouts go through vLLM, untouched by this module. Written by
hand because no library decodes a batch with a cache reused across calls on a CPU (vLLM and
transformers' continuous batching need a GPU or paged attention). The states kept by ``"prefix"`` belong to
the weights they were computed with: call `clear` after any update (a rollout makes a new `Decoder`).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import torch
from transformers import (
    LogitsProcessorList,
    MinPLogitsWarper,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)
from transformers.cache_utils import Cache, DynamicLayer

from osint_eval.errors import EvalError

_KEY = 8  # stored sequences are indexed by their first tokens (a prompt is compared only with those sharing them)


class _BufferLayer(DynamicLayer):
    """One layer's key/value cache in a buffer allocated once: ``update`` writes in place and returns
    views of the filled part (``DynamicLayer`` concatenates, copying the whole cache at every step)."""

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, length: int) -> None:
        super().__init__()
        self.kbuf, self.vbuf, self.n = keys, values, length
        self.device, self.is_initialized = keys.device, True
        self._views()

    def _views(self) -> None:
        self.keys, self.values = self.kbuf[:, :, : self.n], self.vbuf[:, :, : self.n]

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any,
               **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        t = key_states.shape[-2]
        self.kbuf[:, :, self.n : self.n + t] = key_states
        self.vbuf[:, :, self.n : self.n + t] = value_states
        self.n += t
        self._views()
        return self.keys, self.values

    def get_seq_length(self) -> int:
        return self.n

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        self.kbuf, self.vbuf = self.kbuf[indices], self.vbuf[indices]
        self._views()


class _Store:
    """Key/value states of finished sequences (per layer ``[heads, length, head_dim]``), bounded, oldest out."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self.entries: OrderedDict[int, tuple[np.ndarray, list[torch.Tensor], list[torch.Tensor]]] = OrderedDict()
        self.by_key: dict[tuple[int, ...], set[int]] = {}
        self._next = 0

    def put(self, tokens: list[int], keys: list[torch.Tensor], values: list[torch.Tensor]) -> None:
        if len(tokens) < _KEY:
            return
        self.entries[self._next] = (np.asarray(tokens), keys, values)
        self.by_key.setdefault(tuple(tokens[:_KEY]), set()).add(self._next)
        self._next += 1
        while len(self.entries) > self.max_entries:
            old, (t, _, _) = self.entries.popitem(last=False)
            self.by_key[tuple(t[:_KEY].tolist())].discard(old)

    def longest(self, prompt: list[int]) -> tuple[int, list[torch.Tensor], list[torch.Tensor]]:
        """The longest stored common prefix of ``prompt`` (leaving at least one token to prefill)."""
        best: tuple[int, list[torch.Tensor], list[torch.Tensor]] = (0, [], [])
        if len(prompt) <= _KEY:
            return best
        p = np.asarray(prompt)
        for i in self.by_key.get(tuple(prompt[:_KEY]), ()):
            tokens, keys, values = self.entries[i]
            m = min(len(tokens), len(p) - 1)
            differ = np.flatnonzero(tokens[:m] != p[:m])
            n = int(differ[0]) if differ.size else m
            if n > best[0]:
                best = (n, keys, values)
        return best

    def clear(self) -> None:
        self.entries.clear()
        self.by_key.clear()


class Decoder:
    """``generate(prompts, max_new_tokens=...)``: token ids in, each row's new tokens out (up to and
    including its end-of-turn token), for a Hugging Face causal LM with a standard key/value cache."""

    def __init__(self, model: Any, *, eos_token_ids: list[int], pad_token_id: int, mode: str = "exact",
                 max_entries: int = 512) -> None:
        if mode not in ("exact", "prefix"):
            raise EvalError(f"decoding mode must be 'exact' or 'prefix' for Decoder; got {mode!r}")
        cfg = model.config
        types = set(getattr(cfg, "layer_types", None) or ["full_attention"])
        sliding = getattr(cfg, "sliding_window", None) and getattr(cfg, "use_sliding_window", True)
        if getattr(cfg, "is_encoder_decoder", False) or types != {"full_attention"} or sliding:
            raise EvalError(f"decoding={mode!r} needs a decoder-only model with full attention in every layer "
                            f"({type(model).__name__} has {sorted(types)}{', a sliding window' if sliding else ''}); "
                            "use decoding='generate'")
        self.model, self.mode = model, mode
        self.eos = set(eos_token_ids)
        self.pad = pad_token_id
        self.store = _Store(max_entries)
        self.prefilled_tokens = 0  # tokens run through a prefill (what "prefix" saves)
        self.reused_tokens = 0  # prompt tokens read from stored states instead

    def clear(self) -> None:
        """Forget stored states (after the weights change)."""
        self.store.clear()

    @staticmethod
    def processors(temperature: float, top_p: float = 1.0, top_k: int = 0,
                   min_p: float | None = None) -> LogitsProcessorList:
        """Transformers' own warpers, in ``generate``'s order."""
        out = LogitsProcessorList()
        if temperature != 1.0:
            out.append(TemperatureLogitsWarper(temperature))
        if top_k:
            out.append(TopKLogitsWarper(top_k))
        if top_p < 1.0:
            out.append(TopPLogitsWarper(top_p))
        if min_p:
            out.append(MinPLogitsWarper(min_p))
        return out

    @torch.no_grad()
    def generate(self, prompts: list[list[int]], *, max_new_tokens: int | list[int], temperature: float = 0.0,
                 top_p: float = 1.0, top_k: int = 0, min_p: float | None = None,
                 generator: torch.Generator | None = None) -> list[list[int]]:
        """New tokens per prompt; ``temperature`` 0 is greedy; ``max_new_tokens`` may differ per row."""
        if not prompts:
            return []
        if any(not p for p in prompts):
            raise EvalError("every prompt needs at least one token")
        limits = [max_new_tokens] * len(prompts) if isinstance(max_new_tokens, int) else list(max_new_tokens)
        if len(limits) != len(prompts) or min(limits) < 1:
            raise EvalError(f"max_new_tokens must be one positive limit per prompt; got {max_new_tokens!r}")
        warp = self.processors(temperature, top_p, top_k, min_p) if temperature > 0 else None
        cache, mask, position, logits = self._prefill(prompts, max(limits))
        rows = torch.arange(len(prompts))
        out: list[list[int]] = [[] for _ in prompts]
        step = 0
        while True:
            scores = logits[:, -1].to(torch.float32)
            if warp is None:
                nxt = scores.argmax(-1)
            else:
                probs = torch.softmax(warp(None, scores), dim=-1)
                nxt = torch.multinomial(probs, 1, generator=generator).squeeze(1)
            step += 1
            keep = []
            for k, (r, t) in enumerate(zip(rows.tolist(), nxt.tolist())):
                out[r].append(t)
                if t in self.eos or step >= limits[r]:
                    self._keep(prompts[r] + out[r][:-1], cache, k, mask)
                else:
                    keep.append(k)
            if not keep:
                return out
            if len(keep) < len(rows):
                idx = torch.tensor(keep)
                rows, nxt, mask, position = rows[idx], nxt[idx], mask[idx], position[idx]
                for layer in cache.layers:
                    layer.batch_select_indices(idx)
            mask = torch.cat([mask, mask.new_ones(len(rows), 1)], dim=1)
            position = position[:, -1:] + 1
            logits = self.model(input_ids=nxt[:, None], attention_mask=mask, position_ids=position, cache=cache,
                                use_cache=True).logits

    # ------------------------------------------------------------------ prefill
    def _prefill(self, prompts: list[list[int]], new: int) -> tuple[Cache, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Left-padded prefill into a buffer cache with room for ``new`` more tokens. In ``"prefix"`` mode
        each row's stored prefix is copied in (right-aligned in the first block) and only the rest runs."""
        cfg = self.model.config
        layers = cfg.num_hidden_layers
        found = [self.store.longest(p) if self.mode == "prefix" else (0, [], []) for p in prompts]
        cached = max(n for n, _, _ in found)
        rest = [p[n:] for p, (n, _, _) in zip(prompts, found)]
        width = max(len(r) for r in rest)
        device = next(self.model.parameters()).device
        b = len(prompts)
        ids = torch.full((b, width), self.pad, dtype=torch.long, device=device)
        mask = torch.zeros((b, cached + width), dtype=torch.long, device=device)
        for i, (r, (n, _, _)) in enumerate(zip(rest, found)):
            ids[i, width - len(r) :] = torch.tensor(r)
            mask[i, cached - n : cached] = 1
            mask[i, cached + width - len(r) :] = 1
        position = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)[:, cached:]
        heads = getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads
        head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        dtype = next(self.model.parameters()).dtype
        capacity = cached + width + new
        buffers = []
        for layer in range(layers):
            k = torch.zeros((b, heads, capacity, head_dim), dtype=dtype, device=device)
            v = torch.zeros_like(k)
            for i, (n, keys, values) in enumerate(found):
                if n:
                    k[i, :, cached - n : cached] = keys[layer][:, :n]
                    v[i, :, cached - n : cached] = values[layer][:, :n]
            buffers.append(_BufferLayer(k, v, cached))
        cache = Cache(layers=buffers)
        self.prefilled_tokens += sum(len(r) for r in rest)
        self.reused_tokens += sum(n for n, _, _ in found)
        logits = self.model(input_ids=ids, attention_mask=mask, position_ids=position, cache=cache, use_cache=True,
                            logits_to_keep=1).logits
        return cache, mask, position, logits

    def _keep(self, tokens: list[int], cache: Cache, row: int, mask: torch.Tensor) -> None:
        """Store a finished row's states (its real columns only) for a later prompt that extends it."""
        if self.mode != "prefix":
            return
        cols = mask[row].nonzero().squeeze(1)
        keys = [layer.keys[row][:, cols].clone() for layer in cache.layers]
        values = [layer.values[row][:, cols].clone() for layer in cache.layers]
        assert keys[0].shape[1] == len(tokens), "stored states must cover the tokens they are indexed by"
        self.store.put(tokens, keys, values)

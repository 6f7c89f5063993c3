"""Packed supervised fine-tuning: the warm start of tiny models, and the equal-compute control.

Conversations are rendered by the tokenizer's own chat template with its assistant mask (the loss is
on the model's turns only: environment text and template glue are masked out), packed first-fit into
rows of ``max_length`` tokens, and trained with AdamW after a linear warm-up, at a constant
learning rate or one that decays to 0 at the end (``decay_fraction``, `lr_scale`). Each packed row
restarts its position ids at every conversation, and no attention mask is passed, so transformers
builds a block-diagonal causal mask (`masking_utils.find_packed_sequence_indices`): no conversation
attends to another.

Written here rather than through TRL's SFTTrainer because on the 2-core CPU the trainer's per-step
overhead and padding dominated a model this small, and `_loss` projects only the labelled positions to
the vocabulary (``python benchmarks/bench_sft.py``; its figures: benchmarks/RESULTS.md).
`phases.run_sft` still uses SFTTrainer when ``warm_start.packing = false`` (the path for real models,
multi-GPU and LoRA).

The loop stops after ``epochs`` passes or ``max_seconds`` of wall time, whichever comes first, and
it can start ``skip_rows`` packed rows into the epoch, so a continuation sees the rows the warm start
had not. With a decay it saves its state (weights, optimizer, position) at the step where the decay
begins (``branch_path``): the equal-compute control resumes from there (``start``) with the stable
phase and the decay stretched by the GRPO phases' wall time (`stretched`), so it is the warm start
as it would have run with those seconds added, not a second run at the peak rate after the first
had decayed (which cost the control held-out success: benchmarks/RESULTS.md).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tqdm import tqdm

from osint_selfplay.errors import ConfigError
from osint_selfplay.results import SFTResult, StepMark

log = logging.getLogger("osint_selfplay")


@dataclass
class Packed:
    """Packed training rows: token ids, position ids (restarting per conversation) and labels (-100: no loss)."""

    input_ids: list[list[int]] = field(default_factory=list)
    position_ids: list[list[int]] = field(default_factory=list)
    labels: list[list[int]] = field(default_factory=list)
    conversations: int = 0
    dropped_too_long: int = 0
    trained_tokens: int = 0  # tokens with a loss

    def __len__(self) -> int:
        return len(self.input_ids)


def mask_first_turns(mask: list[int], turns: int) -> list[int]:
    """``mask`` with its first ``turns`` assistant turns (runs of 1s) set to 0: a relabelled
    conversation's own turns of the student are context, not targets (`osint_selfplay.relabel`)."""
    out = list(mask)
    run = 0
    for j, m in enumerate(out):
        if m and (j == 0 or not mask[j - 1]):
            run += 1  # a new turn starts here
        if m and run <= turns:
            out[j] = 0
    return out


def _render(tokenizer: Any, conversations: list[list[dict[str, Any]]], **kwargs: Any) -> Any:
    """The chat template's token ids and assistant masks of ``conversations``."""
    if not marks_assistant(tokenizer.chat_template):
        pairs = [_derived_mask(tokenizer, c, kwargs.get("tools")) for c in conversations]
        return {"input_ids": [p[0] for p in pairs], "assistant_masks": [p[1] for p in pairs]}
    return tokenizer.apply_chat_template(conversations, tokenize=True, return_dict=True,
                                         return_assistant_tokens_mask=True, **kwargs)


def marks_assistant(chat_template: Any) -> bool:
    """Whether the template marks assistant text with ``{% generation %}`` (the tiny models' ChatML does; most
    hub templates, SmolLM2's and Qwen's among them, do not)."""
    templates = chat_template.values() if isinstance(chat_template, dict) else [chat_template or ""]
    return any("{% generation %}" in t or "{%- generation %}" in t for t in templates)


def _derived_mask(tokenizer: Any, conversation: list[dict[str, Any]],
                  tools: list[dict[str, Any]] | None) -> tuple[list[int], list[int]]:
    """(token ids, assistant mask) of a conversation whose template has no ``{% generation %}`` markers: each
    assistant turn is the text between the conversation rendered up to it (with the generation prompt) and
    rendered with it, less the whitespace after its end-of-turn token; a token belongs to the turn when it
    starts inside that span. Written here because transformers derives the mask only from the markers; the
    same prefix-by-prefix rendering separates model from environment tokens in GRPO (`osint_selfplay.rollout`)."""
    def render(messages: list[dict[str, Any]], gen: bool) -> str:
        return str(tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=gen,
                                                 **({"tools": tools} if tools else {})))

    text = render(conversation, False)
    spans = []
    for i, message in enumerate(conversation):
        if message["role"] != "assistant":
            continue
        start, closed = render(conversation[:i], True), render(conversation[: i + 1], False)
        if not (closed.startswith(start) and text.startswith(closed)):
            raise ConfigError("the chat template does not render the conversation prefix by prefix, so its assistant "
                              "turns cannot be told from the rest: packed SFT cannot mask the environment's text")
        spans.append((len(start), len(closed.rstrip())))
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    mask = [int(any(a <= s < b for a, b in spans)) for s, _ in enc["offset_mapping"]]
    return list(enc["input_ids"]), mask


def tokenize(tokenizer: Any, conversations: list[list[dict[str, Any]]], batch: int = 512,
             masked_turns: list[int] | None = None,
             tools: list[list[dict[str, Any]] | None] | None = None) -> list[tuple[list[int], list[int]]]:
    """(token ids, assistant mask) per conversation, rendered by the tokenizer's chat template: the mask is the
    template's ``{% generation %}`` markers, or where it has none, derived by rendering prefix by prefix
    (`_derived_mask`); a mask that marks nothing is refused.
    ``masked_turns[i]``: conversation i's first assistant turns that get no loss. ``tools[i]``: the tool
    schemas conversation i's template renders (a native tool-call conversation), None for none."""
    tools = tools or [None] * len(conversations)
    out: list[tuple[list[int], list[int]]] = []
    for start in range(0, len(conversations), batch):
        chunk, schemas = conversations[start : start + batch], tools[start : start + batch]
        if any(schemas):  # the template takes one tools list per call: one conversation at a time
            encs = [_render(tokenizer, [c], **({"tools": t} if t else {})) for c, t in zip(chunk, schemas)]
            pairs = [(e["input_ids"][0], e["assistant_masks"][0]) for e in encs]
        else:
            enc = _render(tokenizer, chunk)
            pairs = list(zip(enc["input_ids"], enc["assistant_masks"]))
        for j, (ids, mask) in enumerate(pairs):
            skip = masked_turns[start + j] if masked_turns else 0
            out.append((list(ids), mask_first_turns(list(mask), skip) if skip else list(mask)))
    if out and not any(any(m) for _, m in out):
        raise ConfigError("the tokenizer's chat template marks no assistant tokens: "
                          "packed SFT would train on nothing; set warm_start.packing = false")
    return out


def pack(tokenized: list[tuple[list[int], list[int]]], max_length: int) -> Packed:
    """First-fit-decreasing packing into rows of at most ``max_length`` tokens; a conversation longer
    than a row is dropped and counted (cutting it would train on a turn without its observation)."""
    packed = Packed()
    order = sorted(range(len(tokenized)), key=lambda i: -len(tokenized[i][0]))
    free = np.zeros(len(tokenized), dtype=np.int64)  # free space per row (at most one row per conversation)
    rows = 0
    for i in order:
        ids, mask = tokenized[i]
        if len(ids) > max_length:
            packed.dropped_too_long += 1
            continue
        # the first row with room: one vectorised scan (a Python loop was several times slower: RESULTS.md)
        fits = free[:rows] >= len(ids)
        row = int(fits.argmax()) if rows and fits.any() else rows
        if row == rows:
            rows += 1
            free[row] = max_length
            packed.input_ids.append([])
            packed.position_ids.append([])
            packed.labels.append([])
        free[row] -= len(ids)
        packed.input_ids[row] += ids
        packed.position_ids[row] += list(range(len(ids)))
        packed.labels[row] += [t if m else -100 for t, m in zip(ids, mask)]
        packed.conversations += 1
        packed.trained_tokens += sum(1 for m in mask if m)
    return packed


def _batch(packed: Packed, rows: list[int], pad_id: int) -> dict[str, Any]:
    import torch

    width = max(len(packed.input_ids[r]) for r in rows)

    def col(seqs: list[list[int]], fill: int, positions: bool = False) -> Any:
        # padding continues the position count, so it reads as part of the row's last conversation
        return torch.tensor(
            [s + (list(range(len(s), width)) if positions else [fill] * (width - len(s))) for s in seqs]
        )

    return {"input_ids": col([packed.input_ids[r] for r in rows], pad_id),
            "position_ids": col([packed.position_ids[r] for r in rows], 0, positions=True),
            "labels": col([packed.labels[r] for r in rows], -100)}


# the warm-up of a fresh optimizer that continues a trained model (relabelling's SFT, a continuation from a
# row offset): a few steps, as Adam's moment estimates need, not the warm start's own warm-up from scratch
FRESH_WARMUP_STEPS = 10


@dataclass(frozen=True)
class SFTSettings:
    learning_rate: float
    batch_size: int  # packed rows per optimizer step
    epochs: float | None = 1.0  # None: until max_seconds
    warmup_steps: int = 50
    weight_decay: float = 0.01
    max_grad_norm: float = 1.0
    seed: int = 0
    max_seconds: float | None = None
    max_steps: int | None = None  # stop after this many optimizer steps (the budget, like the epochs' steps)
    skip_rows: int = 0  # start this many packed rows into the (seeded) epoch order
    logging_steps: int = 10
    decay_fraction: float = 0.0  # the learning rate falls linearly to 0 over this last share of the budget
    extra_rows: int = 0  # packed rows of each step drawn from a second set (`train_packed`'s ``extra``)
    autocast: str = "none"  # "bfloat16": forward and backward under torch.autocast (float32 master weights)


def _progress(s: SFTSettings, step: int, elapsed: float, total_steps: int | None) -> float:
    """The share of the budget spent: of the steps (the epochs' or ``max_steps``, the fewer) or of
    ``max_seconds``, whichever is further."""
    return max(step / total_steps if total_steps else 0.0, elapsed / s.max_seconds if s.max_seconds else 0.0)


def lr_scale(s: SFTSettings, step: int, elapsed: float, total_steps: int | None) -> float:
    """The learning rate's multiplier at ``step``: a linear warm-up, constant, then (``decay_fraction``)
    a linear decay to 0 over the budget's last share, the budget being the epochs' steps or
    ``max_seconds``, whichever runs out first (warmup-stable-decay: the run ends on a low rate)."""
    scale = min(1.0, (step + 1) / max(1, s.warmup_steps))
    if s.decay_fraction > 0:
        progress = _progress(s, step, elapsed, total_steps)
        scale *= min(1.0, max(0.0, (1.0 - progress) / s.decay_fraction))
    return scale


def decaying(s: SFTSettings, step: int, elapsed: float, total_steps: int | None) -> bool:
    return s.decay_fraction > 0 and _progress(s, step, elapsed, total_steps) > 1.0 - s.decay_fraction


def stretched(warm: float, branch: float, extra: float) -> tuple[float, float]:
    """(budget, decay_fraction) for the rest of a warm start of ``warm`` optimizer steps, resumed where its
    decay began (step ``branch``), whose budget grows by ``extra`` steps: the stable phase runs on and the
    decay keeps its share of the longer budget, so the whole is the warm start's schedule over ``warm +
    extra`` steps (warmup-stable-decay branches from the stable phase). Any unit of budget works alike."""
    total = warm + extra
    remaining = total - branch
    decay = (warm - branch) * total / warm if warm > 0 else remaining
    return remaining, min(1.0, decay / remaining) if remaining > 0 else 1.0


def _epoch_stream(packed: Packed, s: SFTSettings) -> Iterator[list[int]]:
    """Batches of packed rows in training order: a seeded shuffle repeated for ``epochs`` passes
    (``None``: without end), starting ``skip_rows`` into it; ``batch_size - extra_rows`` rows a step."""
    order = list(range(len(packed)))
    random.Random(s.seed).shuffle(order)
    total = None if s.epochs is None else int(len(packed) * s.epochs)
    per_step = s.batch_size - s.extra_rows
    k = 0
    while total is None or k < total:
        size = per_step if total is None else min(per_step, total - k)
        yield [order[(s.skip_rows + k + j) % len(order)] for j in range(size)]
        k += size


def _extra_stream(n: int, rows: int, seed: int) -> Iterator[list[int]]:
    """``rows`` indices of a second set of ``n`` packed rows per step, a seeded shuffle repeated without end."""
    order = list(range(n))
    random.Random(f"{seed}:extra").shuffle(order)
    k = 0
    while True:
        yield [order[(k + j) % n] for j in range(rows)]
        k += rows


def _with_extra(packed: Packed, extra: Packed) -> Packed:
    """One set holding ``packed``'s rows, then ``extra``'s (indices of ``extra`` shift by ``len(packed)``)."""
    return Packed(packed.input_ids + extra.input_ids, packed.position_ids + extra.position_ids,
                  packed.labels + extra.labels, packed.conversations + extra.conversations,
                  packed.dropped_too_long + extra.dropped_too_long, packed.trained_tokens + extra.trained_tokens)


def _loss(model: Any, batch: dict[str, Any]) -> Any:
    """The causal-LM loss of ``batch``, projecting to the vocabulary only the positions with a label.

    Only the model's turns carry a loss (about a tenth of a compact demonstration's tokens), so the
    full forward spends most of its output projection and log-softmax on positions that are then
    masked out: on the 2-core CPU those were about a third of a tiny model's step. The result equals
    ``model(**batch).loss`` (the mean over labelled tokens; a test compares them). Models whose output
    head does more than one linear layer (logit soft-capping) take the full forward.
    """
    import torch.nn.functional as F

    decoder, head = model.get_decoder(), model.get_output_embeddings()
    if decoder is None or head is None or getattr(model.config, "final_logit_softcapping", None) is not None:
        return model(**batch, use_cache=False).loss
    hidden = decoder(
        input_ids=batch["input_ids"], position_ids=batch["position_ids"], use_cache=False
    ).last_hidden_state
    targets = batch["labels"][:, 1:]
    keep = targets != -100
    logits = head(hidden[:, :-1][keep])
    return F.cross_entropy(logits.float(), targets[keep])


AUTOCAST = ("none", "bfloat16")


def _step(model: Any, opt: Any, params: list[Any], batch: dict[str, Any], max_grad_norm: float,
          autocast: str = "none") -> float:
    """One optimizer step on ``batch`` (gradients clipped); its loss. ``autocast="bfloat16"``: the forward
    (and so the backward) runs its matrix products in bfloat16 while the weights, their gradients and
    the optimizer stay float32 (mixed precision; the loss itself is taken in float32)."""
    import torch

    device = batch["input_ids"].device.type
    with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=autocast == "bfloat16"):
        loss = _loss(model, batch)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, max_grad_norm)
    opt.step()
    opt.zero_grad(set_to_none=True)
    return float(loss.detach())


def _check_packed(packed: Packed, s: SFTSettings, extra: Packed | None) -> None:
    """One-line errors for settings ``train_packed`` cannot honour, before any weight moves."""
    if not len(packed):
        raise ConfigError("packed SFT: no conversation fits warm_start.max_length; raise it")
    if s.epochs is None and s.max_seconds is None and s.max_steps is None:
        raise ConfigError("packed SFT needs epochs, max_steps or max_seconds")
    if s.autocast not in AUTOCAST:
        raise ConfigError(f"packed SFT: autocast must be one of {AUTOCAST}; got {s.autocast!r}")
    if not 0 <= s.extra_rows < s.batch_size:
        raise ConfigError(f"packed SFT: extra_rows must be in [0, batch_size = {s.batch_size}); got {s.extra_rows}")
    if s.extra_rows and not (extra is not None and len(extra)):
        raise ConfigError("packed SFT: extra_rows > 0 needs a non-empty second set of packed rows")


def planned_steps(rows: int, s: SFTSettings) -> int | None:
    """The optimizer steps ``s`` plans over ``rows`` packed rows (``None``: bounded by wall time only);
    ``max_steps`` caps what the epochs ask for, and each step takes ``batch_size - extra_rows`` of them."""
    steps = None if s.epochs is None else -(-int(rows * s.epochs) // (s.batch_size - s.extra_rows))
    if s.max_steps is not None:
        steps = s.max_steps if steps is None else min(steps, s.max_steps)
    return steps


def _limit_reached(s: SFTSettings, step: int, elapsed: float) -> str | None:
    """Which bound stops training before ``step`` (``"max_seconds"``, ``"max_steps"``), if any."""
    if s.max_seconds is not None and elapsed >= s.max_seconds:
        return "max_seconds"
    if s.max_steps is not None and step >= s.max_steps:
        return "max_steps"
    return None


def _optimizer(model: Any, s: SFTSettings, device: Any, start: dict[str, Any] | None) -> tuple[list[Any], Any]:
    """AdamW over ``model``'s trainable parameters, on ``device``; from ``start``'s weights and optimizer state
    when given (a branch's resumption). The model is left in training mode."""
    import torch

    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=s.learning_rate, betas=(0.9, 0.98), weight_decay=s.weight_decay)
    model.to(device)
    if start is not None:
        model.load_state_dict(start["model"])
        opt.load_state_dict(start["optimizer"])
    model.train()
    return params, opt


def train_packed(model: Any, packed: Packed, s: SFTSettings, *, pad_id: int, device: Any = "cpu",
                 desc: str = "SFT", branch_path: Any = None, start: dict[str, Any] | None = None,
                 extra: Packed | None = None, every: int = 0,
                 on_step: Callable[[int, Any], Any] | None = None) -> tuple[SFTResult, list[dict[str, Any]]]:
    """Train ``model`` in place on ``packed``; returns its figures and the per-``logging_steps`` log.
    ``branch_path``: where to save the state at the decay's first step; ``start``: such a state to
    resume from (its weights and optimizer; ``s.skip_rows`` says where its data continues).
    ``extra``: a second set (relabelled conversations) of which every step takes ``s.extra_rows``
    rows, cycled in a seeded order, beside ``batch_size - extra_rows`` rows of ``packed``'s stream;
    epochs, ``skip_rows`` and ``next_row`` count ``packed``'s rows only. ``on_step(steps_done, model)`` is called
    every ``every`` steps (a dev curve's measurement); its seconds are not counted against ``max_seconds``."""
    import torch
    _check_packed(packed, s, extra)
    torch.manual_seed(s.seed)
    params, opt = _optimizer(model, s, device, start)
    branched: StepMark | None = None
    logs: list[dict[str, Any]] = []
    losses: list[float] = []
    rows_done = tokens = 0
    stopped = "epochs"
    steps = planned_steps(len(packed), s)
    extras = _extra_stream(len(extra), s.extra_rows, s.seed) if extra is not None and s.extra_rows else None
    both = _with_extra(packed, extra) if extras is not None and extra is not None else packed
    t0 = time.perf_counter()
    for step, rows in enumerate(tqdm(_epoch_stream(packed, s), total=steps, desc=desc, unit="step", leave=False)):
        limit = _limit_reached(s, step, time.perf_counter() - t0)
        if limit:
            stopped = limit
            break
        elapsed = time.perf_counter() - t0
        if branch_path is not None and branched is None and decaying(s, step, elapsed, steps):
            branched = StepMark(step=step, seconds=elapsed, next_row=(s.skip_rows + rows_done) % len(packed))
            torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": branched.step,
                        "seconds": branched.seconds, "next_row": branched.next_row}, branch_path)
        lr = s.learning_rate * lr_scale(s, step, elapsed, steps)
        for group in opt.param_groups:
            group["lr"] = lr
        taken = rows + ([len(packed) + i for i in next(extras)] if extras is not None else [])
        batch = {k: v.to(device) for k, v in _batch(both, taken, pad_id).items()}
        losses.append(_step(model, opt, params, batch, s.max_grad_norm, s.autocast))
        rows_done += len(rows)
        tokens += int(batch["input_ids"].numel())
        if on_step is not None and every and (step + 1) % every == 0:
            paused = time.perf_counter()
            on_step(step + 1, model)
            model.train()
            t0 += time.perf_counter() - paused  # the measurement is not training time
        if (step + 1) % s.logging_steps == 0:
            window = losses[-s.logging_steps :]
            logs.append({"step": step + 1, "loss": sum(window) / len(window), "learning_rate": lr,
                         "seconds": time.perf_counter() - t0})
    seconds = time.perf_counter() - t0
    model.eval()
    tail = losses[-s.logging_steps :]
    return SFTResult(steps=len(losses), rows=rows_done, epochs_done=rows_done / len(packed),
                     next_row=(s.skip_rows + rows_done) % len(packed), tokens=tokens,
                     tokens_per_second=tokens / seconds if seconds else None, seconds=seconds, stopped_by=stopped,
                     final_loss=sum(tail) / len(tail) if tail else None, decay_start=branched), logs

"""The one place that knows TRL's shape: GRPOConfig's fields and every TRL internal this package touches.

* `check_phase` validates a ``[grpo_*]`` table against ``dataclasses.fields(GRPOConfig)`` (names,
  with a did-you-mean, and type hints) and then lets GRPOConfig's own ``__post_init__`` judge the
  values, so any field TRL has is accepted and nothing is mirrored here.
* `generate_turn` wraps ``GRPOTrainer._generate_single_turn`` (private in TRL 1.16: its
  ``rollout_func`` gets no public generation helper, and this one serves both HF generation and
  vLLM). `check_generate_signature` fails loudly on a TRL whose signature differs; the package
  pins TRL to the versions this was checked against (``trl>=1.16,<1.17``). With ``model.decoding``
  ``"exact"`` or ``"prefix"`` and no vLLM, the turn is decoded by `osint_eval.decoding.Decoder` on the
  trainer's own model and sampling settings instead (`rollout_decoder`); vLLM rollouts are unchanged.

Every private TRL touch point, all of them in this module (the README lists the same):

1. ``GRPOTrainer._generate_single_turn`` (`generate_turn`; its signature checked by `check_generate_signature`).
2. The sampling settings GRPOTrainer keeps as attributes, not in its public API: ``temperature``, ``top_p``,
   ``top_k``, ``min_p``, ``repetition_penalty``, ``eos_token_ids`` (`rollout_decoder`, `generate_turn`,
   `plain_lm_head`) and ``ref_model`` (`plain_lm_head`).
3. ``trl.kernels.chunked_logprob._use_triton`` and ``trl.trainer.utils.FusedCausalLMOutput``, and the
   ``fused_lm_head`` keyword TRL's patched ``model.forward`` takes (`plain_lm_head`, which replaces that
   ``forward``; behind ``model.plain_lm_head``, checked against the installed TRL by
   ``tests/selfplay/test_trl_compat.py``).

Everything here imports trl, so callers import this module inside functions.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import types
import typing
from typing import Any

from osint_gym.errors import check_type, unknown_key_message
from osint_selfplay.config import RunConfig
from osint_selfplay.errors import ConfigError, IncompatibleTRLError
from osint_selfplay.grpo_config import GRPO_RUN_KEYS, GRPOPhaseConfig

# The parameters of GRPOTrainer._generate_single_turn in the TRL versions this package supports.
GENERATE_PARAMETERS = ("self", "prompt_ids", "images", "multimodal_fields", "num_generations", "has_tool_images")


@functools.cache
def grpo_field_types() -> dict[str, Any]:
    """GRPOConfig's settable fields and their resolved type hints."""
    from trl import GRPOConfig

    hints = typing.get_type_hints(GRPOConfig)
    return {f.name: hints[f.name] for f in dataclasses.fields(GRPOConfig) if f.init}


def check_phase(phase: GRPOPhaseConfig, path: str) -> None:
    """Every key of a ``[grpo_*]`` table is a GRPOConfig field of the right type."""
    types = grpo_field_types()
    known = sorted(k for k in types if k not in GRPO_RUN_KEYS)
    for key, value in phase.to_dict().items():
        if key not in types:
            raise ConfigError(unknown_key_message(key, known, f"[{path}]") + " (keys are TRL GRPOConfig fields)")
        check_type(value, types[key], f"{path}.{key}")


def device_args(cfg: RunConfig) -> dict[str, Any]:
    """Trainer arguments shared by the SFT warm start and GRPO: device, precision, logging."""
    import torch

    cuda = torch.cuda.is_available()
    return {
        "use_cpu": not cuda,
        "bf16": cuda and cfg.model.dtype == "bfloat16",
        "fp16": cuda and cfg.model.dtype == "float16",
        "activation_checkpointing": False,
        "report_to": cfg.report_to,
        "save_only_model": True,
    }


def grpo_config(phase: GRPOPhaseConfig, cfg: RunConfig, output_dir: str, seed: int, path: str = "grpo") -> Any:
    """TRL's GRPOConfig: the run's device and vLLM settings, then the phase's table (which wins,
    so ``grpo_answerer.bf16 = true`` overrides the dtype-derived default). TRL's own value checks
    become one-line `ConfigError` s naming the table."""
    from trl import GRPOConfig

    check_phase(phase, path)
    args = {
        **device_args(cfg),
        "output_dir": output_dir,
        "seed": seed,
        "use_vllm": cfg.use_vllm,
        "vllm_mode": cfg.vllm_mode,
        "vllm_server_base_url": cfg.vllm_server_base_url or None,
        **phase.to_dict(),
    }
    try:
        return GRPOConfig(**args)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"[{path}]: TRL rejects these settings: {str(exc).splitlines()[0]}") from None


def check_run(cfg: RunConfig) -> None:
    """Everything TRL will be asked, checked before the run writes anything."""
    check_type(cfg.report_to, grpo_field_types()["report_to"], "report_to")
    for path in ("grpo_generator", "grpo_answerer"):
        grpo_config(getattr(cfg, path), cfg, cfg.output_dir, cfg.seed, path)


@functools.cache
def check_generate_signature(trainer_cls: type | None = None) -> None:
    """A clear error if a trainer's internal generator (default: the installed TRL's GRPOTrainer)
    is not the one `generate_turn` calls."""
    import trl

    if trainer_cls is None:
        trainer_cls = trl.GRPOTrainer
    method = getattr(trainer_cls, "_generate_single_turn", None)
    found = tuple(inspect.signature(method).parameters) if callable(method) else ()
    if found != GENERATE_PARAMETERS:
        shown = f"({', '.join(found)})" if found else " (missing)"
        raise IncompatibleTRLError(
            f"trl {trl.__version__}: {trainer_cls.__name__}._generate_single_turn{shown} differs from "
            f"({', '.join(GENERATE_PARAMETERS)}), which osint-selfplay's multi-turn rollout calls; "
            "install trl>=1.16,<1.17"
        )


def rollout_decoder(trainer: Any, mode: str) -> Any:
    """A fresh `osint_eval.decoding.Decoder` on the trainer's model for one rollout (its stored states
    belong to this step's weights), or None where the trainer's own generator decodes: ``mode``
    ``"generate"``, or a trainer that generates with vLLM."""
    if mode == "generate" or getattr(trainer, "use_vllm", False):
        return None
    from osint_eval.decoding import Decoder

    if trainer.repetition_penalty != 1.0 or trainer.args.generation_kwargs:
        raise ConfigError(f"model.decoding={mode!r} samples with temperature, top_p, top_k and min_p only; "
                          "grpo_answerer.repetition_penalty and generation_kwargs need model.decoding='generate'")
    model = trainer.accelerator.unwrap_model(trainer.model)
    return Decoder(model, eos_token_ids=list(trainer.eos_token_ids), pad_token_id=trainer.processing_class.pad_token_id,
                   mode=mode)


def generate_turn(trainer: Any, prompt_ids: list[list[int]], decoder: Any = None,
                  max_new_tokens: list[int] | None = None) -> list[list[int]]:
    """One model turn for each prompt (token ids in, completion token ids out), through the
    trainer's own generator (HF ``generate`` on a CPU, vLLM when the trainer uses it) or, if given,
    ``decoder`` with the trainer's sampling settings and a token limit per prompt (``max_new_tokens``,
    default the trainer's ``max_completion_length``)."""
    if decoder is not None:
        limits = max_new_tokens or [trainer.max_completion_length] * len(prompt_ids)
        return decoder.generate(prompt_ids, max_new_tokens=limits, temperature=trainer.temperature, top_p=trainer.top_p,
                                top_k=trainer.top_k or 0, min_p=trainer.min_p)
    trainer_cls: type = type(trainer)  # a plain `type`: mypy wrongly finds `type[Any]` unhashable
    check_generate_signature(trainer_cls)
    completion_ids, _logprobs = trainer._generate_single_turn(prompt_ids, None, {}, 1)
    return [list(ids) for ids in completion_ids]


def lm_head(trainer: Any, cfg: RunConfig) -> str:
    """The LM head a GRPO phase trains with: ``"plain"`` where ``model.plain_lm_head`` is on and `plain_lm_head`
    applies, else TRL's own (``"trl"``); the phase's metrics record which."""
    return "plain" if cfg.model.plain_lm_head and plain_lm_head(trainer) else "trl"


def plain_lm_head(trainer: Any) -> bool:
    """On a device without Triton, replace TRL's fused LM head (``add_fused_lm_head``) by plain logits
    over the positions that have a label. TRL's torch fallback scores every position of the padded
    batch in vocabulary tiles and measured most of a CPU GRPO step's backward (benchmarks/RESULTS.md);
    a small vocabulary needs no tiling. The same log-probabilities and entropies (a test); applied
    to a GRPOTrainer's model (which TRL has patched), without PEFT, a reference model, logit scaling
    or soft-capping. Returns whether applied."""
    import torch
    from trl.kernels.chunked_logprob import _use_triton
    from trl.trainer.utils import FusedCausalLMOutput

    model = trainer.model
    text = model.config.get_text_config()
    scaling = ("final_logit_softcapping", "logit_scale", "output_multiplier", "lm_head_multiplier", "logits_scaling")
    scaled = any(getattr(text, k, None) is not None for k in scaling)
    if scaled or hasattr(model, "peft_config") or _use_triton(model.device) or trainer.ref_model is not None:
        return False
    fused, temperature = model.forward, float(trainer.temperature)

    def forward(self: Any, *args: Any, fused_lm_head: bool = False, labels: Any = None, **kwargs: Any) -> Any:
        if not fused_lm_head or labels is None or "shift_labels" in kwargs or kwargs.get("output_router_logits"):
            return fused(*args, fused_lm_head=fused_lm_head, labels=labels, **kwargs)
        items = kwargs.pop("num_items_in_batch", None)
        kwargs["use_cache"] = False
        hidden = self.base_model(*args, **kwargs).last_hidden_state[:, :-1]
        labels = labels[:, 1:]
        mask = labels != -100
        logp = torch.log_softmax(self.get_output_embeddings()(hidden[mask]).float() / temperature, dim=-1)
        token = logp.gather(-1, labels[mask].unsqueeze(-1)).squeeze(-1)
        entropy = -(logp.exp() * logp).sum(-1)
        log_probs = token.new_zeros(mask.shape).masked_scatter(mask, token)
        loss = -token.sum() / (mask.sum().clamp(min=1) if items is None else items)  # as TRL's head
        return FusedCausalLMOutput(loss=loss, log_probs=log_probs,
                                   entropy=entropy.new_zeros(mask.shape).masked_scatter(mask, entropy), label_mask=mask)

    model.forward = types.MethodType(forward, model)
    return True

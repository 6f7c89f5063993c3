"""One training phase each: SFT warm start, GRPO (generator or answerer), proposal sampling.

Thin wrappers over TRL: they build the config from the run's settings, run the trainer, save the
phase's ``final_model`` atomically, and check the phase's health.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
import time
import urllib.request
from pathlib import Path
from typing import Any

from tqdm import tqdm

from osint_eval.modeling import load_model_and_tokenizer
from osint_eval.policies import HFPolicy
from osint_gym import chat
from osint_selfplay import sft
from osint_selfplay.artifacts import atomic_dir, atomic_write_jsonl, write_model_card
from osint_selfplay.config import RunConfig
from osint_selfplay.curves import grpo_callback
from osint_selfplay.data import as_messages
from osint_selfplay.errors import ConfigError, HealthError
from osint_selfplay.grpo_config import GRPOPhaseConfig
from osint_selfplay.precision import Precision, product_shape, step_tokens
from osint_selfplay.precision import resolve as resolve_precision
from osint_selfplay.results import (
    DevPoint,
    ExtraRows,
    GRPOResult,
    Health,
    SFTResult,
    StepMark,
    TrainingResult,
    ZeroVarianceStep,
)
from osint_selfplay.rewards import ZERO_VARIANCE_METRIC
from osint_selfplay.trl_compat import device_args, grpo_config, lm_head

log = logging.getLogger("osint_selfplay")
DECAY_START = "decay_start.pt"  # a packed warm start's state where its learning rate began to decay
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def _peft_config(cfg: RunConfig) -> Any:
    if cfg.tuning_mode != "lora":
        return None
    from peft import LoraConfig

    return LoraConfig(r=cfg.lora.r, lora_alpha=cfg.lora.alpha, lora_dropout=cfg.lora.dropout,
                      target_modules=list(cfg.lora.target_modules), task_type="CAUSAL_LM")


def check_vllm(cfg: RunConfig, probe_seconds: float = 5.0) -> None:
    """A clear error before any model is loaded when vLLM is asked for but missing: in server mode
    the `trl vllm-serve` URL must answer ``/health`` within ``probe_seconds`` (TRL itself would wait
    ``vllm_server_timeout``, 240 s by default, and then fail)."""
    if not cfg.use_vllm:
        return
    if cfg.vllm_mode == "server":
        url = cfg.vllm_server_base_url.rstrip("/") + "/health"  # what TRL's VLLMClient.check_server polls
        try:  # urlopen raises for an error status as well (HTTPError and URLError are OSErrors)
            urllib.request.urlopen(url, timeout=probe_seconds).close()  # noqa: S310 - the configured server
        except OSError as exc:
            raise ConfigError(
                f"no vLLM server answers at {url} ({getattr(exc, 'reason', exc)}); start one first, e.g. "
                "CUDA_VISIBLE_DEVICES=7 trl vllm-serve --model <model> --port 8000 (see the README's scale-out recipe)"
            ) from None
    from trl.import_utils import is_vllm_available

    if not is_vllm_available():
        raise ConfigError("use_vllm = true, but vLLM is not installed; on a CUDA machine run "
                          "pip install 'osint-selfplay[vllm]' (or set use_vllm = false)")


def _signature(model: Any) -> dict[str, float]:
    """A cheap fingerprint of the trainable parameters (sum and sum of squares per tensor)."""
    import torch

    with torch.no_grad():
        return {
            n: float(p.detach().double().sum() + p.detach().double().pow(2).sum())
            for n, p in model.named_parameters()
            if p.requires_grad
        }


def _changed(before: dict[str, float], after: dict[str, float]) -> int:
    return sum(1 for n, v in before.items() if n in after and after[n] != v)


class _LogCapture:
    """A TrainerCallback that keeps every log dict (written to metrics.jsonl by the phase)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        from transformers import TrainerCallback

        class Capture(TrainerCallback):
            def __init__(self, phase: str) -> None:
                self.phase = phase
                self.logs: list[dict[str, Any]] = []

            def on_log(
                self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any
            ) -> None:
                if logs:
                    entry = {"phase": self.phase, "step": state.global_step, **{k: v for k, v in logs.items()
                             if isinstance(v, (int, float, str)) or v is None}}
                    self.logs.append(entry)
                    log.info("%s", json.dumps(entry))  # the run's log file (the terminal shows warnings only)

        return Capture(*args, **kwargs)


def quiet_progress(trainer: Any) -> None:
    """The trainer's progress bar without its per-step log dicts: transformers' ``ProgressCallback`` writes
    each one to the terminal; `_LogCapture` sends them to the run's log file and metrics.jsonl instead."""
    from transformers.trainer_callback import ProgressCallback

    class BarOnly(ProgressCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any) -> None:
            return None

    if trainer.pop_callback(ProgressCallback) is not None:
        trainer.add_callback(BarOnly())


def _save_final(model: Any, tokenizer: Any, folder: Path, card: dict[str, Any]) -> None:
    def build(tmp: Path) -> None:
        m = model
        if hasattr(m, "merge_and_unload"):  # LoRA: save a plain, loadable model
            m = m.merge_and_unload()
        m.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        write_model_card(tmp, **card)

    atomic_dir(folder, build)


def copy_model(src: str, folder: Path, card: dict[str, Any]) -> None:
    """Dry runs and skipped phases: the phase's output is its input, as its own folder."""
    def build(tmp: Path) -> None:
        shutil.copytree(src, tmp, dirs_exist_ok=True)
        write_model_card(tmp, **card)

    atomic_dir(folder, build)


def renders_tools(model_path: str) -> bool:
    """Whether the chat template of the model in ``model_path`` renders tools (`osint_gym.chat.supports_tools`):
    its multi-turn conversations, demonstrations included, are then in that template's tool-call format."""
    from transformers import AutoTokenizer

    return chat.supports_tools(AutoTokenizer.from_pretrained(model_path).chat_template)


def run_sft(model_path: str, rows: list[dict[str, Any]], cfg: RunConfig, out: Path, role: str, base_model: str, *,
            extra_steps: int | None = None, skip_rows: int = 0, label: str = "warm start",
            branch: Path | None = None, warm_steps: int | None = None, resume_data: bool = True,
            settings: dict[str, Any] | None = None, extra: list[dict[str, Any]] | None = None,
            extra_share: float = 0.0, probe: Any = None, precision: Precision | None = None) -> SFTResult:
    """Supervised training on verified demonstrations, the loss on the model's turns only: packed
    (`osint_selfplay.sft`) when ``warm_start.packing``, else TRL's SFTTrainer. Without ``extra_steps`` it is
    the warm start (bounded by ``warm_start.epochs``, ``max_steps`` and ``max_seconds``). ``extra_steps`` and
    ``skip_rows`` (packed only) continue it by that many optimizer steps (the equal-compute control, relabelling's
    SFT): with ``branch`` (the state a ``warm_steps``-step warm start saved where its decay began) it resumes
    there and its schedule is stretched by ``extra_steps`` (`osint_selfplay.sft.stretched`), its data where the
    warm start's stood unless ``resume_data`` is false.
    ``settings``: `sft.SFTSettings` fields that replace the warm start's (relabelling's fresh optimizer).
    ``extra`` (packed only): conversations of which ``extra_share`` of every step's packed rows are drawn
    (relabelling's), beside ``rows``' stream. ``probe`` (a `curves.DevProbe`, packed only): the dev curve's
    points every ``eval.curve_every`` steps and at the end (``dev_curve``, ``curve_seconds``). ``precision``
    (packed only): the run's resolved ``warm_start.autocast`` (`osint_selfplay.precision`); without one it is
    resolved here for this model (a caller outside a run)."""
    card = {"base_model": base_model, "role": f"{role} ({label})", "config": cfg.to_dict(),
            "data": {"demonstrations": len(rows)}, "metrics": {}}
    if cfg.dry_run:
        copy_model(model_path, out / "final_model", card)
        return SFTResult(dry_run=True, examples=len(rows))
    if cfg.warm_start.packing:
        return _run_packed_sft(model_path, rows, cfg, out, card, extra_steps=extra_steps, skip_rows=skip_rows,
                               branch=branch, warm_steps=warm_steps, resume_data=resume_data,
                               overrides=settings or {}, extra=extra or [], extra_share=extra_share, probe=probe,
                               precision=precision)
    if extra or any("masked_turns" in r for r in rows):
        raise ConfigError("relabelled conversations mask the student's turns, which only the packed loop can: "
                          "set warm_start.packing = true (or relabel.enabled = false)")
    if extra_steps is not None or skip_rows:
        raise ConfigError("the equal-compute control continues a packed warm start: set warm_start.packing = true")
    return _run_trl_sft(model_path, rows, cfg, out, role, card)


def _run_trl_sft(model_path: str, rows: list[dict[str, Any]], cfg: RunConfig, out: Path, role: str,
                 card: dict[str, Any]) -> SFTResult:
    """The unpacked warm start: TRL's SFTTrainer over ``rows`` for ``warm_start.epochs``."""
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    ws = cfg.warm_start
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    multi_turn = bool(rows) and "messages" in rows[0]
    # prompt/completion rows: loss on the completion; multi-turn "messages" rows: loss on assistant turns
    loss_mask = {"assistant_only_loss": True} if multi_turn else {"completion_only_loss": True}
    args = SFTConfig(
        output_dir=str(out / "trainer"), per_device_train_batch_size=ws.batch_size, num_train_epochs=ws.epochs,
        learning_rate=ws.learning_rate, warmup_steps=ws.warmup_steps, lr_scheduler_type="linear", weight_decay=0.01,
        adam_beta2=0.98, max_grad_norm=1.0, max_length=ws.max_length, logging_steps=10, save_strategy="no",
        seed=cfg.seed, **loss_mask, **device_args(cfg),
    )
    capture = _LogCapture(f"sft_{role}")
    trainer = SFTTrainer(model=model_path, args=args, train_dataset=Dataset.from_list(rows), processing_class=tokenizer,
                         callbacks=[capture])
    quiet_progress(trainer)
    t0 = time.perf_counter()
    trainer.train()
    metrics = SFTResult(examples=len(rows), steps=trainer.state.global_step, seconds=time.perf_counter() - t0,
                        final_loss=next((entry["loss"] for entry in reversed(capture.logs) if "loss" in entry), None))
    card["metrics"] = metrics.to_dict()
    if trainer.accelerator.is_main_process:  # under accelerate every process trains, one saves
        atomic_write_jsonl(out / "metrics.jsonl", capture.logs)
        _save_final(trainer.accelerator.unwrap_model(trainer.model), tokenizer, out / "final_model", card)
        shutil.rmtree(out / "trainer", ignore_errors=True)
    trainer.accelerator.wait_for_everyone()
    return metrics


def _run_packed_sft(model_path: str, rows: list[dict[str, Any]], cfg: RunConfig, out: Path, card: dict[str, Any], *,
                    extra_steps: int | None, skip_rows: int, branch: Path | None = None,
                    warm_steps: int | None = None, resume_data: bool = True,
                    overrides: dict[str, Any] | None = None, extra: list[dict[str, Any]] | None = None,
                    extra_share: float = 0.0, probe: Any = None, precision: Precision | None = None) -> SFTResult:
    import torch

    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise ConfigError(
            "warm_start.packing trains in one process; under accelerate launch set warm_start.packing = false"
        )
    ws = cfg.warm_start
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model, tokenizer = load_model_and_tokenizer(model_path, dtype=cfg.model.dtype, device=device)
    if cfg.tuning_mode == "lora":
        from peft import get_peft_model

        model = get_peft_model(model, _peft_config(cfg))
    t0 = time.perf_counter()
    packed = _pack_rows(sft, tokenizer, rows, ws.max_length)
    extra_packed = _pack_rows(sft, tokenizer, extra, ws.max_length) if extra else None
    tokenize_seconds = time.perf_counter() - t0
    warm = extra_steps is None  # the warm start itself; else a continuation of it by extra_steps
    if precision is None:
        precision = resolve_precision(ws.autocast, device, product_shape(model.config, step_tokens(ws)))
    settings = _packed_settings(
        cfg, extra_steps, skip_rows, extra_rows(ws.batch_size, extra_share) if extra_packed else 0, precision.autocast
    )
    settings = dataclasses.replace(settings, **(overrides or {}))
    start = None
    if branch is not None:  # the warm start's own state where its decay began: no warm-up, its optimizer
        start = torch.load(branch, map_location=device, weights_only=True)
        steps, decay = sft.stretched(float(warm_steps or 0), float(start["step"]), float(extra_steps or 0))
        settings = dataclasses.replace(settings, warmup_steps=0, max_steps=round(steps), decay_fraction=decay,
                                       skip_rows=int(start["next_row"]) if resume_data else 0)
    saving = warm and ws.decay_fraction > 0  # the warm start keeps its decay's start for the control
    points: list[DevPoint] = []
    probing = probe is not None and probe.enabled
    label = str(card["role"])

    def measure(step: int, m: Any) -> None:
        points.append(probe.measure(m, tokenizer, label, step))

    trained, logs = sft.train_packed(model, packed, settings, pad_id=tokenizer.pad_token_id, device=device, desc=label,
                                     branch_path=out / DECAY_START if saving else None, start=start,
                                     extra=extra_packed, every=probe.every if probing else 0,
                                     on_step=measure if probing else None)
    metrics = dataclasses.replace(
        trained,
        examples=len(rows),
        packed_rows=len(packed),
        dropped_too_long=packed.dropped_too_long,
        trained_tokens_per_epoch=packed.trained_tokens,
        tokenize_seconds=tokenize_seconds,
        precision=precision.precision,
        branched_at=StepMark(step=start["step"], seconds=start["seconds"], next_row=start["next_row"])
        if start is not None else None,
        extra=ExtraRows(conversations=extra_packed.conversations, packed_rows=len(extra_packed),
                        dropped_too_long=extra_packed.dropped_too_long, rows_per_step=settings.extra_rows,
                        trained_tokens=extra_packed.trained_tokens) if extra_packed is not None else None,
    )
    card["metrics"] = metrics.to_dict()
    atomic_write_jsonl(out / "metrics.jsonl", [{"phase": str(card["role"]), **entry} for entry in logs])
    _save_final(model.to("cpu"), tokenizer, out / "final_model", card)
    if probing:
        _finish_curve(probe, points, out / "final_model", label, metrics)
    return metrics


def _packed_settings(cfg: RunConfig, extra_steps: int | None, skip_rows: int, extra_rows_per_step: int,
                     autocast: str) -> Any:
    """`sft.SFTSettings` from ``warm_start``: the warm start itself (``extra_steps`` None: its epochs and
    bounds) or a continuation of it by ``extra_steps`` optimizer steps from packed row ``skip_rows``, in the
    resolved ``autocast`` (`osint_selfplay.precision`)."""
    ws = cfg.warm_start
    warm = extra_steps is None
    return sft.SFTSettings(
        learning_rate=ws.learning_rate,
        batch_size=ws.batch_size,
        epochs=ws.epochs if warm else None,
        seed=cfg.seed,
        warmup_steps=ws.warmup_steps
        if not skip_rows
        else min(sft.FRESH_WARMUP_STEPS, ws.warmup_steps),  # a fresh optimizer: a short warm-up
        max_seconds=(ws.max_seconds or None) if warm else None,
        max_steps=(ws.max_steps or None) if warm else extra_steps,
        skip_rows=skip_rows,
        decay_fraction=ws.decay_fraction,
        autocast=autocast,
        extra_rows=extra_rows_per_step,
    )


def extra_rows(batch_size: int, share: float) -> int:
    """Packed rows of each step taken from a second set making up ``share`` of the step (at least one
    when the share is positive, at most ``batch_size - 1``, so the main stream always advances)."""
    if share <= 0:
        return 0
    return min(batch_size - 1, max(1, round(batch_size * share)))


def _pack_rows(sft: Any, tokenizer: Any, rows: list[dict[str, Any]], max_length: int) -> Any:
    """``rows`` (messages, or prompt/completion pairs) tokenized with their assistant masks (a relabelled
    row's ``masked_turns`` first turns masked out; a native row's ``tools`` given to the template) and packed
    into rows of ``max_length``."""
    conversations = as_messages(rows)
    tools = [json.loads(r["tools"]) if r.get("tools") else None for r in conversations]  # native rows' schemas
    return sft.pack(sft.tokenize(tokenizer, [r["messages"] for r in conversations],
                                 masked_turns=[int(r.get("masked_turns", 0)) for r in conversations],
                                 tools=tools), max_length)


def grpo_args(phase: GRPOPhaseConfig, cfg: RunConfig, out: Path, seed: int, path: str = "grpo") -> Any:
    """TRL's GRPOConfig for a phase writing under ``out`` (see `trl_compat.grpo_config`)."""
    return grpo_config(phase, cfg, str(out / "trainer"), seed, path)


def run_grpo(
    model_path: str,
    rows: list[dict[str, Any]],
    reward: Any,
    phase: GRPOPhaseConfig,
    cfg: RunConfig,
    out: Path,
    role: str,
    base_model: str,
    seed: int,
    rollout_func: Any = None,
    probe: Any = None,
    label: str = "",
    callbacks: list[Any] | None = None,
) -> GRPOResult:
    """One GRPO phase; returns its metrics and health report. ``probe`` (a `curves.DevProbe`): the dev
    curve's points every ``eval.curve_every`` steps and at the end (``dev_curve``, ``curve_seconds``).
    ``callbacks``: more TrainerCallbacks (a benchmark's deadline)."""
    card = {
        "base_model": base_model,
        "role": role,
        "config": cfg.to_dict(),
        "data": {"prompts": len(rows)},
        "metrics": {},
    }
    if cfg.dry_run:
        copy_model(model_path, out / "final_model", card)
        return GRPOResult(dry_run=True, prompts=len(rows))
    check_vllm(cfg)
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOTrainer

    tokenizer = AutoTokenizer.from_pretrained(model_path, padding_side="left")
    capture = _LogCapture(f"grpo_{role}")
    callbacks = [capture, *(callbacks or [])]
    points: list[DevPoint] = []
    probing = probe is not None and probe.enabled
    if probing:
        callbacks.append(grpo_callback(probe, tokenizer, label or f"{role} GRPO", points))
    trainer = GRPOTrainer(
        model=model_path,
        reward_funcs=[reward],
        args=grpo_args(phase, cfg, out, seed, f"grpo_{role}"),
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        callbacks=callbacks,
        peft_config=_peft_config(cfg),
        rollout_func=rollout_func,
    )
    quiet_progress(trainer)
    head = lm_head(trainer, cfg)  # see trl_compat.plain_lm_head
    before = _signature(trainer.model)
    t0 = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - t0
    model = trainer.accelerator.unwrap_model(trainer.model)
    rewards = _grpo_rewards(capture.logs, phase)
    health, warnings = _grpo_health(role, before, _signature(model), rewards.zero_variance_steps or [], cfg.strict)
    metrics = dataclasses.replace(rewards, steps=trainer.state.global_step, seconds=seconds, lm_head=head,
                                  health=health, warnings=warnings)
    card["metrics"] = metrics.to_dict()
    if trainer.accelerator.is_main_process:
        atomic_write_jsonl(out / "metrics.jsonl", capture.logs)
        _save_final(model, tokenizer, out / "final_model", card)
        shutil.rmtree(out / "trainer", ignore_errors=True)
        if probing:
            _finish_curve(probe, points, out / "final_model", label or f"{role} GRPO", metrics)
    trainer.accelerator.wait_for_everyone()
    return metrics


def _grpo_health(role: str, before: dict[str, Any], after: dict[str, Any], zero_variance: list[ZeroVarianceStep],
                 strict: bool) -> tuple[Health, list[str]]:
    """Did the phase change any parameter, and did any group's rewards vary (``zero_variance``: the
    steps' shares)? Warnings logged, raised when ``strict``."""
    changed = _changed(before, after)
    health = Health(parameters_changed=changed, parameters=len(before),
                    zero_variance_every_step=bool(zero_variance) and all(z.share >= 1.0 for z in zero_variance))
    warnings = []
    if changed == 0:
        warnings.append(f"{role} GRPO phase changed no parameter")
    if health.zero_variance_every_step:
        warnings.append(f"{role} GRPO phase: every step's rewards had zero variance (no learning signal)")
    for w in warnings:
        log.warning(w)
    if warnings and strict:
        raise HealthError("; ".join(warnings) + " (strict = true)")
    return health, warnings


def _grpo_rewards(logs: list[dict[str, Any]], phase: GRPOPhaseConfig) -> GRPOResult:
    """The first and last logged mean reward and each step's share of zero-variance groups: the
    answerer rewards' exact count (`rewards.ZERO_VARIANCE_METRIC`) where the reward logs it, else
    TRL's ``frac_reward_zero_std`` (the generator's reward), named in ``zero_variance_metric``."""
    train_logs = [entry for entry in logs if "reward" in entry]
    key = ZERO_VARIANCE_METRIC if any(ZERO_VARIANCE_METRIC in e for e in train_logs) else "frac_reward_zero_std"
    shares = [(e["step"], e[key]) for e in train_logs if e.get(key) is not None]
    groups = phase.per_device_train_batch_size * phase.gradient_accumulation_steps // phase.num_generations
    return GRPOResult(
        reward_first=train_logs[0]["reward"] if train_logs else None,
        reward_last=train_logs[-1]["reward"] if train_logs else None,
        zero_variance_metric=key,
        zero_variance_mean=sum(share for _, share in shares) / len(shares) if shares else None,
        zero_variance_steps=[ZeroVarianceStep(step=step, share=share, groups=groups) for step, share in shares],
    )


def _finish_curve(probe: Any, points: list[DevPoint], final_model: Path, label: str, metrics: TrainingResult) -> None:
    """Close a phase's dev curve: a point at its last step unless one was measured there; into ``metrics``."""
    if not points or points[-1].step != metrics.steps:
        points.append(probe.measure_path(str(final_model), label, metrics.steps))
    metrics.dev_curve = points
    metrics.curve_seconds = sum(p.seconds for p in points)


def sample_completions(model_dir: str, conversations: list[list[dict[str, str]]], *, temperature: float, seed: int,
                       max_new_tokens: int, batch_size: int = 64, desc: str = "sampling",
                       decoding: str = "generate") -> list[str]:
    """Completions of a checkpoint (the generator proposing tasks for the answerer), with a
    progress bar. The conversations are sampled in chunks of ``batch_size`` in the callers' order, the
    chunk that starts at index ``i`` seeded ``seed + i``: a completion depends on its chunk only. This is
    not what one ``HFPolicy.generate`` call over all of them would sample: that call sorts the prompts by
    length before it cuts batches, so its batches, seeds and padding differ."""
    policy = HFPolicy(model_dir, batch_size=batch_size, max_new_tokens=max_new_tokens, temperature=temperature,
                      seed=seed, decoding=decoding)
    out: list[str] = []
    try:
        with tqdm(total=len(conversations), desc=desc, unit="prompt", leave=False) as bar:
            for start in range(0, len(conversations), batch_size):
                policy.seed = seed + start
                out += policy.generate(conversations[start : start + batch_size])
                bar.update(min(batch_size, len(conversations) - start))
        return out
    finally:
        policy.close()

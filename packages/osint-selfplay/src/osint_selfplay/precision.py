"""The warm start's precision, resolved from the machine: bfloat16 autocast where it is fast, float32 elsewhere.

``warm_start.autocast = "auto"`` (the tiny configs' default) becomes ``"bfloat16"`` only where the device has
native bfloat16 matrix kernels (a CUDA device that supports it; a CPU with AVX512-BF16 or AMX-BF16 on x86, BF16 on
ARM) *and* a sub-second measurement confirms it: one matrix product of the model's own size (an SFT step's tokens,
``batch_size`` packed rows of ``max_length``, x its hidden size x its MLP width) timed in float32 and under
bfloat16 autocast, in alternating short rounds (the median of their ratios, so that a burst of load on a shared
machine weighs on both dtypes, not on one). A CPU without those kernels emulates bfloat16 (about 100 times slower
than float32 on an AVX2-only CPU, benchmarks/RESULTS.md), and a device that claims them but measures bfloat16 less
than `MIN_SPEEDUP` times as fast gets float32 too: bfloat16 costs precision, and a small model's product (where
autocast's casts weigh as much as the product) measures within noise of 1x, where two runs on one machine could
otherwise choose differently. Such a slow reading against a native claim is measured `PROBE_RETRIES` times more and
the best reading decides, since a busy machine slows the bfloat16 side of one probe far more than float32's.
``"bfloat16"`` and ``"none"`` stay explicit choices; a forced ``"bfloat16"`` that measures slow gets one warning
line with the ratio and the setting that avoids it.

No library answers this: transformers' ``is_torch_bf16_cpu_available()`` checks torch's version, not the CPU, so
the claim is read from ``torch.cpu.get_capabilities()`` (what cpuinfo reports) and checked by timing.

The choice is made once, when a run starts, recorded in its manifest (``run.json``: ``precision`` and
``machine.precision_choice``) and summary, and announced on the terminal; a resumed run and its controls read it
back rather than measure again, so one run trains in one precision.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osint_selfplay.results import Record

log = logging.getLogger("osint_selfplay")
REQUESTS = ("auto", "bfloat16", "none")  # warm_start.autocast's values
# the CPU capabilities (torch.cpu.get_capabilities keys) that mean native bfloat16 matrix kernels
NATIVE_CPU_BF16 = ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16")
PROBE_SECONDS = 0.1  # per dtype: the whole measurement stays under a second even where bfloat16 is emulated
PROBE_ROUNDS = 5  # alternating float32 / bfloat16 rounds, each PROBE_SECONDS / PROBE_ROUNDS long
MIN_SPEEDUP = 1.2  # "auto" takes bfloat16 only where it measured at least this many times float32's rate
PROBE_RETRIES = 2  # a native claim measured below MIN_SPEEDUP is measured this many times more; the best decides


@dataclass(kw_only=True)
class Precision(Record):
    """What ``warm_start.autocast`` resolved to on this machine, and why (run.json, summary.json)."""

    requested: str = "none"  # warm_start.autocast as configured
    precision: str = "float32"  # what packed SFT's matrix products run in: float32 or bfloat16
    device: str = "cpu"
    cpu_capability: str | None = None  # torch.backends.cpu.get_cpu_capability(): DEFAULT, AVX2, AVX512, ...
    native_bfloat16: bool = False  # the hardware's claim (see `native_bfloat16`)
    native_evidence: str = ""  # which capability made the claim, or which were looked for
    bfloat16_speedup: float | None = None  # bfloat16 autocast's product rate over float32's (> 1: faster)
    product: list[int] | None = None  # the timed product's m, k, n
    threads: int | None = None  # torch's intra-op threads during the measurement (the run's)
    reason: str = ""

    @property
    def autocast(self) -> str:
        """The value `osint_selfplay.sft.SFTSettings.autocast` takes."""
        return "bfloat16" if self.precision == "bfloat16" else "none"

    def line(self) -> str:
        """One line for the terminal and the summary."""
        ratio = "" if self.bfloat16_speedup is None else (
            f"; bfloat16 autocast ran at {self.bfloat16_speedup:.2f}x float32's speed on a "
            f"{'x'.join(map(str, self.product or []))} product")
        return (f"precision: {self.precision} (warm_start.autocast = {self.requested!r}: {self.reason}; "
                f"{self.device} {self.cpu_capability or ''}".rstrip() + f", {self.threads} torch threads{ratio})")


def native_bfloat16(device: str) -> tuple[bool, str]:
    """Whether ``device`` has native bfloat16 matrix kernels, and the evidence: CUDA's own answer, or the CPU
    capabilities (cpuinfo, through torch) that provide them."""
    import torch

    if device == "cuda":
        ok = bool(torch.cuda.is_bf16_supported())
        return ok, f"torch.cuda.is_bf16_supported() is {ok}"
    caps = torch.cpu.get_capabilities()
    found = [name for name in NATIVE_CPU_BF16 if caps.get(name)]
    if found:
        return True, "CPU has " + ", ".join(found)
    return False, "CPU has none of " + ", ".join(NATIVE_CPU_BF16)


def measure_speedup(device: str, m: int, k: int, n: int, seconds: float = PROBE_SECONDS) -> float:
    """bfloat16 autocast's rate over float32's for one (m x k) @ (k x n) float32 product on ``device``: the median
    ratio of `PROBE_ROUNDS` alternating rounds, each dtype timed for about ``seconds`` in all after one warm-up call
    (autocast's casts included, as in training)."""
    import statistics

    import torch

    a = torch.randn(m, k, device=device)
    b = torch.randn(k, n, device=device)

    def rate(bfloat16: bool, budget: float) -> float:
        with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=bfloat16):
            calls, t0 = 0, time.perf_counter()
            while calls == 0 or time.perf_counter() - t0 < budget:
                a @ b
                calls += 1
            _sync(device)
        return calls / (time.perf_counter() - t0)

    for bfloat16 in (False, True):  # warm-up: kernels chosen, caches filled
        with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=bfloat16):
            a @ b
        _sync(device)
    budget = seconds / PROBE_ROUNDS
    return statistics.median(rate(True, budget) / rate(False, budget) for _ in range(PROBE_ROUNDS))


def _sync(device: str) -> None:
    if device == "cuda":
        import torch

        torch.cuda.synchronize()


def step_tokens(warm_start: Any) -> int:
    """The tokens of one packed SFT step (``warm_start.batch_size`` rows of ``warm_start.max_length``): the rows the
    MLP multiplies at once, so the size the probe times."""
    return int(warm_start.max_length) * int(warm_start.batch_size)


def product_shape(config: Any, tokens: int) -> tuple[int, int, int]:
    """An SFT step's ``tokens`` (its packed rows' tokens together: the MLP multiplies them at once) x the model's
    hidden size x its MLP width (a transformers config; 4x hidden without one): the product that dominates the
    warm start's step. One row's tokens alone understate it: for the main job's model the ratio at one row sat near
    `MIN_SPEEDUP` and swung under load, at a step it did not (benchmarks/RESULTS.md, "The precision probe")."""
    hidden = int(getattr(config, "hidden_size", 0) or getattr(config, "n_embd", 0) or 512)
    width = int(getattr(config, "intermediate_size", 0) or 4 * hidden)
    return tokens, hidden, width


def resolve(requested: str, device: str, shape: tuple[int, int, int]) -> Precision:
    """``requested`` (warm_start.autocast) on ``device``: measured and decided (see the module docstring)."""
    import torch

    if requested not in REQUESTS:
        from osint_selfplay.errors import ConfigError

        raise ConfigError(f"warm_start.autocast must be one of {', '.join(map(repr, REQUESTS))}; got {requested!r}")
    native, evidence = native_bfloat16(device)
    speedup = measure_speedup(device, *shape)
    if requested == "auto" and native and speedup < MIN_SPEEDUP:
        # Another job on the machine slows bfloat16's kernels more than float32's (bench_precision.py --busy), so
        # a slow reading contradicting the hardware's claim is measured again: a device that really is slow in
        # bfloat16 measures slow every time, and contention that happened to hit one probe does not decide.
        speedup = max(speedup, *(measure_speedup(device, *shape) for _ in range(PROBE_RETRIES)))
    if requested == "none":
        precision, reason = "float32", "float32 as configured"
    elif requested == "bfloat16":
        precision = "bfloat16"
        reason = "bfloat16 as configured" + ("" if speedup >= 1 else ", though it measured slower than float32 here")
    elif not native:
        precision, reason = "float32", f"no native bfloat16 ({evidence})"
    elif speedup < 1:
        precision, reason = "float32", f"native bfloat16 ({evidence}), but it measured slower than float32"
    elif speedup < MIN_SPEEDUP:
        precision, reason = "float32", (f"native bfloat16 ({evidence}), but it measured less than {MIN_SPEEDUP}x "
                                        "float32's speed at this model's size")
    else:
        precision, reason = "bfloat16", f"native bfloat16 ({evidence}), measured faster than float32"
    return Precision(requested=requested, precision=precision, device=device,
                     cpu_capability=torch.backends.cpu.get_cpu_capability(), native_bfloat16=native,
                     native_evidence=evidence, bfloat16_speedup=round(speedup, 4), product=list(shape),
                     threads=torch.get_num_threads(), reason=reason)


def slow_warning(p: Precision) -> str | None:
    """The one line a forced, slow bfloat16 deserves (None otherwise)."""
    if p.requested != "bfloat16" or p.bfloat16_speedup is None or p.bfloat16_speedup >= 1:
        return None
    return (f"warm_start.autocast = 'bfloat16' is slow here: bfloat16 autocast ran at {p.bfloat16_speedup:.3g}x "
            f"float32's speed ({p.native_evidence}); set warm_start.autocast = 'auto' or 'none' to train in float32")


def announce(p: Precision) -> None:
    """The choice on the terminal (one line, above any progress bar) and in the run's log; a forced, slow
    bfloat16 as one warning line."""
    import sys

    from tqdm import tqdm

    tqdm.write(p.line(), file=sys.stderr)
    log.info("%s", p.line())
    warning = slow_warning(p)
    if warning:
        log.warning("%s", warning)


def recorded(manifest: Path) -> Precision | None:
    """The precision a run's manifest recorded (None for a run that predates the record, or no manifest)."""
    if not manifest.is_file():
        return None
    saved = json.loads(manifest.read_text()).get("machine", {}).get("precision_choice")
    return Precision.from_dict(saved, f"{manifest}: machine.precision_choice") if saved is not None else None


def for_run(requested: str, manifest: Path, model_path: str, tokens: int) -> Precision:
    """The run's precision: the one its manifest recorded (a resumed run, its controls), else resolved now for
    ``model_path``'s size and steps of ``tokens`` tokens on the device packed SFT uses."""
    import torch

    saved = recorded(manifest)
    if saved is not None:
        return saved
    from transformers import AutoConfig

    device = "cuda" if torch.cuda.is_available() else "cpu"
    return resolve(requested, device, product_shape(AutoConfig.from_pretrained(model_path), tokens))

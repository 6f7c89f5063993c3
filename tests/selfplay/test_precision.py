"""The warm start's precision is resolved from the machine (`osint_selfplay.precision`): "auto" takes bfloat16 only
where the hardware claims native bfloat16 kernels and a timing confirms them, records the choice in run.json and
the summary, and a forced slow bfloat16 says so in one line. The hardware probes (torch's CPU capabilities, CUDA's
answer, the timing) are mocked; the decision is the code's own."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from types import MappingProxyType

import pytest
import torch

from osint_selfplay import precision
from osint_selfplay.cli import main
from osint_selfplay.config import load_config
from osint_selfplay.errors import ConfigError
from osint_selfplay.report import format_summary

from .conftest import micro_overrides

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "selfplay"
SHAPE = (512, 128, 256)


def _cpu(monkeypatch, **caps):
    """This machine's CPU as cpuinfo would report one with ``caps`` (every bfloat16 capability off unless named)."""
    real = dict(torch.cpu.get_capabilities())
    real.update({name: False for name in precision.NATIVE_CPU_BF16})
    real.update(caps)
    monkeypatch.setattr(torch.cpu, "get_capabilities", lambda: MappingProxyType(real))


def _timing(monkeypatch, speedup):
    monkeypatch.setattr(precision, "measure_speedup", lambda device, m, k, n, seconds=0.1: speedup)


def test_auto_takes_float32_where_the_cpu_has_no_native_bfloat16(monkeypatch):
    _cpu(monkeypatch, avx2=True)
    _timing(monkeypatch, 1.7)  # even a timing that favoured bfloat16 does not override the missing kernels
    p = precision.resolve("auto", "cpu", SHAPE)
    assert (p.precision, p.autocast, p.native_bfloat16) == ("float32", "none", False)
    assert p.reason == "no native bfloat16 (CPU has none of avx512_bf16, amx_bf16, bf16, sve_bf16)"
    assert (p.bfloat16_speedup, p.product, p.threads) == (1.7, [512, 128, 256], torch.get_num_threads())
    assert p.cpu_capability == torch.backends.cpu.get_cpu_capability()


@pytest.mark.parametrize("flag", ["avx512_bf16", "amx_bf16", "bf16", "sve_bf16"])
def test_auto_takes_bfloat16_where_the_cpu_has_native_kernels_that_measure_faster(monkeypatch, flag):
    _cpu(monkeypatch, **{flag: True})
    _timing(monkeypatch, 2.4)
    p = precision.resolve("auto", "cpu", SHAPE)
    assert (p.precision, p.autocast, p.native_bfloat16) == ("bfloat16", "bfloat16", True)
    assert p.reason == f"native bfloat16 (CPU has {flag}), measured faster than float32"


def test_a_cpu_that_claims_bfloat16_but_measures_it_slower_gets_float32(monkeypatch):
    _cpu(monkeypatch, avx512_bf16=True)
    _timing(monkeypatch, 0.8)
    p = precision.resolve("auto", "cpu", SHAPE)
    assert p.precision == "float32" and p.native_bfloat16
    assert p.reason == "native bfloat16 (CPU has avx512_bf16), but it measured slower than float32"


@pytest.mark.parametrize(("speedup", "expected"), [(1.1, "float32"), (precision.MIN_SPEEDUP, "bfloat16")])
def test_auto_wants_bfloat16_to_pay_by_a_margin_not_by_noise(monkeypatch, speedup, expected):
    _cpu(monkeypatch, amx_bf16=True)
    _timing(monkeypatch, speedup)
    p = precision.resolve("auto", "cpu", SHAPE)
    assert p.precision == expected and p.bfloat16_speedup == speedup
    if expected == "float32":
        assert p.reason == ("native bfloat16 (CPU has amx_bf16), but it measured less than 1.2x float32's speed at "
                            "this model's size")


@pytest.mark.parametrize(("caps", "readings", "expected", "calls"), [
    ({"avx512_bf16": True}, [0.55, 0.6, 2.5], "bfloat16", 3),  # one probe hit by contention: the best of three
    ({"avx512_bf16": True}, [0.55, 0.6, 0.7], "float32", 3),  # slow every time: really slow here
    ({"avx512_bf16": True}, [2.5], "bfloat16", 1),  # fast at once: measured once
    ({}, [0.02], "float32", 1),  # no claim to confirm: measured once, for the record
])
def test_a_slow_reading_against_a_native_claim_is_measured_again(monkeypatch, caps, readings, expected, calls):
    _cpu(monkeypatch, **caps)
    queue = list(readings)
    monkeypatch.setattr(precision, "measure_speedup", lambda device, m, k, n, seconds=0.1: queue.pop(0))
    p = precision.resolve("auto", "cpu", SHAPE)
    assert (p.precision, p.bfloat16_speedup) == (expected, max(readings)) and len(readings) - len(queue) == calls


def test_cuda_asks_cuda_whether_it_has_bfloat16(monkeypatch):
    _timing(monkeypatch, 3.0)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert precision.resolve("auto", "cuda", SHAPE).precision == "bfloat16"
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    p = precision.resolve("auto", "cuda", SHAPE)
    assert p.precision == "float32" and p.native_evidence == "torch.cuda.is_bf16_supported() is False"


def test_explicit_choices_stay_and_a_slow_forced_bfloat16_gets_one_line(monkeypatch, caplog):
    _cpu(monkeypatch)
    _timing(monkeypatch, 0.0123)
    none = precision.resolve("none", "cpu", SHAPE)
    forced = precision.resolve("bfloat16", "cpu", SHAPE)
    assert none.precision == "float32" and precision.slow_warning(none) is None
    assert forced.precision == "bfloat16" and forced.reason == (
        "bfloat16 as configured, though it measured slower than float32 here")
    with caplog.at_level(logging.WARNING, logger="osint_selfplay"):
        precision.announce(forced)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        "warm_start.autocast = 'bfloat16' is slow here: bfloat16 autocast ran at 0.0123x float32's speed (CPU has "
        "none of avx512_bf16, amx_bf16, bf16, sve_bf16); set warm_start.autocast = 'auto' or 'none' to train in "
        "float32"]
    _timing(monkeypatch, 2.0)
    assert precision.slow_warning(precision.resolve("bfloat16", "cpu", SHAPE)) is None
    with pytest.raises(ConfigError, match="warm_start.autocast must be one of 'auto', 'bfloat16', 'none'; got 'fp8'"):
        precision.resolve("fp8", "cpu", SHAPE)


def test_the_measurement_is_sub_second_and_sees_this_machine():
    import time

    t0 = time.perf_counter()
    speedup = precision.measure_speedup("cpu", *SHAPE)
    assert 0 < speedup < 100 and time.perf_counter() - t0 < 1.5
    native, evidence = precision.native_bfloat16("cpu")
    caps = torch.cpu.get_capabilities()
    assert native == any(caps.get(f) for f in precision.NATIVE_CPU_BF16) and evidence.startswith("CPU has")


def test_the_shape_is_the_models_own():
    from transformers import LlamaConfig

    assert precision.product_shape(LlamaConfig(hidden_size=128, intermediate_size=256), 512) == (512, 128, 256)
    assert precision.product_shape(object(), 64) == (64, 512, 2048)


def test_the_tiny_configs_default_to_auto_and_old_values_still_load():
    for path in CONFIGS.glob("tiny-cpu*.toml"):
        assert load_config(str(path)).warm_start.autocast == "auto", path
    assert load_config(None).warm_start.autocast == "auto"
    assert load_config(None, ["warm_start.autocast='bfloat16'"]).warm_start.autocast == "bfloat16"
    with pytest.raises(ConfigError, match="warm_start.autocast must be one of 'auto', 'bfloat16', 'none'; got 'fp8'"):
        load_config(None, ["warm_start.autocast='fp8'"])


@pytest.mark.parametrize(("caps", "speedup", "expected"),
                         [({}, 0.01, "float32"), ({"amx_bf16": True}, 2.5, "bfloat16")])
def test_a_dry_run_of_the_main_job_records_and_announces_the_precision_it_resolved(
        tmp_path, tiny_path, monkeypatch, capsys, caps, speedup, expected):
    _cpu(monkeypatch, **caps)
    _timing(monkeypatch, speedup)
    out = tmp_path / "run"
    sizes = {k: v for k, v in (o.split("=", 1) for o in micro_overrides(out, **{"eval.enabled": "false"}))
             if k != "warm_start.autocast"  # the config's own "auto" is what this test resolves
             and k.split(".")[0] in ("output_dir", "train_worlds", "model", "warm_start", "generator", "answerer",
                                     "eval", "play")}
    args = ["train", "--config", str(CONFIGS / "tiny-cpu.toml"), "--dry-run", "--set",
            *[f"{k}={v}" for k, v in sizes.items()], "warm_start.workers=1", "play.workers=1"]
    assert main(args) == 0
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["config"]["warm_start"]["autocast"] == "auto" and manifest["precision"] == expected
    choice = manifest["machine"]["precision_choice"]
    assert choice["precision"] == expected and choice["bfloat16_speedup"] == speedup
    ws = manifest["config"]["warm_start"]  # timed at a whole step's tokens (tiny:64x2: hidden 64, MLP 128)
    assert choice["product"] == [ws["max_length"] * ws["batch_size"], 64, 128] == [512 * 16, 64, 128]
    assert choice["threads"] == manifest["machine"]["torch_threads"]
    assert choice["cpu_capability"] == manifest["machine"]["cpu_capability"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["precision"] == choice
    captured = capsys.readouterr()
    line = f"precision: {expected} (warm_start.autocast = 'auto': "
    assert sum(x.startswith(line) for x in captured.err.splitlines()) == 1  # announced once, at the start
    assert line in format_summary(summary) and line in captured.out
    # a resumed run keeps the recorded choice, whatever this machine would measure now
    _timing(monkeypatch, 1.0 if expected == "float32" else 0.5)
    assert precision.recorded(out / "run.json") == precision.Precision.from_dict(choice)
    assert precision.for_run("auto", out / "run.json", tiny_path, 512).precision == expected

"""Mixed precision on this CPU: float32 against bfloat16 autocast (float32 master weights), side by side.

    hatch run python benchmarks/bench_precision.py [--model runs/tiny-cpu/warm_start/shared/final_model]
        [--demos 2000] [--steps 30] [--rounds 3] [--tasks 128] [--probes 10] [--busy 0]

Three figures, each a ratio measured in alternating rounds of the same process:

1. the machine's limit: GFLOP/s of square matrix products (128 and 512) in float32 and bfloat16, on one
   thread and on all of torch's threads;
2. packed SFT (`osint_selfplay.sft.train_packed`, the main job's rows of 512 tokens, 8 a step) in
   demonstration tokens per second, float32 against ``autocast="bfloat16"``, and the GFLOP/s that rate
   means (6 x parameters x tokens, the forward and backward of a dense model; attention excluded);
3. greedy multi-turn episodes per second of ``--tasks`` v0:test tasks (the main job's episode settings and
   decoding), float32 against the same policy under ``torch.autocast("cpu", torch.bfloat16)``, and how many
   of the episodes end with the same answer.

Beside them it prints what ``warm_start.autocast = "auto"`` resolves to on this machine
(`osint_selfplay.precision`: the CPU capabilities torch reports, and its own sub-second timing of one product of
the model's size), so the decision can be read against the ratios measured here, and the spread of that probe's
ratio over ``--probes`` calls at one packed row's tokens and at a whole step's (the shape it times), on an otherwise
idle machine and, with ``--busy N``, beside N other CPU-bound processes (a machine busy when a run starts).

Speed alone does not decide: a faster SFT step is worth taking only if held-out success at equal wall time
holds (the main job's warm start with ``warm_start.autocast = "bfloat16"``, paired; see RESULTS.md).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import time
from pathlib import Path
from typing import Any

import torch

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "selfplay" / "tiny-cpu.toml"


def matmul_gflops(n: int, dtype: torch.dtype, threads: int, seconds: float = 0.5) -> float:
    torch.set_num_threads(threads)
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    for _ in range(3):
        a @ b
    calls, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        a @ b
        calls += 1
    return 2 * n**3 * calls / (time.perf_counter() - t0) / 1e9


def _spin() -> None:
    """A CPU-bound process (another job on the machine while a run starts): spins until terminated."""
    x = 0
    while True:
        x = (x * 31 + 7) % 1_000_003


def _demos(n: int) -> list[dict[str, Any]]:
    from osint_selfplay import data
    from osint_selfplay.config import load_config
    from osint_selfplay.worlds import WorldPool

    cfg = load_config(str(CONFIG), [f"warm_start.answerer_examples={n}", "warm_start.workers=1"])
    rows, _ = data.sft_multi_turn_rows(WorldPool.for_run(cfg), cfg)
    return rows


def sft_rate(model_dir: str, packed: Any, pad_id: int, steps: int, autocast: str) -> dict[str, float]:
    from transformers import AutoModelForCausalLM

    from osint_selfplay import sft

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    s = sft.SFTSettings(learning_rate=1e-3, batch_size=8, epochs=None, max_steps=steps, warmup_steps=1,
                        autocast=autocast)
    out, _ = sft.train_packed(model, packed, s, pad_id=pad_id)
    params = sum(p.numel() for p in model.parameters())
    rate = (out.tokens or 0) / (out.seconds or 1.0)
    return {"tokens_per_second": rate, "gflops": 6 * params * rate / 1e9, "final_loss": out.final_loss}


def episodes_rate(model_dir: str, tasks: int, autocast: bool) -> tuple[float, list[Any]]:
    from osint_eval.policies import HFPolicy
    from osint_eval.runner import run_multi_turn
    from osint_gym.benchmark import benchmark_tasks, benchmark_world
    from osint_selfplay.config import load_config

    cfg = load_config(str(CONFIG))
    policy = HFPolicy(model_dir, batch_size=cfg.eval.batch_size, max_new_tokens=cfg.eval.max_new_tokens,
                      temperature=0.0, decoding=cfg.model.decoding)
    chosen = benchmark_tasks("v0:test")[:tasks]
    t0 = time.perf_counter()
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        results = run_multi_turn(policy, benchmark_world("v0:test"), chosen,
                                 spec=cfg.episode.spec(), batch_size=cfg.eval.batch_size)
    seconds = time.perf_counter() - t0
    policy.close()
    return tasks / seconds, [r.submitted for r in results]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="runs/tiny-cpu/warm_start/shared/final_model")
    ap.add_argument("--demos", type=int, default=2000)
    ap.add_argument("--steps", type=int, default=30, help="SFT steps per round and precision")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tasks", type=int, default=128, help="v0:test episodes per round and precision")
    ap.add_argument("--probes", type=int, default=10, help="calls of the precision probe per product shape")
    ap.add_argument("--busy", type=int, default=0,
                    help="also run the probe with this many other CPU-bound processes on the machine")
    args = ap.parse_args()
    if not Path(args.model).is_dir():
        raise SystemExit(f"bench_precision: no model at {args.model} (run the main job first: hatch run train)")
    threads = torch.get_num_threads()
    from transformers import AutoConfig

    from osint_selfplay import precision
    from osint_selfplay.config import load_config

    ws = load_config(str(CONFIG)).warm_start  # the main job's step: batch_size packed rows of max_length tokens
    config = AutoConfig.from_pretrained(args.model)
    shape = precision.product_shape(config, precision.step_tokens(ws))
    auto = precision.resolve("auto", "cpu", shape)
    print(f"== what warm_start.autocast = 'auto' chooses here ==\n{auto.line()}\n")
    for busy in sorted({0, args.busy}):
        print(f"== the probe's ratio (bfloat16 autocast / float32), {args.probes} calls each: one packed row's "
              f"tokens against a whole step's; {busy} other CPU-bound process(es) running ==")
        spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(busy)]
        for proc in spinners:
            proc.start()
        for tokens in (ws.max_length, precision.step_tokens(ws)):
            m, k, n = precision.product_shape(config, tokens)
            ratios = sorted(precision.measure_speedup("cpu", m, k, n) for _ in range(args.probes))
            print(f"{m}x{k}x{n}: min {ratios[0]:.2f}x | median {statistics.median(ratios):.2f}x | max "
                  f"{ratios[-1]:.2f}x | {sum(r >= precision.MIN_SPEEDUP for r in ratios)} of {len(ratios)} at the "
                  f"{precision.MIN_SPEEDUP}x that 'auto' asks for")
        chosen = [precision.resolve("auto", "cpu", shape).precision for _ in range(args.probes)]
        print(f"'auto' at {'x'.join(map(str, shape))} (retries included): bfloat16 in "
              f"{chosen.count('bfloat16')} of {len(chosen)} resolutions")
        for proc in spinners:
            proc.terminate()
            proc.join()
        print()
    print(f"== matrix products (GFLOP/s), torch {torch.__version__}, {threads} threads available ==")
    limit: dict[str, float] = {}
    for n in (128, 512):
        for t in sorted({1, threads}):
            f32, bf16 = matmul_gflops(n, torch.float32, t), matmul_gflops(n, torch.bfloat16, t)
            limit[f"{n}x{n}, {t} thread(s)"] = f32
            print(f"{n}x{n}, {t} thread(s): float32 {f32:.0f} | bfloat16 {bf16:.0f} | ratio {bf16 / f32:.2f}x")
    torch.set_num_threads(threads)

    from transformers import AutoTokenizer

    from osint_selfplay import sft

    tok = AutoTokenizer.from_pretrained(args.model)
    packed = sft.pack(sft.tokenize(tok, [r["messages"] for r in _demos(args.demos)]), 512)
    print(f"\n== packed SFT, {len(packed)} rows of 512 tokens, 8 a step, {args.steps} steps per round ==")
    sft_runs: dict[str, list[dict[str, float]]] = {"float32": [], "bfloat16": []}
    for r in range(args.rounds):
        for name, ac in (("float32", "none"), ("bfloat16", "bfloat16")):
            sft_runs[name].append(sft_rate(args.model, packed, tok.pad_token_id, args.steps, ac))
        ratio = sft_runs["bfloat16"][-1]["tokens_per_second"] / sft_runs["float32"][-1]["tokens_per_second"]
        print(f"round {r}: float32 {sft_runs['float32'][-1]['tokens_per_second']:.0f} tokens/s | bfloat16 autocast "
              f"{sft_runs['bfloat16'][-1]['tokens_per_second']:.0f} tokens/s | ratio {ratio:.2f}x")
    med = {k: statistics.median(x["tokens_per_second"] for x in v) for k, v in sft_runs.items()}
    gfl = {k: statistics.median(x["gflops"] for x in v) for k, v in sft_runs.items()}
    print(
        f"median: float32 {med['float32']:.0f} tokens/s ({gfl['float32']:.0f} GFLOP/s of 6 x parameters x tokens) | "
        f"bfloat16 {med['bfloat16']:.0f} ({gfl['bfloat16']:.0f} GFLOP/s) | "
        f"ratio {med['bfloat16'] / med['float32']:.2f}x"
    )

    print(f"\n== greedy multi-turn episodes, {args.tasks} v0:test tasks per round ==")
    ep: dict[str, list[float]] = {"float32": [], "bfloat16": []}
    same = 0
    for r in range(args.rounds):
        f32, answers32 = episodes_rate(args.model, args.tasks, False)
        bf16, answers16 = episodes_rate(args.model, args.tasks, True)
        ep["float32"].append(f32)
        ep["bfloat16"].append(bf16)
        same = sum(a == b for a, b in zip(answers32, answers16))
        print(f"round {r}: float32 {f32:.2f} episodes/s | bfloat16 autocast {bf16:.2f} | ratio {bf16 / f32:.2f}x")
    e32, e16 = statistics.median(ep["float32"]), statistics.median(ep["bfloat16"])
    print(f"median: float32 {e32:.2f} | bfloat16 {e16:.2f} | ratio {e16 / e32:.2f}x; "
          f"the same submitted answer in {same}/{args.tasks} episodes")
    print(json.dumps({"matmul_float32_gflops": limit, "sft_tokens_per_second": med, "sft_gflops": gfl,
                      "episodes_per_second": {"float32": e32, "bfloat16": e16}, "same_answers": same,
                      "tasks": args.tasks, "torch": torch.__version__, "auto": auto.to_dict()}))


if __name__ == "__main__":
    main()

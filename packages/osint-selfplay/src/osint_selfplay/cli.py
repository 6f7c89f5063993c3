"""``osint-selfplay``: train (self-play rounds), controls (a finished run's controls), generate (sample + validate
tasks from a generator), push (a run folder to the Hub) and launch (a run as a Hugging Face Job).

``--help`` imports no torch, trl or transformers: the functions that use them import them (see the package
docstring).
"""

from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
from pathlib import Path

from osint_eval.errors import EvalError
from osint_gym import proposals
from osint_gym.benchmark import benchmark_world
from osint_gym.errors import OSINTGymError
from osint_gym.tasks import save_jsonl
from osint_selfplay import phases
from osint_selfplay.__about__ import __version__
from osint_selfplay.config import load_config
from osint_selfplay.errors import ConfigError, SelfPlayError
from osint_selfplay.hub import DEFAULT_IMAGE, checkout_source, job_spec, push_run, spec_json, submit
from osint_selfplay.loop import SelfPlayRun, after_run
from osint_selfplay.report import format_summary
from osint_selfplay.streams import GENERATE


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="osint-selfplay", description="Adversarial generator/answerer self-play on OSINT-v0 with TRL GRPO."
    )
    p.add_argument("--version", action="version", version=f"osint-selfplay {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="run self-play rounds from a TOML config")
    t.add_argument(
        "--config",
        help=(
            "TOML run config (without one: the built-in defaults, a smaller tiny-model CPU run; "
            "`hatch run train` uses configs/selfplay/tiny-cpu.toml)"
        ),
    )
    t.add_argument(
        "--set",
        dest="overrides",
        action="extend",
        nargs="+",
        default=[],
        metavar="KEY=VALUE",
        help="override config values (TOML syntax), e.g. --set rounds=3 grpo_answerer.max_steps=10 (repeatable)",
    )
    t.add_argument(
        "--resume", action="store_true", help="continue the run in output_dir from its first unfinished phase"
    )
    t.add_argument(
        "--overwrite",
        action="store_true",
        help="delete output_dir's earlier run first (without it, a folder holding a run is refused)",
    )
    t.add_argument(
        "--dry-run", action="store_true", help="materialise every dataset and artifact, skip gradient updates"
    )
    g = sub.add_parser("generate", help="sample task proposals from a generator checkpoint and validate them")
    g.add_argument("--model", required=True, help="generator checkpoint (folder, hub id or tiny: spec)")
    g.add_argument("--n", type=int, default=200, help="proposals to sample (default 200)")
    g.add_argument("--out", required=True, help="JSONL file for the valid tasks")
    g.add_argument("--split", default="v0:train", help="benchmark split whose world the tasks are about")
    g.add_argument(
        "--mode", choices=["fixed", "generate", "choose"], default="fixed", help="offer mode (canonical_graph_mode)"
    )
    g.add_argument("--max-hops", type=int, default=2)
    g.add_argument(
        "--offer-filters",
        action="store_true",
        help=(
            "choose mode: offer the task families' filtered paths (generator.offer_filters), "
            "as a generator trained on them saw"
        ),
    )
    g.add_argument("--offer-choices", type=int, default=3,
                   help="choose mode: paths each offer numbers, 2..9 (generator.offer_choices; default 3)")
    g.add_argument("--temperature", type=float, default=1.0)
    g.add_argument("--seed", type=int, default=0)
    g.add_argument(
        "--overwrite", action="store_true", help="replace --out if it exists (without it, an existing file is refused)"
    )
    c = sub.add_parser(
        "controls",
        help="train a finished run's controls (equal-compute, uniform-task, curriculum arm) and imitation "
        "reference from its own models and add them to its paired evaluation (`hatch run train-controls`)",
    )
    c.add_argument("run_dir", help="the run's output_dir (holds run.json and summary.json)")
    u = sub.add_parser(
        "push", help="upload a run folder (reports, summaries, final models) to a Hugging Face Hub model repo"
    )
    u.add_argument("run_dir", help="the run's output_dir (holds run.json)")
    u.add_argument("--repo-id", required=True, help="user-or-org/name (created if missing)")
    u.add_argument("--private", action="store_true", help="create the repo private")
    u.add_argument("--revision", help="branch to push to (default: main)")
    j = sub.add_parser("launch", help="submit `osint-selfplay train` on this config as a Hugging Face Job "
                                      "(installing this checkout's packages at one pushed commit)")
    j.add_argument("--config", required=True, help="TOML run config (it travels with the job)")
    j.add_argument("--set", dest="overrides", action="extend", nargs="+", default=[], metavar="KEY=VALUE")
    j.add_argument("--flavor", default="a10g-large", help="Jobs hardware flavor (default a10g-large)")
    j.add_argument("--image", help="container image (default: a PyTorch CUDA runtime image)")
    j.add_argument("--timeout", default="8h", help="job timeout, e.g. 90m or 8h (default 8h)")
    j.add_argument("--push-to", metavar="REPO_ID", help="push the run folder here when training ends")
    j.add_argument(
        "--repo-url", help="git URL the job clones the packages from (default: this checkout's origin, as https)"
    )
    j.add_argument(
        "--commit",
        help="commit the job installs (default: HEAD, which must hold every change under packages/ and be pushed)",
    )
    j.add_argument("--dry-run", action="store_true", help="print the job spec as JSON and submit nothing")
    return p


def _train(args: argparse.Namespace) -> int:
    overrides = list(args.overrides) + (["dry_run=true"] if args.dry_run else [])
    cfg = load_config(args.config, overrides)
    args.output_dir = cfg.output_dir
    print(
        f"osint-selfplay train: {cfg.rounds} round(s) into {cfg.output_dir}; loading torch and TRL ...",
        file=sys.stderr,
        flush=True,
    )
    if args.overwrite and args.resume:
        raise ConfigError("--overwrite and --resume contradict each other; pass one")
    summary = SelfPlayRun(cfg, resume=args.resume, overwrite=args.overwrite).run()
    print(format_summary(summary))
    return 0


def _controls(args: argparse.Namespace) -> int:
    print(f"osint-selfplay controls: {args.run_dir}; loading torch and TRL ...", file=sys.stderr, flush=True)
    print(format_summary(after_run(args.run_dir)))
    return 0


def _check_out(out: Path, overwrite: bool) -> None:
    if out.is_dir():
        raise ConfigError(f"--out {str(out)!r} is a folder; name a .jsonl file")
    if out.exists() and not overwrite:
        raise ConfigError(f"--out {str(out)!r} exists; pass --overwrite to replace it")


def _generate(args: argparse.Namespace) -> int:
    if args.n < 1:
        raise ConfigError(f"--n must be >= 1, got {args.n}")
    _check_out(Path(args.out), args.overwrite)
    world = benchmark_world(args.split)
    offers = proposals.stream_offers(world, args.seed, GENERATE, args.n, mode=args.mode, max_hops=args.max_hops,
                                     filters=args.offer_filters, choices=args.offer_choices)

    def generate(prompts: list[list[dict[str, str]]]) -> list[str]:
        return phases.sample_completions(args.model, prompts, temperature=args.temperature, seed=args.seed,
                                         max_new_tokens=128)

    batch = proposals.sample_tasks([world] * len(offers), offers, generate, max_hops=args.max_hops, id_prefix="gen-")
    tasks, reasons = batch.tasks, batch.reasons
    save_jsonl(tasks, args.out)
    print(
        f"valid: {len(tasks)}/{args.n} ({len(tasks) / args.n:.1%}); "
        f"reasons: {json.dumps(dict(sorted(reasons.items())))}"
    )
    print(f"wrote {len(tasks)} tasks to {args.out}")
    return 0


def _push(args: argparse.Namespace) -> int:
    print(
        f"pushed {args.run_dir} to {args.repo_id}: "
        f"{push_run(args.run_dir, args.repo_id, private=args.private, revision=args.revision)}"
    )
    return 0


def _launch(args: argparse.Namespace) -> int:
    source = checkout_source(args.repo_url, args.commit)
    spec = job_spec(args.config, args.overrides, flavor=args.flavor, source=source, image=args.image or DEFAULT_IMAGE,
                    timeout=args.timeout, repo_id=args.push_to)
    if args.dry_run:
        print(spec_json(spec))
        return 0
    print(f"submitted: {submit(spec)}")
    return 0


def _resume_hint(args: argparse.Namespace) -> str:
    """How to continue an interrupted command (finished phases are kept; the unfinished one restarts)."""
    if args.command == "controls":
        return (
            f"Finished controls are kept in {args.run_dir}; "
            f"continue with: osint-selfplay controls {shlex.quote(args.run_dir)}"
        )
    if args.command != "train":
        return "Nothing was written; run the command again."
    if not getattr(args, "output_dir", None):
        return "Nothing was written yet; run the command again."
    argv = [a for a in args.argv if a not in ("--resume", "--overwrite")]
    return f"Finished phases are kept in {args.output_dir}; continue with: osint-selfplay {shlex.join(argv)} --resume"


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    # the terminal: progress bars, warnings and the summary; every INFO line (phases, trainers' per-step log dicts)
    # goes to the run's train.log (`osint_selfplay.loop.log_file`)
    console = logging.StreamHandler()
    console.setLevel(logging.WARNING)  # a handler's level: records of loggers set to INFO propagate to it too
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s",
                        datefmt="%H:%M:%S", handlers=[console])
    try:
        return {"train": _train, "controls": _controls, "generate": _generate, "push": _push, "launch": _launch}[
            args.command
        ](args)
    except KeyboardInterrupt:
        print(f"osint-selfplay: interrupted. {_resume_hint(args)}", file=sys.stderr)
        return 130
    except (SelfPlayError, ConfigError) as exc:
        print(f"osint-selfplay: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # model loading and eval errors from osint-eval / osint-gym, as one line
        if isinstance(exc, (EvalError, OSINTGymError)):
            print(f"osint-selfplay: error: {exc}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())

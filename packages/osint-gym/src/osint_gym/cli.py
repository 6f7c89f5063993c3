"""``osint-gym``: demo, export benchmark splits, verify task files, serve OSINT-v0 over the network.

Errors are one line on stderr with exit status 2; Ctrl-C is one line with status 130. ``export``
never overwrites an existing file unless ``--overwrite`` is given, and writes atomically (a cut run
leaves no partial file). ``verify`` needs the world to verify against (``--split``, ``--metaqa-kb``
or ``--tsv``) and prints which one it used.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from osint_gym.__about__ import __version__
from osint_gym.errors import ConfigError, OSINTGymError
from osint_gym.tasks.task import DEFAULT_BUDGETS, DIFFICULTIES


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="osint-gym", description="OSINT-v0 tools: demo, export, verify.")
    p.add_argument("--version", action="version", version=f"osint-gym {__version__}")
    sub = p.add_subparsers(dest="command")
    d = sub.add_parser("demo", help="one demo episode of the tool-only oracle (the default)")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--difficulty", choices=DIFFICULTIES, default="hard")
    e = sub.add_parser("export", help="write a benchmark split as JSONL (Hugging Face datasets rows)")
    e.add_argument("--split", default="v0:test", help="benchmark split, e.g. v0:dev (default: v0:test)")
    e.add_argument("--out", required=True, help="the JSONL file to write (refused if it exists, unless --overwrite)")
    e.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    e.add_argument("--family")
    e.add_argument("--difficulty", choices=DIFFICULTIES)
    e.add_argument("--limit", type=int)
    v = sub.add_parser("verify", help="verify every task of a JSONL file against the world it belongs to")
    v.add_argument("path")
    world = v.add_mutually_exclusive_group(required=True)
    world.add_argument("--split", help="the benchmark split whose world the tasks belong to, e.g. v0:test")
    world.add_argument("--metaqa-kb", help="an imported MetaQA kb.txt (head|relation|tail) the tasks belong to")
    world.add_argument("--tsv", help="an imported head<TAB>relation<TAB>tail graph the tasks belong to")
    _serve_parser(sub)
    return p


def _serve_parser(sub: Any) -> None:
    s = sub.add_parser("serve", help="serve OSINT-v0 over OpenEnv's WebSocket protocol (needs osint-gym[serve])")
    s.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: loopback only)")
    s.add_argument("--port", type=int, default=8000)
    world = s.add_mutually_exclusive_group()
    world.add_argument("--benchmark", default=None, help="the benchmark split every session plays (default v0:test)")
    world.add_argument("--world-config", help="a world TOML (configs/gym/*.toml): sessions play tasks sampled on it")
    s.add_argument("--seed", type=int, default=0, help="world seed with --world-config")
    s.add_argument("--max-steps", type=int, default=DEFAULT_BUDGETS.max_steps)
    s.add_argument("--max-parallel-calls", type=int, default=DEFAULT_BUDGETS.max_parallel_calls)
    s.add_argument("--max-observation-chars", type=int, default=DEFAULT_BUDGETS.max_observation_chars)
    s.add_argument("--observation-format", choices=("json", "compact"), default=DEFAULT_BUDGETS.observation_format)
    s.add_argument("--no-describe-tools", "--bare-prompt", dest="describe_tools", action="store_false",
                   help="no tool description: the reset observation is the question alone (--bare-prompt: former name)")
    s.add_argument("--start-depth", type=int, default=None, metavar="K",
                   help="every session's episodes start after the demonstrator's first K steps (a reset's "
                        "start_depth option overrides it; default: the task's own, 0 for benchmark tasks)")
    s.add_argument("--action-format", choices=("json", "short"), default="json",
                   help="the syntax of the given steps' actions (either is accepted from clients)")
    s.add_argument("--max-sessions", type=int, default=512)
    s.add_argument("--idle-timeout", type=float, default=300.0, help="seconds before an idle session is closed")
    s.add_argument("--max-message-bytes", type=int, default=65536)
    s.add_argument("--rate", type=float, default=500.0, help="frames per second per session (2 s of burst)")
    s.add_argument("--token-env", default=None, metavar="VAR",
                   help="require 'Authorization: Bearer <token>', the token read from this environment variable")


def _serve(args: argparse.Namespace) -> int:
    from osint_gym.integrations.serve.app import serve
    from osint_gym.integrations.serve.protocol import ServeSettings
    from osint_gym.world import WorldConfig

    if not 0 < args.port < 65536:
        raise ConfigError(f"--port must be in 1..65535, got {args.port}")
    token = None
    if args.token_env:
        token = os.environ.get(args.token_env)
        if not token:
            raise ConfigError(f"--token-env {args.token_env}: that environment variable is not set")
    env = {"max_steps": args.max_steps, "max_parallel_calls": args.max_parallel_calls,
           "max_observation_chars": args.max_observation_chars, "observation_format": args.observation_format,
           "describe_tools": args.describe_tools, "action_format": args.action_format,
           **({} if args.start_depth is None else {"start_depth": args.start_depth})}
    settings = ServeSettings(
        benchmark=None if args.world_config else (args.benchmark or "v0:test"),
        world_config=WorldConfig.from_toml(args.world_config).to_dict() if args.world_config else None,
        seed=args.seed, env=env, max_sessions=args.max_sessions, idle_timeout_s=args.idle_timeout,
        max_message_bytes=args.max_message_bytes, rate_per_session=args.rate, token=token)
    serve(settings, args.host, args.port)
    return 0


def _check_out(out: str, overwrite: bool) -> Path:
    path = Path(out)
    if path.is_dir():
        raise ConfigError(f"--out {out!r} is a directory; name the JSONL file to write")
    if path.exists() and not overwrite:
        raise ConfigError(f"--out {out!r} already exists; pass --overwrite to replace it")
    if not path.parent.is_dir():
        raise ConfigError(f"--out {out!r}: folder {str(path.parent)!r} does not exist")
    return path


def _export(args: argparse.Namespace) -> int:
    from osint_gym.benchmark import benchmark_tasks
    from osint_gym.tasks import save_jsonl

    out = _check_out(args.out, args.overwrite)
    tasks = benchmark_tasks(args.split, family=args.family, difficulty=args.difficulty, limit=args.limit)
    save_jsonl(tasks, out)  # atomic: an interrupted export leaves no partial file behind
    print(f"wrote {len(tasks)} tasks of {args.split} to {out}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from osint_gym.tasks import load_jsonl, verify_task

    if args.split:
        from osint_gym.benchmark import benchmark_world

        world, against = benchmark_world(args.split), f"benchmark {args.split}"
    else:
        from osint_gym.world.loaders import load_metaqa_kb, load_tsv

        world = load_metaqa_kb(args.metaqa_kb) if args.metaqa_kb else load_tsv(args.tsv)
        against = f"graph {args.metaqa_kb or args.tsv}"
    tasks = load_jsonl(args.path)
    reasons = Counter(verify_task(world, t).reason.value for t in tasks)
    print(f"verified against {against} (world {world.name!r}, fingerprint {world.fingerprint()[:12]})")
    print(f"{len(tasks)} tasks: " + ", ".join(f"{k}={v}" for k, v in sorted(reasons.items())))
    return 0 if set(reasons) <= {"ok"} else 1


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "export":
            return _export(args)
        if args.command == "verify":
            return _verify(args)
        if args.command == "serve":
            return _serve(args)
        from osint_gym.demo import main as demo

        demo(getattr(args, "seed", 0), getattr(args, "difficulty", "hard"))
    except KeyboardInterrupt:
        print("osint-gym: interrupted; nothing was left half-written, run the same command again", file=sys.stderr)
        return 130
    except (OSINTGymError, OSError) as exc:
        print(f"osint-gym: error: {exc}", file=sys.stderr)
        return 2
    except UnicodeDecodeError as exc:  # a task file that is not UTF-8 text
        print(f"osint-gym: error: {getattr(args, 'path', 'input')}: not UTF-8 text ({exc.reason} at byte {exc.start})",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

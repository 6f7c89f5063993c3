"""Where a trained multi-turn answerer goes wrong, turn by turn (teacher-forced).

For each held-out easy + medium v0:test task the demonstrator (`OracleAgent(names_first=True)`, as the
warm start's demonstrations) plays an episode under the main job's budgets and formats; for each of its
turns the model writes its greedy turn given the demonstrated history, and the two are compared. Prints
per kind of turn (the first turn's name lookups, each tool, the answer turn) how often the model's turn
equals the demonstrated one, how often its answer turn names the gold id, and where each episode
first diverges, by task family.

Run: ``python benchmarks/diagnose_turns.py MODEL_DIR [--config configs/selfplay/tiny-cpu.toml]
[--tasks 400] [--show 3]`` (a folder that ``bench_recipe.py --save`` or the main job wrote).
"""

from __future__ import annotations

import argparse
import re
from collections import Counter, defaultdict


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="a saved model folder")
    ap.add_argument("--config", default="configs/selfplay/tiny-cpu.toml")
    ap.add_argument("--tasks", type=int, default=400, help="held-out easy + medium v0:test tasks (in split order)")
    ap.add_argument("--show", type=int, default=3, help="answer-turn misses to print")
    args = ap.parse_args()

    from osint_eval.policies import HFPolicy
    from osint_gym import chat
    from osint_gym.agents import OracleAgent, run_episode
    from osint_gym.benchmark import benchmark_tasks, benchmark_world
    from osint_gym.env import OSINTEnv
    from osint_selfplay.config import load_config

    cfg = load_config(args.config, [])
    world = benchmark_world("v0:test")
    tasks = [t for t in benchmark_tasks("v0:test") if t.difficulty in ("easy", "medium")][: args.tasks]
    episodes = []
    for task in tasks:
        env = OSINTEnv(world=world, tasks=[task], **cfg.episode.spec().env_kwargs())
        record = run_episode(
            env, OracleAgent(action_format=cfg.episode.action_format, names_first=True), seed=0,
            options={"task_index": 0},
        )
        if record.correct:
            messages = chat.episode_messages(
                record.first_observation,
                [t.action for t in record.turns],
                [t.observation for t in record.turns[:-1]],
                short=cfg.episode.action_format == "short",
                system=cfg.episode.describe_tools,
            )
            episodes.append((task, messages))
    prompts, turns = [], []  # (episode, kind, demonstrated turn)
    for e, (_, messages) in enumerate(episodes):
        for k, i in enumerate(i for i, m in enumerate(messages) if m["role"] == "assistant"):
            action = messages[i]["content"]
            kind = "answer" if re.search(r"^answer ", action, re.M) else "lookup" if k == 0 else action.split()[0]
            prompts.append(messages[:i])
            turns.append((e, kind, action))
    outs = HFPolicy(args.model, batch_size=cfg.eval.batch_size, max_new_tokens=cfg.eval.max_new_tokens,
                    temperature=0.0).generate(prompts)
    same: dict[str, Counter[bool]] = defaultdict(Counter)
    gold_id: Counter[bool] = Counter()
    first: dict[str, Counter[str]] = defaultdict(Counter)
    diverged: set[int] = set()
    misses = []
    for (e, kind, action), out in zip(turns, outs):
        ok = out.strip() == action.strip()
        same[kind][ok] += 1
        if kind == "answer":
            want, got = re.findall(r"^answer (\S+)", action, re.M), re.findall(r"^answer (\S+)", out, re.M)
            gold_id[got[-1:] == want[-1:]] += 1
            if not ok:
                misses.append((episodes[e][0].question, action, out))
        if not ok and e not in diverged:
            diverged.add(e)
            first[episodes[e][0].family][kind] += 1
    print(f"{len(episodes)} demonstrated episodes ({len(tasks) - len(episodes)} the demonstrator failed); "
          f"every turn the same: {len(episodes) - len(diverged)}")
    for kind, c in sorted(same.items(), key=lambda kv: -sum(kv[1].values())):
        print(f"  {kind:16s} the same turn {c[True]}/{c[True] + c[False]} ({c[True] / (c[True] + c[False]):.1%})")
    print(f"  answer turns naming the gold id: {gold_id[True]}/{gold_id[True] + gold_id[False]}")
    print("first divergence, by family:")
    for family, c in sorted(first.items()):
        n = sum(1 for t, _ in episodes if t.family == family)
        print(
            f"  {family}: {n} episodes, {sum(c.values())} diverge: " + ", ".join(f"{k} {v}" for k, v in c.most_common())
        )
    for question, action, out in misses[: args.show]:
        print(
            f"--\n{question}\n  demonstrated: {action.replace(chr(10), ' | ')}\n"
            f"  model:        {out.replace(chr(10), ' | ')}"
        )


if __name__ == "__main__":
    main()

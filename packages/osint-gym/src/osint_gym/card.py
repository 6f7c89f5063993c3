"""The benchmark card: what each split holds and how shortcuts, chance and the oracle score on it.

Composition (size, families and difficulties) is counted from the split's tasks. The scores are measured
by ``python benchmarks/bench_card.py`` (osint-eval runs the baselines and the shortcut audit; osint-gym
does not import it) and stored in `MEASURED`; a test re-measures the single-turn figures. Rates are
fractions of the split's tasks. Single-turn: ``uniform`` is the exact success of a uniform guess among the
context's ids of the answer type; ``baselines`` the named shortcut policies' seeded answers;
``farthest_rule`` the audit rule (the highest or lowest value of a count, position or adjacency feature of
the context's ids) farthest from ``uniform``; ``question_reading`` the rules that count how many of the
question's named entities a candidate touches (on a question that names several, the gold is the one that
touches them all: the question's own conjunction). Multi-turn: episodes through OSINT-v0 under the default
budgets (JSON observations of up to 16,384 characters, 24 steps).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from osint_gym.tasks import DIFFICULTIES, Task

CARD_COMMAND = "python benchmarks/bench_card.py"

MEASURED: dict[str, dict[str, Any]] = {
    "v2:dev": {
        "n": 1000,
        "single_turn": {
            "triples": {
                "uniform": 0.1626, "gold_edges_shown": 1000,
                "baselines": {"random-guess": 0.16, "most-frequent": 0.143, "first-mentioned": 0.157,
                              "last-mentioned": 0.165, "adjacent": 0.145},
                "farthest_rule": ["last-offset:min", 0.134],
                "question_reading": {"next-to-named:max": 0.1679, "next-to-named:min": 0.1331},
            },
            "records": {
                "uniform": 0.1626, "gold_edges_shown": 1000,
                "baselines": {"random-guess": 0.16, "most-frequent": 0.143, "first-mentioned": 0.157,
                              "last-mentioned": 0.155, "adjacent": 0.15},
                "farthest_rule": ["last-offset:min", 0.131],
                "question_reading": {"next-to-named:max": 0.1679, "next-to-named:min": 0.1331},
            },
        },
        "multi_turn": {"oracle": 1.0, "naive-search": 0.025, "overlap-search": 0.074, "random-guess": 0.0},
    },
    "v2:test": {
        "n": 1000,
        "single_turn": {
            "triples": {
                "uniform": 0.1641, "gold_edges_shown": 1000,
                "baselines": {"random-guess": 0.149, "most-frequent": 0.141, "first-mentioned": 0.149,
                              "last-mentioned": 0.167, "adjacent": 0.132},
                "farthest_rule": ["text-count:min", 0.1293],
                "question_reading": {"next-to-named:max": 0.1693, "next-to-named:min": 0.1381},
            },
            "records": {
                "uniform": 0.1641, "gold_edges_shown": 1000,
                "baselines": {"random-guess": 0.149, "most-frequent": 0.141, "first-mentioned": 0.149,
                              "last-mentioned": 0.168, "adjacent": 0.133},
                "farthest_rule": ["mentions:min", 0.1393],
                "question_reading": {"next-to-named:max": 0.1693, "next-to-named:min": 0.1381},
            },
        },
        "multi_turn": {"oracle": 1.0, "naive-search": 0.022, "overlap-search": 0.05, "random-guess": 0.0},
    },
    "v2:hard": {
        "n": 500,
        "single_turn": {
            "triples": {
                "uniform": 0.1787, "gold_edges_shown": 500,
                "baselines": {"random-guess": 0.182, "most-frequent": 0.156, "first-mentioned": 0.158,
                              "last-mentioned": 0.158, "adjacent": 0.178},
                "farthest_rule": ["as-head:min", 0.2023],
                "question_reading": {"next-to-named:max": 0.1806, "next-to-named:min": 0.1693},
            },
            "records": {
                "uniform": 0.1787, "gold_edges_shown": 500,
                "baselines": {"random-guess": 0.182, "most-frequent": 0.156, "first-mentioned": 0.158,
                              "last-mentioned": 0.154, "adjacent": 0.174},
                "farthest_rule": ["last-offset:max", 0.142],
                "question_reading": {"next-to-named:max": 0.1806, "next-to-named:min": 0.1693},
            },
        },
        "multi_turn": {"oracle": 1.0, "naive-search": 0.002, "overlap-search": 0.036, "random-guess": 0.0},
    },
    "v1:dev": {
        "n": 1000,
        "single_turn": {
            "triples": {
                "uniform": 0.1062, "gold_edges_shown": 1000,
                "baselines": {"random-guess": 0.116, "most-frequent": 0.103, "first-mentioned": 0.108,
                              "last-mentioned": 0.113, "adjacent": 0.127},
                "farthest_rule": ["relations:min", 0.0735],
                "question_reading": {"next-to-named:max": 0.3316, "next-to-named:min": 0.0678},
            },
            "records": {
                "uniform": 0.1062, "gold_edges_shown": 1000,
                "baselines": {"random-guess": 0.116, "most-frequent": 0.103, "first-mentioned": 0.108,
                              "last-mentioned": 0.1, "adjacent": 0.112},
                "farthest_rule": ["relations:min", 0.0735],
                "question_reading": {"next-to-named:max": 0.3316, "next-to-named:min": 0.0678},
            },
        },
        "multi_turn": {"oracle": 1.0, "naive-search": 0.025, "overlap-search": 0.248, "random-guess": 0.0},
    },
    "v1:test": {
        "n": 1000,
        "single_turn": {
            "triples": {
                "uniform": 0.1022, "gold_edges_shown": 1000,
                "baselines": {"random-guess": 0.107, "most-frequent": 0.111, "first-mentioned": 0.126,
                              "last-mentioned": 0.099, "adjacent": 0.115},
                "farthest_rule": ["relations:min", 0.0692],
                "question_reading": {"next-to-named:max": 0.3239, "next-to-named:min": 0.0636},
            },
            "records": {
                "uniform": 0.1022, "gold_edges_shown": 1000,
                "baselines": {"random-guess": 0.107, "most-frequent": 0.111, "first-mentioned": 0.126,
                              "last-mentioned": 0.095, "adjacent": 0.116},
                "farthest_rule": ["relations:min", 0.0692],
                "question_reading": {"next-to-named:max": 0.3239, "next-to-named:min": 0.0636},
            },
        },
        "multi_turn": {"oracle": 1.0, "naive-search": 0.02, "overlap-search": 0.247, "random-guess": 0.0},
    },
    "v1:hard": {
        "n": 500,
        "single_turn": {
            "triples": {
                "uniform": 0.0942, "gold_edges_shown": 500,
                "baselines": {"random-guess": 0.094, "most-frequent": 0.066, "first-mentioned": 0.066,
                              "last-mentioned": 0.112, "adjacent": 0.104},
                "farthest_rule": ["relations:min", 0.0574],
                "question_reading": {"next-to-named:max": 0.1839, "next-to-named:min": 0.056},
            },
            "records": {
                "uniform": 0.0942, "gold_edges_shown": 500,
                "baselines": {"random-guess": 0.094, "most-frequent": 0.066, "first-mentioned": 0.066,
                              "last-mentioned": 0.09, "adjacent": 0.13},
                "farthest_rule": ["relations:min", 0.0574],
                "question_reading": {"next-to-named:max": 0.1839, "next-to-named:min": 0.056},
            },
        },
        "multi_turn": {"oracle": 1.0, "naive-search": 0.0, "overlap-search": 0.092, "random-guess": 0.0},
    },
    "v0:dev": {
        "n": 1000,
        "single_turn": {
            "triples": {
                "uniform": 0.1475, "gold_edges_shown": 1000,
                "baselines": {"random-guess": 0.166, "most-frequent": 0.127, "first-mentioned": 0.127,
                              "last-mentioned": 0.15, "adjacent": 0.286},
                "farthest_rule": ["next-to-name:max", 0.2835],
                "question_reading": {"next-to-named:max": 0.432, "next-to-named:min": 0.0788},
            },
            "records": {
                "uniform": 0.1379, "gold_edges_shown": 624,
                "baselines": {"random-guess": 0.157, "most-frequent": 0.172, "first-mentioned": 0.122,
                              "last-mentioned": 0.141, "adjacent": 0.262},
                "farthest_rule": ["text-count:max", 0.1903],
                "question_reading": {"next-to-named:max": 0.3797, "next-to-named:min": 0.0648},
            },
        },
        "multi_turn": {"oracle": 1.0, "naive-search": 0.093, "overlap-search": 0.225, "random-guess": 0.0},
    },
    "v0:test": {
        "n": 1000,
        "single_turn": {
            "triples": {
                "uniform": 0.1457, "gold_edges_shown": 1000,
                "baselines": {"random-guess": 0.156, "most-frequent": 0.157, "first-mentioned": 0.157,
                              "last-mentioned": 0.156, "adjacent": 0.293},
                "farthest_rule": ["next-to-name:max", 0.2798],
                "question_reading": {"next-to-named:max": 0.4498, "next-to-named:min": 0.0715},
            },
            "records": {
                "uniform": 0.1356, "gold_edges_shown": 605,
                "baselines": {"random-guess": 0.145, "most-frequent": 0.16, "first-mentioned": 0.152,
                              "last-mentioned": 0.145, "adjacent": 0.272},
                "farthest_rule": ["text-count:max", 0.1871],
                "question_reading": {"next-to-named:max": 0.3753, "next-to-named:min": 0.0587},
            },
        },
        "multi_turn": {"oracle": 1.0, "naive-search": 0.068, "overlap-search": 0.24, "random-guess": 0.0},
    },
}

_VERSIONS = {
    "v0": "v0: repeated question texts skipped; rewordings of one task kept, and one-hop tasks whose answer is "
          "the start's only neighbour of its type; v0 contexts (records show each entity's public page).",
    "v1": "v1: one task per task signature (answer and evidence); no task that adjacency alone answers; v1 "
          "contexts (records list exactly the context's edges, every gold edge among them; triples write every "
          "entity by id after a name line).",
    "v2": "v2: worlds with near-miss decoys (decoy_density 0.8: groups of 4 people mirror one person but for one fact "
          "held at another time or through another relation; everyone has a past); v1's rules, plus: every "
          "constraint load-bearing (dropping one leaves more than one answer), the filters a chain does not need "
          "dropped, and only tasks the question-reading shortcut reads fairly (where the gold touches a named "
          "entity, nothing touches more and it has 4 or more near-misses; where it touches none, nothing on its "
          "chain does); at most a quarter of a split (dev, test; 40% of hard) from one family and difficulty; v2 "
          "contexts (v1's writing; the gold's and its near-misses' edges to the named entities shown).",
}
GATE_POINTS = 5.0  # every shortcut within this many points of the uniform guess
MULTI_TURN_TARGETS = {"v2": (0.15, 0.97)}  # (strongest scripted baseline at most, oracle at least)


def composition(tasks: list[Task] | tuple[Task, ...]) -> dict[str, dict[str, int]]:
    """Tasks per family and difficulty (``{"network_discovery": {"easy": 60, ...}, ...}``)."""
    counts = Counter((t.family, t.difficulty) for t in tasks)
    families = sorted({f for f, _ in counts})
    return {f: {d: counts[f, d] for d in DIFFICULTIES if counts[f, d]} for f in families}


def _pct(rate: float) -> str:
    return f"{100 * rate:.1f}%"


def _shortcut_rows(measured: dict[str, Any]) -> list[str]:
    # the shortcut baselines are the ones measured (osint-eval's registry, run by the card's command)
    names = [n for n in next(iter(measured["single_turn"].values()))["baselines"] if n != "random-guess"]
    rows = ["| context mode | uniform guess | " + " | ".join(names) + " | "
            "farthest count/position/adjacency rule | question-reading rule (max) | gold edges shown |",
            "|---" * (len(names) + 5) + "|"]
    for mode, st in measured["single_turn"].items():
        b, (rule, rate) = st["baselines"], st["farthest_rule"]
        cells = " | ".join(_pct(b[n]) for n in names)
        rows.append(f"| {mode} | {_pct(st['uniform'])} | {cells} | {rule} {_pct(rate)} | "
                    f"{_pct(st['question_reading']['next-to-named:max'])} | {st['gold_edges_shown']}/{measured['n']} |")
    return rows


def gate_rows(measured: dict[str, Any]) -> list[str]:
    """The shortcut gate: per context mode, each kind of shortcut's rate minus the uniform guess, in points
    (the named baseline farthest from it, the farthest count/position/adjacency rule, the question-reading
    rules), and whether every one is within `GATE_POINTS`."""
    rows = ["| context mode | uniform guess | farthest named baseline | farthest count/position/adjacency rule | "
            "next-to-named:max | next-to-named:min | every one within 5 points |", "|---" * 7 + "|"]
    for mode, st in measured["single_turn"].items():
        u = st["uniform"]
        name = max(st["baselines"], key=lambda n: abs(st["baselines"][n] - u))
        rule, rate = st["farthest_rule"]
        reading = st["question_reading"]
        gaps = [st["baselines"][name] - u, rate - u, reading["next-to-named:max"] - u, reading["next-to-named:min"] - u]
        cells = [f"{name} {100 * gaps[0]:+.1f}", f"{rule} {100 * gaps[1]:+.1f}", f"{100 * gaps[2]:+.1f}",
                 f"{100 * gaps[3]:+.1f}"]
        verdict = "yes" if all(abs(g) <= GATE_POINTS / 100 for g in gaps) else "no"
        rows.append(f"| {mode} | {_pct(u)} | " + " | ".join(cells) + f" | {verdict} |")
    return rows


def card_markdown(ref: str, tasks: list[Task] | tuple[Task, ...]) -> str:
    """The card of split ``ref`` holding ``tasks`` (`osint_gym.benchmark.card(ref)` passes them): its version,
    composition, shortcut table and scores, and the commands."""
    comp = composition(tasks)
    lines = [f"# OSINT-v0 benchmark split {ref} ({len(tasks)} tasks)", "", _VERSIONS[ref.partition(":")[0]], "",
             "| family | " + " | ".join(DIFFICULTIES) + " | total |", "|---" * (len(DIFFICULTIES) + 2) + "|"]
    for family, row in comp.items():
        cells = " | ".join(str(row.get(d, 0)) for d in DIFFICULTIES)
        lines.append(f"| {family} | {cells} | {sum(row.values())} |")
    measured = MEASURED.get(ref)
    if measured is None:
        return "\n".join(lines + ["", f"Scores not measured for this split (`{CARD_COMMAND} --splits {ref}`)."])
    mt = measured["multi_turn"]
    best = max((n for n in mt if n != "oracle"), key=lambda n: mt[n])
    lines += ["", "Single-turn shortcuts (exact or seeded rates over the whole split):", ""] + _shortcut_rows(measured)
    lines += ["", "Shortcut gate (points from the uniform guess):", ""] + gate_rows(measured)
    scripted = ", ".join(f"{n} {_pct(v)}" for n, v in mt.items() if n != "oracle")
    target = MULTI_TURN_TARGETS.get(ref.partition(":")[0])
    goal = f"; targets: strongest at most {_pct(target[0])}, oracle at least {_pct(target[1])}" if target else ""
    lines += ["", f"Multi-turn: tool-only oracle {_pct(mt['oracle'])}; strongest scripted baseline {best} "
              f"{_pct(mt[best])} (default budgets; {scripted}{goal}).", "",
              f"Figures: `{CARD_COMMAND} --splits {ref}`; tasks: `osint-gym export --split {ref} --out tasks.jsonl`."]
    return "\n".join(lines)

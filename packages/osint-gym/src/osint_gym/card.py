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
        "multi_turn": {"oracle": 1.0, "naive-search": 0.025, "random-guess": 0.0},
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
        "multi_turn": {"oracle": 1.0, "naive-search": 0.02, "random-guess": 0.0},
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
        "multi_turn": {"oracle": 1.0, "naive-search": 0.0, "random-guess": 0.0},
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
        "multi_turn": {"oracle": 1.0, "naive-search": 0.093, "random-guess": 0.0},
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
        "multi_turn": {"oracle": 1.0, "naive-search": 0.068, "random-guess": 0.0},
    },
}

_VERSIONS = {
    "v0": "v0: repeated question texts skipped; rewordings of one task kept, and one-hop tasks whose answer is "
          "the start's only neighbour of its type; v0 contexts (records show each entity's public page).",
    "v1": "v1: one task per task signature (answer and evidence); no task that adjacency alone answers; v1 "
          "contexts (records list exactly the context's edges, every gold edge among them; triples write every "
          "entity by id after a name line).",
}


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
    lines += ["", f"Multi-turn: tool-only oracle {_pct(mt['oracle'])}; strongest scripted baseline {best} "
              f"{_pct(mt[best])} (default budgets).", "",
              f"Figures: `{CARD_COMMAND} --splits {ref}`; tasks: `osint-gym export --split {ref} --out tasks.jsonl`."]
    return "\n".join(lines)

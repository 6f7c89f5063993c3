"""Measurements live in benchmarks/RESULTS.md and the CHANGELOGs, not in code (STYLE.md): a config comment, a CLI
help string or a config field's help says what a setting does and why, and points there for the figures."""

from __future__ import annotations

import argparse
import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "configs").glob("**/*.toml"))

# What a measurement looks like in prose: a rate, an interval, a ratio, a p-value, a timing, a commit.
MEASUREMENT = re.compile(
    "|".join(
        (
            r"\d\s?%",  # a percentage
            r"\[\s*[-+]?\d+(?:\.\d+)?\s*,\s*[-+]?\d+(?:\.\d+)?\s*\]\s*(?:points|pts|,|;|\))",  # a confidence interval
            r"[-+]\d+(?:\.\d+)?\s*(?:points|pts)\b",  # a signed difference
            r"±|\+-\s?\d",
            r"\b\d+(?:\.\d+)?x\s+(?:faster|slower|speed|the|as|more|fewer)\b",  # a measured ratio
            r"\b\d+\.\d+x\b",
            r"\bp\s?=\s?\d",  # a p-value
            r"\b\d[\d,.]*\s?(?:tokens|episodes|steps|tasks)/s\b",  # a throughput
            r"\b\d+(?:\.\d+)?\s?(?:ms|us|µs)\b|\b\d+ min \d+ s\b",  # a timing
            r"\bn\s?=\s?\d",  # a sample size
            r"\b\d+\.\d+\s?(?:to|->|→)\s?[-+]?\d+\.\d+\b",  # a measured change
            r"\b(?:median|mean|average)\s(?:of\s)?~?\d",
            r"\b(?:gave|scored|halves|doubles)\b",
            r"\bmeasured\b",
            r"`[0-9a-f]{7,40}`|\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b",  # a commit
        )
    )
)


def _toml_comments(path: Path) -> Iterator[tuple[str, str]]:
    """(where, text) of every comment in a TOML file: the text after a ``#`` that is outside a string."""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        quote = ""
        for i, ch in enumerate(line):
            if quote:
                quote = "" if ch == quote and line[i - 1] != "\\" else quote
            elif ch in "\"'":
                quote = ch
            elif ch == "#":
                yield f"{path.relative_to(ROOT)}:{number}", line[i + 1 :]
                break


def _parsers() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    from osint_eval import cli as eval_cli
    from osint_gym import cli as gym_cli
    from osint_selfplay import cli as selfplay_cli

    todo = [(m.__name__, m._parser()) for m in (gym_cli, eval_cli, selfplay_cli)]
    while todo:
        name, parser = todo.pop()
        yield name, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo.extend((f"{name} {sub}", p) for sub, p in action.choices.items())


def _help_texts() -> Iterator[tuple[str, str]]:
    for name, parser in _parsers():
        for text in (parser.description, parser.epilog):
            if text:
                yield name, text
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                yield from ((f"{name} {a.dest}", a.help) for a in action._choices_actions if a.help)
            elif action.help and action.help != argparse.SUPPRESS:
                yield f"{name} {'/'.join(action.option_strings) or action.dest}", action.help


def _config_field_helps() -> Iterator[tuple[str, str]]:
    from osint_selfplay import config

    for cls in vars(config).values():
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == config.__name__:
            for f in dataclasses.fields(cls):
                if "help" in f.metadata:
                    yield f"{cls.__name__}.{f.name}", f.metadata["help"]


def _offenders(texts: Iterator[tuple[str, str]]) -> list[str]:
    return [f"{where}: {m.group()!r} in {text.strip()!r}" for where, text in texts if (m := MEASUREMENT.search(text))]


@pytest.mark.parametrize(
    "text",
    [
        "at 1e-3 the sampled reward collapses (0.32 to 0.01 in 53 steps)",
        "T=0.5 gave 46% valid vs 30% at T=1.0",
        "+1.6 [+0.7, +2.6], p = 0.003",
        "about +-5 points",
        "5.16x TRL SFTTrainer's tokens/s",
        "says 1.3x faster",
        "13.54 episodes/s",
        "median 16.9 us",
        "took 9 min 35 s",
        "as measured on v0:test (n=1000)",
        "demonstrated turns: median 9 tokens",
        "2 on a 2-core CPU halves the data time",
        "the main job of `dd39234`",
        "since 3f680b5",
    ],
)
def test_the_detector_finds_measurements(text: str) -> None:
    assert MEASUREMENT.search(text), text


@pytest.mark.parametrize(
    "text",
    [
        "the fraction of the steps over which the learning rate falls linearly to 0",
        "tasks in the frontier band, see benchmarks/RESULTS.md",
        "multi-turn: 8 batches of this many episodes run at once",
        "TOML run config (configs/selfplay/tiny-cpu.toml)",
        "a choose-mode proposal is \"P: k\"",
        "accounts per person (>= 1)",
        "tiny:128x3-v5120",
        "decoded to bfloat16 on the device",
    ],
)
def test_the_detector_passes_descriptions(text: str) -> None:
    assert not MEASUREMENT.search(text), MEASUREMENT.search(text)


def test_toml_comments_are_read_outside_strings(tmp_path: Path) -> None:
    path = ROOT / "configs" / "selfplay" / "tiny-cpu.toml"
    comments = dict(_toml_comments(path))
    assert len(comments) > 20
    assert not any("tiny:128x3" in text for text in comments.values())  # a value, not a comment


def test_config_comments_carry_no_measurements() -> None:
    assert CONFIGS and not _offenders(t for p in CONFIGS for t in _toml_comments(p)), "\n".join(
        _offenders(t for p in CONFIGS for t in _toml_comments(p))
    )


def test_cli_help_carries_no_measurements() -> None:
    texts = list(_help_texts())
    assert any(where.startswith("osint_selfplay.cli train") for where, _ in texts)
    assert any(where.startswith("osint_eval.cli run") for where, _ in texts)
    offenders = _offenders(iter(texts))
    assert not offenders, "\n".join(offenders)


def test_config_field_help_carries_no_measurements() -> None:
    helps = list(_config_field_helps())
    assert len(helps) > 50
    offenders = _offenders(iter(helps))
    assert not offenders, "\n".join(offenders)

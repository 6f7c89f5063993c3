"""Errors osint-eval raises on purpose; the CLI prints them as one line."""

from __future__ import annotations


class EvalError(Exception):
    """Bad input to an evaluation: unknown split, missing model, unreachable endpoint, bad file."""


class ReportError(EvalError):
    """A report or leaderboard file is malformed; the message names the file and the field."""


class OutputExistsError(EvalError):
    """An output already exists and ``--overwrite`` was not given."""

"""Errors osint-eval raises on purpose; the CLI prints them as one line."""

from __future__ import annotations


class EvalError(Exception):
    """Bad input to an evaluation: unknown split, missing model, unreachable endpoint, bad file."""

"""Errors osint-selfplay raises on purpose; the CLI prints them as one line."""

from __future__ import annotations


class SelfPlayError(Exception):
    """Base class of the errors this package raises on purpose."""


class ConfigError(SelfPlayError, ValueError):
    """A run configuration is invalid; the message names the key and what was expected."""


class HealthError(SelfPlayError):
    """A phase trained nothing (strict mode): zero-variance rewards or unchanged parameters."""

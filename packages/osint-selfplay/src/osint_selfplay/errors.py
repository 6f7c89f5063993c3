"""Errors osint-selfplay raises on purpose; the CLI prints them as one line.

A configuration error is one concept across the packages: `ConfigError` *is*
``osint_gym.errors.ConfigError`` (raised by the shared loader, caught by the same ``except``)."""

from __future__ import annotations

from osint_gym.errors import ConfigError

__all__ = ["ConfigError", "HealthError", "IncompatibleTRLError", "SelfPlayError"]


class SelfPlayError(Exception):
    """Base class of the errors this package raises on purpose (besides `ConfigError`)."""


class HealthError(SelfPlayError):
    """A phase trained nothing (strict mode): zero-variance rewards or unchanged parameters."""


class IncompatibleTRLError(SelfPlayError):
    """The installed TRL's internals differ from those osint-selfplay's adapter was written for."""

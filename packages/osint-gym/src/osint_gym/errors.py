"""One small error hierarchy for osint-gym. Input checks raise these, never ``assert``."""

from __future__ import annotations

from typing import Any


class OSINTGymError(Exception):
    """Base class of every error osint-gym raises on purpose."""


class ConfigError(OSINTGymError, ValueError):
    """A configuration value is missing, unknown or out of range."""


class LoaderError(OSINTGymError, ValueError):
    """A knowledge-graph or task file could not be read; the message names file and line."""


class TaskError(OSINTGymError, ValueError):
    """A task is malformed or does not belong to the world it is used with."""


class UnknownEntityError(OSINTGymError, KeyError):
    """An entity id or handle does not exist in the world."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable
        return str(self.args[0]) if self.args else "unknown entity"


def unknown_key_message(key: object, known: list[str], where: str) -> str:
    """``unknown <where> key 'x'; did you mean 'y'?``: shared by every config loader."""
    import difflib

    close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(known)}"
    return f"unknown {where} key {key!r}{hint}"


def read_toml(path: str, what: str = "config") -> dict[str, Any]:
    """A TOML file as a dict, or a `ConfigError` that names the file: shared by every config loader."""
    import tomllib

    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path!r}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML ({exc})") from None
    except UnicodeDecodeError as exc:  # tomllib decodes the bytes itself and lets this through
        raise ConfigError(f"{path}: {what} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None

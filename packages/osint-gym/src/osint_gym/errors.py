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


def check_type(value: Any, hint: Any, name: str) -> Any:
    """``value`` checked against a type hint (int, float, str, bool, list[X], dict[K, V], unions,
    ``Literal``, enums, Any); ints are widened to float. Raises a `ConfigError` naming ``name``."""
    import enum
    import types
    import typing

    origin = typing.get_origin(hint)
    if hint is typing.Any:
        return value
    if origin in (typing.Union, types.UnionType):
        for arm in typing.get_args(hint):
            try:
                return check_type(value, arm, name)
            except ConfigError:
                continue
        raise ConfigError(f"{name} must be {_type_name(hint)}; got {type(value).__name__} {value!r}")
    if origin is typing.Literal:
        if value not in typing.get_args(hint):
            raise ConfigError(f"{name} must be one of {', '.join(map(repr, typing.get_args(hint)))}; got {value!r}")
        return value
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        if value not in {m.value for m in hint}:
            raise ConfigError(f"{name} must be one of {', '.join(repr(m.value) for m in hint)}; got {value!r}")
        return value
    if hint is type(None):
        if value is not None:
            raise ConfigError(f"{name} must be None; got {value!r}")
        return value
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    expected = origin or hint
    if not isinstance(expected, type):
        raise ConfigError(f"{name}: values of type {_type_name(hint)} cannot be set from a config file")
    if isinstance(value, bool) and expected in (int, float) or not isinstance(value, expected):
        raise ConfigError(f"{name} must be {_type_name(hint)}; got {type(value).__name__} {value!r}")
    args = typing.get_args(hint)
    if origin is list and args and isinstance(value, list):  # (it is: ``expected`` is ``list``)
        return [check_type(v, args[0], f"{name}[]") for v in value]
    if origin is dict and args and isinstance(value, dict):
        return {k: check_type(v, args[1], f"{name}.{k}") for k, v in value.items()}
    return value


_PLAIN = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}


def _type_name(hint: Any) -> str:
    import typing

    if hint in _PLAIN:
        return _PLAIN[hint]
    return hint.__name__ if isinstance(hint, type) and not typing.get_args(hint) else str(hint).replace("typing.", "")


def from_table(cls: type, data: Any, label: str, path: str = "") -> Any:
    """A config dataclass built from a TOML table: every config loader's one implementation.

    Unknown keys are errors that suggest the closest key; values are checked against the field's
    type hint; nested dataclass fields are built from sub-tables (a class with its own
    ``from_table(data, path)`` builds itself); the dataclass's own ``__post_init__`` checks the
    rest. ``label`` names the table in messages ("world config", "top-level"); ``path`` prefixes
    key names (``generator.max_hops``)."""
    import dataclasses
    import typing

    if not isinstance(data, dict):
        raise ConfigError(f"{label} must be a table, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    known = [f.name for f in dataclasses.fields(cls)]
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            raise ConfigError(unknown_key_message(key, known, label))
        hint, name = hints[key], f"{path}.{key}" if path else key
        if hasattr(hint, "from_table"):
            kwargs[key] = hint.from_table(value, name)
        elif isinstance(hint, type) and dataclasses.is_dataclass(hint):
            kwargs[key] = from_table(hint, value, f"[{name}]", name)
        else:
            kwargs[key] = check_type(value, hint, name)
    try:
        return cls(**kwargs)
    except ConfigError:
        raise
    except (TypeError, ValueError, OverflowError) as exc:
        raise ConfigError(f"{label}: {exc}") from None

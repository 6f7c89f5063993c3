"""Read-only records: what `osint_gym.views` builds once per world and shares between tool results.

A record is a pure function of (world, entity), so it is built once; sharing it means nobody may
change it, so the containers raise on mutation. Values derived from a record (its edges, the
entities it shows, its JSON text) are computed once and kept on it (`memo`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from osint_gym.text import json_fragment


def _read_only(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(f"platform records are cached and shared: this {type(self).__name__} is read-only (copy it first)")


class FrozenRecord(dict):
    """A read-only record dict: records are pure functions of (world, entity), so each is built once
    per world and shared; mutating one would change every later tool result, so it raises.

    It reads like a plain dict (``==``, ``isinstance(r, dict)``, JSON encoding); ``copy.deepcopy``
    and pickling give plain, mutable dicts and lists. ``_derived`` holds what is computed from it once
    (its edges, references, JSON text: see `memo`)."""

    __slots__ = ("_derived",)
    _derived: dict[Any, Any]
    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _read_only

    def __deepcopy__(self, _seen: dict[int, Any]) -> dict[str, Any]:
        return thaw(self)

    def json_fragment(self) -> str:
        """This record as observations spell it (`osint_gym.text`), encoded once."""
        return memo(self, json_fragment)

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (thaw, (thaw(self),))


class FrozenList(list):
    """The read-only list inside a `FrozenRecord`."""

    __slots__ = ("_derived",)
    _derived: dict[Any, Any]
    __setitem__ = __delitem__ = append = extend = insert = pop = remove = clear = sort = reverse = _read_only
    __iadd__ = __imul__ = _read_only

    def __deepcopy__(self, _seen: dict[int, Any]) -> list[Any]:
        return thaw(self)

    json_fragment = FrozenRecord.json_fragment

    def __copy__(self) -> list[Any]:
        return list(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (thaw, (thaw(self),))


def memo(data: Any, compute: Callable[[Any], Any]) -> Any:
    """``compute(data)``, kept on ``data`` when it is a read-only record (pure of its content)."""
    if type(data) is not FrozenRecord and type(data) is not FrozenList:
        return compute(data)
    try:
        derived = data._derived
    except AttributeError:
        derived = data._derived = {}
    value = derived.get(compute)
    if value is None:
        value = derived[compute] = compute(data)
    return value


def freeze(value: Any) -> Any:
    """``value`` with every dict and list made read-only (FrozenRecord / FrozenList)."""
    if isinstance(value, dict):
        return value if type(value) is FrozenRecord else FrozenRecord((k, freeze(v)) for k, v in value.items())
    if isinstance(value, list):
        return value if type(value) is FrozenList else FrozenList(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """A plain, mutable deep copy of a (possibly frozen) record."""
    if isinstance(value, dict):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, list):
        return [thaw(v) for v in value]
    return value

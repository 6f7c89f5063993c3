"""Typed fields read out of a JSON object, each failure one `ReportError` naming where it is
(``report.models.oracle.summary.overall.success.n: missing``): the readers behind `osint_eval.schema`."""

from __future__ import annotations

from typing import Any

from osint_eval.errors import ReportError


def jobj(d: Any, where: str) -> dict[str, Any]:
    if not isinstance(d, dict):
        raise ReportError(f"{where}: expected an object, got {type(d).__name__}")
    return d


def jget(d: Any, key: str, where: str) -> Any:
    d = jobj(d, where)
    if key not in d:
        raise ReportError(f"{where}.{key}: missing")
    return d[key]


def jnum(d: Any, key: str, where: str) -> float:
    v = jget(d, key, where)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ReportError(f"{where}.{key}: expected a number, got {v!r}")
    return float(v)


def jint(d: Any, key: str, where: str) -> int:
    v = jget(d, key, where)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ReportError(f"{where}.{key}: expected a count (an integer >= 0), got {v!r}")
    return v


def jstr(d: Any, key: str, where: str, *, optional: bool = False) -> str | None:
    v = jget(d, key, where) if not optional else jobj(d, where).get(key)
    if v is None and optional:
        return None
    if not isinstance(v, str):
        raise ReportError(f"{where}.{key}: expected a string, got {v!r}")
    return v


def jmap(d: Any, key: str, where: str) -> dict[str, Any]:
    return jobj(jget(d, key, where), f"{where}.{key}")

"""The explicit character set of OSINT-v0's Text spaces, and how text is made to fit it."""

from __future__ import annotations

import json
import re
from typing import Any

# Printable ASCII (with newline and tab), Latin-1 letters and Latin Extended-A (most European
# names), and common typographic punctuation. Anything else is written as a \\uXXXX escape.
_EXTRA = "".join(chr(c) for c in range(0xA0, 0x180)) + "\u2013\u2014\u2018\u2019\u201c\u201d\u2026"
CHARSET = "".join(chr(c) for c in range(0x20, 0x7F)) + "\n\t" + _EXTRA
_OUTSIDE = re.compile("[^" + re.escape(CHARSET) + "]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def fit_text(text: str, max_chars: int) -> str:
    """``text`` with characters outside CHARSET escaped, cut to ``max_chars`` with a marker.

    For plain text (the reset observation). JSON observations go through `fit_json`, which keeps
    them valid JSON."""
    if not (text.isascii() and text.isprintable()):  # C-speed fast path for the common case (compact JSON)
        text = _OUTSIDE.sub(_escape, text)
    if len(text) > max_chars:
        marker = f"...[truncated {len(text) - max_chars} chars]"
        text = text[: max(0, max_chars - len(marker))] + marker
    return text


# One reusable encoder: skipping json.dumps' per-call setup and the circular-reference check
# (observations are trees built by the env) saves about a quarter of the encoding time per step.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)
_encode_str = json.encoder.encode_basestring  # the C function the encoder uses for strings (ensure_ascii=False)


def to_json(data: Any) -> str:
    """Compact JSON for observations (fewer tokens than indented JSON, still parseable)."""
    return _ENCODER.encode(data)


def _escape_json(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # a JSON string spells an astral character as a surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def escape_outside_charset(text: str) -> str:
    if not (text.isascii() and text.isprintable()):
        # Outside CHARSET means non-printable or exotic: inside a JSON string both may be written
        # as \\u escapes, which keeps the text valid JSON that decodes to the same data.
        text = _OUTSIDE.sub(_escape_json, text)
    return text


def _encode_whole(data: Any) -> str:
    return escape_outside_charset(_ENCODER.encode(data))


def json_fragment(data: Any) -> str:
    """``data`` as compact JSON within CHARSET, as it appears inside an observation (records cache it)."""
    return _encode_whole(data)


_KEYS: dict[str, str] = {}  # '"key":' as encoded, by key
_LITERALS = {True: "true", False: "false", None: "null"}


def _encode_value(value: Any) -> str:
    t = type(value)
    if t is str:
        return escape_outside_charset(_encode_str(value))
    if t is int:
        return int.__repr__(value)
    if t is bool or value is None:
        return _LITERALS[value]
    return _encode_in_charset(value)


def _encode_in_charset(data: Any) -> str:
    """Compact JSON within CHARSET, byte for byte what encoding ``data`` whole gives.

    The containers an observation wraps around tool results are small and encoded here; a value
    with a ``json_fragment`` method (the read-only records of `osint_gym.views`, built once per
    world) brings its own cached text. Escaping is per character, so escaping the pieces equals
    escaping the whole."""
    t = type(data)
    if t is dict:
        parts = []
        for key, value in data.items():
            head = _KEYS.get(key)
            if head is None:
                if type(key) is not str:
                    return _encode_whole(data)  # json's key coercion: leave it to the encoder
                head = escape_outside_charset(_encode_str(key)) + ":"
                if len(_KEYS) < 4096:  # observation keys are a small, fixed vocabulary
                    _KEYS[key] = head
            parts.append(head + _encode_value(value))
        return "{" + ",".join(parts) + "}"
    if t is list:
        return "[" + ",".join([_encode_value(v) for v in data]) + "]"
    fragment = getattr(data, "json_fragment", None)
    if fragment is not None:
        return fragment()
    return _encode_whole(data)


def _longest_list(data: Any, skip: object = None) -> list[Any] | None:
    """The non-empty list with the most items anywhere in ``data`` (``skip`` excluded)."""
    best: list[Any] | None = None
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            if item and item is not skip and (best is None or len(item) > len(best)):
                best = item
            stack.extend(item)
    return best


def fit_json(data: dict[str, Any], max_chars: int) -> str:
    """See `fit_json_cut`; only the text."""
    return fit_json_cut(data, max_chars)[0]


def fit_json_cut(data: dict[str, Any], max_chars: int) -> tuple[str, bool]:
    """(text, whether anything was cut): ``data`` as compact JSON within ``max_chars``, still valid JSON,
    saying what was cut.

    Cutting drops the last items of the longest lists (search hits, records, comments) one at a
    time, so every record that remains is whole, and sets ``"truncated"`` to how many items were
    dropped. The top-level ``results`` list (one entry per call) loses entries only when nothing
    else is left to drop. Observations that fit (the common case) are encoded once.
    """
    text = _encode_in_charset(data)
    if len(text) <= max_chars:
        return text, False
    import copy

    cut = copy.deepcopy(data)
    top = cut.get("results")
    dropped = 0
    while len(text) > max_chars:
        target = _longest_list(cut, skip=top) or (top if top else None)
        if target is None:
            keep = {k: cut[k] for k in ("step", "steps_left") if k in cut}
            return _encode_whole({**keep, "error": f"the observation does not fit in {max_chars} characters"}), True
        target.pop()
        dropped += 1
        cut["truncated"] = f"{dropped} list items dropped to fit {max_chars} characters"
        text = _encode_whole(cut)  # a plain copy: the C encoder in one go
    return text, True

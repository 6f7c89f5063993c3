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
    """``text`` with characters outside CHARSET escaped, cut to ``max_chars`` with a marker."""
    if not (text.isascii() and text.isprintable()):  # C-speed fast path for the common case (compact JSON)
        text = _OUTSIDE.sub(_escape, text)
    if len(text) > max_chars:
        marker = f"...[truncated {len(text) - max_chars} chars]"
        text = text[: max(0, max_chars - len(marker))] + marker
    return text


# One reusable encoder: skipping json.dumps' per-call setup and the circular-reference check
# (observations are trees built by the env) saves about a quarter of the encoding time per step.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)


def to_json(data: Any) -> str:
    """Compact JSON for observations (fewer tokens than indented JSON, still parseable)."""
    return _ENCODER.encode(data)

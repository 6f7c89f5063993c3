"""The compact observation format: one record per line, ``type id key=value ...``, ids only for references.

A small model reads a step of OSINT-v0 in about a quarter of the characters of its JSON (no braces, no quoted
field names, references reduced to ids). The format carries every fact `osint_gym.views.record_edges` and the
oracle read (record ids and types, reference ids, the platform of every referenced account, names, display
names, dates, counts), and `parse_compact` recovers them.

## Grammar
An observation is lines separated by ``\\n``::

    step K/N                              the step header (K = steps taken, N = the step budget)
    error: MESSAGE                        the action as a whole was rejected
    TOOL ok [FIELD ...]                   one per call, in call order; a search's or listing's own
                                          fields (total, query, account) follow ``ok``
    TOOL error: MESSAGE                   a failing call (add_edge and answer included)
    TYPE ID [FIELD ...]                   a record the call above returned (several for a search);
                                          TYPE is one of RECORD_TYPES, ID a WORD or a STRING
    comment FIELD ...                     a comment of the thread record above it
    answer submitted                      the action answered: the episode is over
    truncated: N lines dropped to fit M characters

    FIELD := KEY=VALUE      VALUE := ITEM (" " ITEM)*  (an empty VALUE is never written)
    KEY   := [A-Za-z_][A-Za-z0-9_]* | +REL | -REL  (knowledge-graph facts, out / inverse)
             (a REL that is not a plain word is written as a JSON string)
    ITEM  := optionally WORD ": " (a referenced account's platform), then WORD | STRING
    WORD  := [A-Za-z0-9_@.-]+ not starting with "-" or "+"; an integer when it is [0-9]+ or -[0-9]+
             in a field that holds a number
    STRING := a JSON string whose text starts with one space that is not part of the value

Every id, handle and name is preceded by a space (``employer= org_16``, ``name=" Olga Becker"``), so a byte-
level BPE tokenizer that keeps `` person_12`` whole tokenizes it the same way in the question, the
observations and the agent's actions (a record line starts with its type so that its id follows a space too).
Null fields and empty lists are left out. References keep only their id and an account's platform, written
first (``forum: account_79``) so that a causal reader meets it before the id.

A cut (``max_observation_chars``) drops whole trailing record and comment lines of the call that returned the
most lines (as a JSON cut drops the last items of the longest list), then trailing call lines, and ends with
the ``truncated:`` line; the header is never dropped.

The reset observation is the question, one budget line and one line of tools with their parameters
(`reset_text`). Actions in the short syntax (`osint_gym.actions`) use the same ``KEY=VALUE`` items:
``get_profile account_164``, ``search_people name="Olga Becker" organization=org_16``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from osint_gym.schema import RECORD_FIELDS
from osint_gym.text import escape_outside_charset as json_safe  # escapes that keep JSON strings valid
from osint_gym.views import INVERSE

_WORD = re.compile(r"[A-Za-z0-9_@.][A-Za-z0-9_@.\-]*\Z")
_INT = re.compile(r"-?[0-9]+\Z")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_DECODER = json.JSONDecoder()
# Bump on any change of what the compact format writes (observations, cuts, the reset text): osint-eval's
# tokenizer corpus version derives from it, so cached tiny models are rebuilt. A test pins a digest of sample
# renderings to this number, so a change of the rendering fails until it is bumped.
FORMAT_VERSION = 1
# Reference fields that hold one entity (the others hold lists), as `osint_gym.views` builds them.
SINGLE_REFS = frozenset({"employer", "city", "based_in", "held_in", "author", "discusses", "account"})
_WRAPPER_KEYS = {"get_user_posts": "posts", "get_mentions": "posts"}  # other listings hold "results"
# The fields that hold references, by record type (from the relation specs), and on call and comment lines.
_REFS: dict[str, frozenset[str]] = {}
for _type, _name in RECORD_FIELDS:
    _REFS[_type] = _REFS.get(_type, frozenset()) | {_name}
_HEAD_REFS, _COMMENT_REFS = frozenset({"account"}), frozenset({"author"})


# The record types of `osint_gym.views` (a record line starts with one; a call line with a tool name).
RECORD_TYPES = frozenset({"person", "account", "organization", "location", "event", "post", "thread", "activity",
                          "connections", "entity"})


class CompactError(ValueError):
    """Text that is not in the compact grammar (the message names the line)."""


# ---------------------------------------------------------------------------- items
def _string(value: str) -> str:
    return json.dumps(" " + value, ensure_ascii=False)


def word_or_string(value: str) -> str:
    """A string as one ITEM: a WORD when it is one and reads back as a string, else a STRING."""
    if _WORD.match(value) and not _INT.match(value):
        return value
    return _string(value)


def _item(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None if value is None else word_or_string(str(value).lower())
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dict):  # a reference
        rid = value.get("id")
        if not isinstance(rid, str):
            return None
        text = word_or_string(rid)
        platform = value.get("platform")
        return platform + ": " + text if isinstance(platform, str) and _WORD.match(platform) else text
    return (
        word_or_string(repr(value) if isinstance(value, float) else str(value)) if not isinstance(value, list) else None
    )


def _key(name: str) -> str:
    return name if _KEY.match(name) else json.dumps(name, ensure_ascii=False)


def _field(key: str, value: Any, prose: bool) -> str | None:
    """`` key=value`` or None for a null or empty value. ``prose``: a free-text field (always a STRING)."""
    if isinstance(value, list):
        items = [i for i in (_item(v) for v in value) if i is not None]
        return f" {key}= {' '.join(items)}" if items else None
    if prose and isinstance(value, str):
        return f" {key}={_string(value)}"
    item = _item(value)
    if item is None:
        return None
    # a WORD that is an id, a handle or a name gets its leading space; the record type does not need one
    return f" {key}={item}" if key == "type" or item.startswith('"') else f" {key}= {item}"


_PROSE = frozenset({"name", "display_name", "bio", "text", "title", "location", "query", "industry", "country"})


def record_line(record: dict[str, Any]) -> list[str]:
    """A record as its line (plus a comment line per thread comment)."""
    parts = [str(record.get("type")), " " + word_or_string(str(record.get("id")))]
    extra: list[str] = []
    for key, value in record.items():
        if key in ("id", "type"):
            continue
        if key == "facts" and isinstance(value, dict):
            for rel, others in value.items():
                sign, rel = ("-", rel[: -len(INVERSE)]) if rel.endswith(INVERSE) else ("+", rel)
                f = _field(sign + _key(rel), [{"id": o} for o in others], False)
                parts += [f] if f else []
        elif key == "comments" and isinstance(value, list):
            extra += ["comment" + "".join(f for k, v in c.items() if (f := _field(k, v, k == "text"))) for c in value
                      if isinstance(c, dict)]
        else:
            f = _field(key, value, key in _PROSE)
            parts += [f] if f else []
    return ["".join(parts), *extra]


def _result_lines(call: str, result: Any) -> tuple[str, list[str]]:
    """(what follows ``ok`` on the call line, the record lines) for one tool result."""
    if not isinstance(result, dict):
        return ("" if result is None or result == "added" else _field("result", result, True) or ""), []
    if isinstance(result.get("type"), str):
        return "", record_line(result)
    head, lines = [], []
    for key, value in result.items():
        if key in ("results", "posts") and isinstance(value, list):
            lines += [line for r in value if isinstance(r, dict) for line in record_line(r)]
        elif (f := _field(key, value, key in _PROSE)) is not None:
            head.append(f)
    return "".join(head), lines


def _one_line(message: Any) -> str:
    return " ".join(str(message).split())


def observation_lines(obs: dict[str, Any]) -> list[tuple[str, int | None]]:
    """The observation dict the env builds (as for JSON) as (line, the index of the call whose
    result it is a record or comment line of; None for the header, call lines and the rest)."""
    lines: list[tuple[str, int | None]] = [
        (f"step {obs.get('step')}/{obs.get('step', 0) + obs.get('steps_left', 0)}", None)
    ]
    if "error" in obs:
        lines.append((f"error: {_one_line(obs['error'])}", None))
    for k, entry in enumerate(obs.get("results", ())):
        name = word_or_string(str(entry.get("call")))
        if not entry.get("ok"):
            lines.append((f"{name} error: {_one_line(entry.get('error'))}", None))
            continue
        head, records = _result_lines(str(entry.get("call")), entry.get("result"))
        lines.append((f"{name} ok{head}", None))
        lines += [(r, k) for r in records]
    if obs.get("answer_submitted"):
        lines.append(("answer submitted", None))
    return lines


def _marker(dropped: int, max_chars: int) -> str:
    return f"truncated: {dropped} lines dropped to fit {max_chars} characters"


def fit_compact_cut(obs: dict[str, Any], max_chars: int) -> tuple[str, bool]:
    """(text, whether anything was cut): ``obs`` in the compact format within ``max_chars``.

    As `osint_gym.text.fit_json_cut` drops the last items of the longest lists, this drops whole
    trailing record (and comment) lines of the call that returned the most lines, one at a time, so a
    listing keeps its first records and a single looked-up record outlives a long search; then
    trailing lines of any kind but the header. A last line says how many lines were dropped."""
    pairs = observation_lines(obs)
    text = json_safe("\n".join(line for line, _ in pairs))  # characters outside CHARSET escaped as JSON does
    if len(text) <= max_chars:
        return text, False
    lines = text.split("\n")  # escaping never adds a newline: one text line per pair
    groups: dict[int, list[int]] = {}
    for i, (_, call) in enumerate(pairs):
        if call is not None:
            groups.setdefault(call, []).append(i)
    dropped, size, gone = 0, len(text), set()
    while size + 1 + len(_marker(dropped, max_chars)) > max_chars:
        longest = max(groups, key=lambda c: (len(groups[c]), c), default=None)
        if longest is not None and groups[longest]:
            i = groups[longest].pop()
        else:
            rest = [i for i in range(len(lines) - 1, 0, -1) if i not in gone]
            if not rest:
                break
            i = rest[0]
        gone.add(i)
        size -= len(lines[i]) + 1
        dropped += 1
    out = "\n".join([line for i, line in enumerate(lines) if i not in gone] + [_marker(dropped, max_chars)])
    if len(out) > max_chars:
        out = f"{lines[0][: max_chars // 2]}\nerror: the observation does not fit in {max_chars} characters"
    return out, True


def fit_compact(obs: dict[str, Any], max_chars: int) -> str:
    return fit_compact_cut(obs, max_chars)[0]


def reset_text(observation_format: str, question: str, max_steps: int, max_parallel_calls: int,
               schemas: list[dict[str, Any]], help_line: str) -> str:
    """The reset observation in either format: the question, the budgets, the tools with their
    parameters (``help_line``: the JSON format's list of them)."""
    if observation_format != "compact":
        return (f"{question}\nInvestigate with tools and answer with one entity id. Budget: {max_steps} steps, up to "
                f"{max_parallel_calls} tool calls per step.\nActions: {help_line}")
    tools = " ".join(f"{s['function']['name']}({' '.join(s['function']['parameters']['properties'])})" for s in schemas)
    return f"{question}\nsteps {max_steps}, calls per step {max_parallel_calls}, answer with one id\ntools {tools}"


# ---------------------------------------------------------------------------- parsing
def items(text: str, where: str = "") -> Iterator[tuple[str | None, Any, bool]]:
    """(key or None, value, value was a STRING) for each ITEM in ``text``; a KEY=... opens a field
    whose items follow (the key is repeated for each of them). Raises `CompactError`."""
    i, n, key = 0, len(text), None
    platform: str | None = None  # a "PLATFORM:" prefix waiting for its item
    while i < n:
        if text[i] == " ":
            i += 1
            continue
        start = i
        if text[i] == '"':
            try:
                value, i = _DECODER.raw_decode(text, i)
            except ValueError:
                raise CompactError(f"{where}unterminated or invalid string at column {start + 1}") from None
            if i < n and text[i] == "=":  # a quoted key
                _no_platform(platform, where)
                key, i = str(value), i + 1
                continue
            item, quoted = (value[1:] if value.startswith(" ") else value), True
        else:
            j = n if (j := text.find(" ", i)) < 0 else j
            word = text[i:j]
            eq = word.find("=")
            if eq >= 0:
                key = word[:eq]
                if not key:
                    raise CompactError(f"{where}'=' without a key at column {start + 1}")
                _no_platform(platform, where)
                i += eq + 1
                continue
            i = j
            if word.endswith(":") and _WORD.match(word[:-1]) and platform is None:
                platform = word[:-1]  # the platform of the referenced account that follows
                continue
            if ":" in word:
                raise CompactError(f"{where}unexpected ':' in {word[:40]!r} at column {start + 1}")
            item, quoted = word, False
        yield key, (item, platform), quoted
        platform = None
    _no_platform(platform, where)


def _no_platform(platform: str | None, where: str) -> None:
    if platform is not None:
        raise CompactError(f"{where}platform {platform!r} is not followed by an item")


def _fields(text: str, where: str, refs: frozenset[str]) -> dict[str, Any]:
    """The fields of a line; ``refs``: the keys that hold references."""
    out: dict[str, Any] = {}
    for key, value, quoted in items(text, where):
        if key is None:
            raise CompactError(f"{where}value {value[0][:40]!r} has no key")
        if key[0] in "+-" and len(key) > 1:  # a knowledge-graph fact
            facts = out.setdefault("facts", {})
            facts.setdefault(key[1:] if key[0] == "+" else key[1:] + INVERSE, []).append(value[0])
        elif key in refs:
            ref = {"id": value[0], **({"platform": value[1]} if value[1] else {})}
            if key in SINGLE_REFS:
                out[key] = ref
            else:
                out.setdefault(key, []).append(ref)
        elif key in out:
            raise CompactError(f"{where}field {key!r} has several values")
        else:
            out[key] = int(value[0]) if not quoted and _INT.match(value[0]) else value[0]
    return out


def _record(line: str, where: str) -> dict[str, Any] | None:
    """The record a line shows, or None when the line is not a record line."""
    rtype, _, rest = line.partition(" ")
    if rtype not in RECORD_TYPES:
        return None
    if rest.startswith('"'):
        try:
            rid, end = _DECODER.raw_decode(rest)
        except ValueError:
            raise CompactError(f"{where}unterminated or invalid string id") from None
        rid, rest = (rid[1:] if rid.startswith(" ") else rid), rest[end:]
    else:
        rid, _, rest = rest.partition(" ")
    if not rid:
        raise CompactError(f"{where}a {rtype} record without an id")
    record: dict[str, Any] = {"id": rid, "type": rtype, **_fields(rest, where, _REFS.get(rtype, frozenset()))}
    if record["type"] == "entity":
        record.setdefault("facts", {})
    return record


def parse_compact(text: str) -> dict[str, Any]:
    """A compact observation back as the dict the env renders (``step``, ``steps_left``, ``results``
    with one ``{"call", "ok", "result" | "error"}`` per call, ``error``, ``answer_submitted``,
    ``truncated``), references reduced to ``{"id"[, "platform"]}``. Raises `CompactError`."""
    if not isinstance(text, str):
        raise CompactError(f"a compact observation is a string, got {type(text).__name__}")
    lines = text.split("\n")
    head = re.match(r"step (\d+)/(\d+)\Z", lines[0])
    if not head:
        raise CompactError(f"line 1: expected 'step K/N', got {lines[0][:60]!r}")
    step, total = int(head.group(1)), int(head.group(2))
    obs: dict[str, Any] = {"step": step, "steps_left": total - step}
    results: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None  # the open call entry
    for no, line in enumerate(lines[1:], 2):
        where = f"line {no}: "
        if not line:
            continue
        if line.startswith("error: "):
            obs["error"] = line[len("error: "):]
        elif line == "answer submitted":
            obs["answer_submitted"] = True
        elif line.startswith("truncated: "):
            obs["truncated"] = line[len("truncated: "):]
        elif line.startswith("comment ") or line == "comment":
            thread = _last_record(current)
            if thread is None:
                raise CompactError(f"{where}a comment outside a thread")
            comment = _fields(line[len("comment"):], where, _COMMENT_REFS)
            thread.setdefault("comments", []).append(comment)
        elif (record := _record(line, where)) is not None:
            if current is None or not current["ok"]:
                raise CompactError(f"{where}a record outside a successful call")
            current["_records"].append(record)
        else:
            current = _call_line(line, where)
            results.append(current)
    if results:
        obs["results"] = [_close(e) for e in results]
    return obs


def _call_line(line: str, where: str) -> dict[str, Any]:
    name, sep, rest = line.partition(" ")
    if rest.startswith("error: ") or rest == "error:":
        return {"call": name, "ok": False, "error": rest[len("error: "):]}
    if rest != "ok" and not rest.startswith("ok "):
        raise CompactError(f"{where}expected a record, a comment or 'TOOL ok' / 'TOOL error: ...', got {line[:60]!r}")
    fields = _fields(rest[2:], where, _HEAD_REFS)
    return {"call": name, "ok": True, "_head": fields, "_records": []}


def _last_record(entry: dict[str, Any] | None) -> dict[str, Any] | None:
    last: dict[str, Any] | None = entry["_records"][-1] if entry is not None and entry.get("_records") else None
    return last if last is not None and last.get("type") == "thread" else None


def _close(entry: dict[str, Any]) -> dict[str, Any]:
    if not entry["ok"]:
        return entry
    head, records = entry.pop("_head"), entry.pop("_records")
    if head or entry["call"] in _WRAPPER_KEYS or entry["call"].startswith("search_"):
        entry["result"] = {**head, _WRAPPER_KEYS.get(entry["call"], "results"): records}
    elif records:
        entry["result"] = records[0]
    else:
        entry["result"] = "added" if entry["call"] == "add_edge" else None
    return entry

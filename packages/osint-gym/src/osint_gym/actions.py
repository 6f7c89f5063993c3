"""Parsing what an LLM emits into tool calls, for any tokenizer and chat template.

Accepted shapes (several calls in one action run in parallel):

* ``{"tool": "get_profile", "args": {"handle_or_id": "@x"}}``
* the OpenAI function-call shape ``{"name": ..., "arguments": {...} or "<json string>"}``, also wrapped as
  ``{"type": "function", "function": {...}}`` or listed under ``{"tool_calls": [...]}``
* Hermes/Qwen tags: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (one or more)
* shortcuts ``{"answer": "person_12"}`` and ``{"add_edge": ["account_3", "alias_of", "person_12"]}``
* a JSON list of any of the above
* plain text ``answer: person_12``
* the short syntax, one call per line (several lines: several calls in one step)::

      get_profile account_164
      get_profile person_7 person_43               same-tool fan-out: one call per value
      search_people name="Olga Becker" organization=org_16
      add_edge account_164 authored post_493
      answer person_103

  A line starts with an action name; positional values fill its first parameter (add_edge:
  src rel dst; answer: the entity id), ``key=value`` fields the others, and values are written as
  in the compact observation format (`osint_gym.compact`): a word, or a JSON string. Several words
  after a key are one string (``name=Olga Becker``). ``tool {"arg": ...}`` takes JSON arguments.

A JSON value may sit anywhere in surrounding prose. Parsing never raises: it returns a
`ParsedAction` whose ``error`` says what was wrong.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from osint_gym.compact import CompactError, items, word_or_string
from osint_gym.errors import ConfigError
from osint_gym.tools import CONTROL_SCHEMAS, TOOLS

MAX_ACTION_CHARS = 16_384
_MAX_JSON_STARTS = 64  # bounded scan for a JSON value inside prose (keeps parsing O(n) in practice)
_OPEN, _CLOSE = "<tool_call>", "</tool_call>"
# the answer is the rest of the labelled line: prose on later lines is not part of it (see osint_gym.reward)
_PLAIN_ANSWER = re.compile(r"^\s*(?:final\s+)?answer\s*[:=]\s*([^\n]*\S)", re.IGNORECASE)
_DECODER = json.JSONDecoder()
# every action's parameters in order (the first is the one positional values fill) and its integer ones
_PARAMS: dict[str, list[str]] = {
    **{name: list(spec.parameters["properties"]) for name, spec in TOOLS.items()},
    **{s["function"]["name"]: list(s["function"]["parameters"]["properties"]) for s in CONTROL_SCHEMAS},
}
_INTEGERS = {(name, arg) for name, spec in TOOLS.items() for arg, p in spec.parameters["properties"].items()
             if p["type"] == "integer"}
_HEAD = re.compile(r"([a-z_][a-z0-9_]*)(?:[ \t]|$)")


@dataclass(frozen=True)
class Call:
    name: str
    args: Any  # validated by the tool (or by the env for add_edge / answer)


@dataclass(frozen=True)
class ParsedAction:
    calls: tuple[Call, ...] = ()
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _fail(message: str) -> ParsedAction:
    return ParsedAction((), message)


def _call_from_dict(obj: dict[str, Any]) -> list[Call] | str:
    """Calls described by one JSON object, or an error message."""
    if "tool_calls" in obj:
        items = obj["tool_calls"]
        if not isinstance(items, list):
            return "'tool_calls' must be a list"
        return _calls_from_list(items)
    if "function" in obj and isinstance(obj["function"], dict):
        obj = obj["function"]
    if "answer" in obj and len(obj) == 1:
        return [Call("answer", {"entity_id": obj["answer"]})]
    if "add_edge" in obj and len(obj) == 1:
        edge = obj["add_edge"]
        if isinstance(edge, list):
            if len(edge) != 3:
                return "'add_edge' must be [src, rel, dst]"
            edge = dict(zip(("src", "rel", "dst"), edge))
        return [Call("add_edge", edge)]
    name = obj.get("tool", obj.get("name"))
    if not isinstance(name, str) or not name:
        return "a call needs a 'tool' (or 'name') string"
    args = obj.get("args", obj.get("arguments", obj.get("parameters", {})))
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except (ValueError, RecursionError):
            return f"arguments of {name!r} are not valid JSON"
    return [Call(name, args)]


def _calls_from_list(items: list[Any]) -> list[Call] | str:
    calls: list[Call] = []
    for item in items:
        if not isinstance(item, dict):
            return f"each call must be a JSON object, got {type(item).__name__}"
        got = _call_from_dict(item)
        if isinstance(got, str):
            return got
        calls.extend(got)
    return calls


def _from_value(value: Any) -> ParsedAction:
    if isinstance(value, dict):
        got = _call_from_dict(value)
    elif isinstance(value, list):
        got = _calls_from_list(value) if value else "an empty list holds no call"
    else:
        return _fail(f"expected a JSON object, got {type(value).__name__}")
    return _fail(got) if isinstance(got, str) else ParsedAction(tuple(got))


def _first_json(text: str) -> Any:
    """The first JSON object or list embedded in text, or raise ValueError."""
    starts = 0
    for match in re.finditer(r"[\[{]", text):
        starts += 1
        if starts > _MAX_JSON_STARTS:
            break
        try:
            value, _ = _DECODER.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, (dict, list)):
            return value
    raise ValueError("no JSON object found")


def tool_call_blocks(text: str) -> tuple[list[str], str]:
    """(the bodies of ``<tool_call>...</tool_call>`` blocks, the text outside them), each block up to
    the first closing tag after its opening one. Two str.find scans instead of a lazy regex, which
    took quadratic time on a string of unclosed opening tags (benchmarks/RESULTS.md)."""
    bodies, outside, pos = [], [], 0
    while (i := text.find(_OPEN, pos)) >= 0 and (j := text.find(_CLOSE, i + len(_OPEN))) >= 0:
        outside.append(text[pos:i])
        bodies.append(text[i + len(_OPEN) : j].strip())
        pos = j + len(_CLOSE)
    outside.append(text[pos:])
    return bodies, "".join(outside).strip()


# what an action that parses into nothing is told to write instead, in the syntax the episode asked for
_NO_ACTION = {
    "json": 'no action found; send JSON such as {"tool": "get_profile", "args": {"handle_or_id": "@name"}} '
            'or {"answer": "<entity id>"}',
    "short": "no action found; write one call per line, such as get_profile @name or answer <entity id>",
}


def parse_action(action: Any, max_chars: int = MAX_ACTION_CHARS, action_format: str = "json") -> ParsedAction:
    """Parse a text or dict action into calls; never raises. Every shape is accepted whatever the format;
    ``action_format`` ("json" or "short", the syntax the episode asked for) only picks the example that an
    action with no call in it is shown (any other value is a ConfigError: a caller's bug, not the agent's)."""
    if action_format not in _NO_ACTION:
        raise ConfigError(f"action_format must be one of {tuple(_NO_ACTION)}, got {action_format!r}")
    try:
        if isinstance(action, (dict, list)):
            return _from_value(action)
        if not isinstance(action, str):
            return _fail(f"an action is a string or a JSON object, got {type(action).__name__}")
        if len(action) > max_chars:
            return _fail(f"action is {len(action)} characters long (max {max_chars})")
        stripped = action.strip()
        if not stripped:
            return _fail("empty action")
        tags = tool_call_blocks(stripped)[0] if _OPEN in stripped else None
        if tags:
            calls: list[Call] = []
            for body in tags:
                try:
                    parsed = _from_value(json.loads(body))
                except ValueError:
                    return _fail("a <tool_call> block does not contain valid JSON")
                if not parsed.ok:
                    return parsed
                calls.extend(parsed.calls)
            return ParsedAction(tuple(calls))
        if stripped[0] in "{[":
            try:
                return _from_value(json.loads(stripped))
            except ValueError:
                pass  # maybe JSON followed by prose: fall through to the scan
        head = _HEAD.match(stripped)
        short = head is not None and head.group(1) in _PARAMS
        try:
            found = _from_value(_first_json(stripped))
            if found.ok or not short:  # JSON comes first; a short action may hold JSON of its own
                return found
        except ValueError:
            pass
        plain = _PLAIN_ANSWER.match(stripped)
        if plain:
            return ParsedAction((Call("answer", {"entity_id": plain.group(1).strip().strip("\"'`")}),))
        if short:
            return _short(stripped)
        return _fail(_NO_ACTION[action_format])
    except RecursionError:
        return _fail("action JSON is nested too deeply")


# ---------------------------------------------------------------------------- the short syntax
def _short(text: str) -> ParsedAction:
    calls: list[Call] = []
    for no, line in enumerate(text.split("\n"), 1):
        line = line.strip()
        if not line:
            continue
        got = _short_line(line, f"line {no}: ")
        if isinstance(got, str):
            return _fail(got)
        calls += got
    return ParsedAction(tuple(calls))


def _short_line(line: str, where: str) -> list[Call] | str:
    name, _, rest = line.partition(" ")
    name, rest = name.strip(), rest.strip()
    params = _PARAMS.get(name)
    if params is None:
        return f"{where}unknown action {name[:40]!r}; known: {', '.join(_PARAMS)}"
    if rest.startswith("{"):
        try:
            return [Call(name, json.loads(rest))]
        except ValueError:
            return f"{where}arguments of {name!r} are not valid JSON"
    positional: list[str] = []
    keyword: dict[str, list[Any]] = {}
    try:
        for key, (value, platform), quoted in items(rest, where):
            text = value if platform is None else f"{value}:{platform}"
            if key is None:
                positional.append(text)
            else:
                integer = (name, key) in _INTEGERS and not quoted and re.fullmatch(r"-?[0-9]+", text)
                keyword.setdefault(key, []).append(int(text) if integer else text)
    except CompactError as exc:
        return str(exc)
    args = {k: (v[0] if len(v) == 1 else v if name == "answer" or isinstance(v[0], int) else " ".join(map(str, v)))
            for k, v in keyword.items()}
    if name == "add_edge":
        if not positional:
            return [Call(name, args)]
        if args or len(positional) % 3:
            return f"{where}add_edge takes src rel dst (one triple per edge), got {len(positional)} values"
        return [Call(name, dict(zip(params, positional[i : i + 3]))) for i in range(0, len(positional), 3)]
    if name == "answer":
        if positional and not args:
            return [Call(name, {"entity_id": positional[0] if len(positional) == 1 else positional})]
        return [Call(name, args)] if not positional else f"{where}answer takes one entity id"
    first = params[0]
    if positional and first in args:
        return f"{where}{name}: {first!r} given both by position and as {first}="
    return [Call(name, {first: p, **args}) for p in positional] if positional else [Call(name, args)]


def _item(value: Any) -> str:
    """A value as one item, with the leading space every id and name gets (a STRING has it inside)."""
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else word_or_string(str(value))
    return text if text.startswith('"') else " " + text


def short_action(calls: list[tuple[str, dict[str, Any]]]) -> str:
    """Calls in the short syntax: consecutive calls of one tool that differ only in their first
    argument fan out on one line; add_edge and answer take positional values; every other call
    gets its own line."""
    lines: list[tuple[str, dict[str, Any], list[Any]]] = []  # (action, other args, first-argument values)
    for name, args in calls:
        first = _PARAMS.get(name, [""])[0]
        rest = {k: v for k, v in args.items() if k != first}
        values = (
            args[first]
            if name == "answer" and isinstance(args.get(first), list)
            else [args[first]]
            if first in args
            else []
        )
        if name not in ("add_edge", "answer") and values and _item(values[0]).startswith('"'):
            rest, values = {first: values[0], **rest}, []  # a STRING reads better as a field: name="Olga Becker"
        if name != "add_edge" and lines and lines[-1][0] == name and lines[-1][1] == rest and values:
            lines[-1][2].extend(values)
        else:
            lines.append((name, rest, list(values)))
    out = []
    for name, rest, values in lines:
        if name == "add_edge" and values and set(rest) == {"rel", "dst"}:
            out.append(name + _item(values[0]) + _item(rest["rel"]) + _item(rest["dst"]))
            continue
        fields = "".join(f" {k}={_item(v)}" for k, v in rest.items())
        out.append(name + "".join(_item(v) for v in values) + fields)
    return "\n".join(out)


def action_text(action: Any) -> str:
    """An action as the episode record keeps it: the text itself, else its JSON (or repr), cut to the limit."""
    if isinstance(action, str):
        return action[:MAX_ACTION_CHARS]
    try:
        return json.dumps(action, ensure_ascii=False)[:MAX_ACTION_CHARS]
    except (TypeError, ValueError):
        return repr(action)[:MAX_ACTION_CHARS]

"""A scripted OpenAI-compatible chat server on loopback: each reply is an OSINT-v0 action chosen by a
script from the conversation so far, sent back as the OpenAI ``tool_calls`` the env's parser reads
(`osint_gym.actions.parse_action`), or as plain text when the action parses into no call. Every request's
messages are kept, so a test can audit what the model was shown."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from osint_gym.actions import parse_action

# a model's bad turns as OpenAI assistant messages, and what the env's one-line error says of each (and of text
# that is no action)
MISSING_TOOL = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "c0", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"x\"}"}}]}
MALFORMED = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "get_profile", "arguments": "{not json"}}]}
GARBAGE = "this is not an action"
ONE_LINE_ERRORS = ["unknown tool 'get_weather'", "arguments of 'get_profile' are not valid JSON", "no action found"]

# (messages so far) -> the next action as the env's JSON/text action string, or a ready assistant message
Script = Callable[[list[dict[str, Any]]], "str | dict[str, Any]"]


def reply_message(action: str, turn: int) -> dict[str, Any]:
    """``action`` as an assistant message: its calls as tool calls, else the text itself."""
    parsed = parse_action(action)
    if not parsed.ok:
        return {"role": "assistant", "content": action}
    calls = [{"id": f"call_{turn}_{k}", "type": "function",
              "function": {"name": c.name, "arguments": c.args if isinstance(c.args, str) else json.dumps(c.args)}}
             for k, c in enumerate(parsed.calls)]
    return {"role": "assistant", "content": None, "tool_calls": calls}


def completion(message: dict[str, Any], model: str) -> dict[str, Any]:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {"id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


class ScriptedServer:
    """``script`` answers every chat request; ``requests`` holds each request's messages."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[list[dict[str, Any]]] = []
        self.lock = threading.Lock()

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        with self.lock:
            self.requests.append(messages)
        turn = sum(m["role"] == "assistant" for m in messages)
        action = self.script(messages)
        message = action if isinstance(action, dict) else reply_message(action, turn)
        return completion(message, body.get("model", "scripted"))


def _handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._send(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            try:
                self._send(200, server.answer(body))
            except Exception as exc:  # a broken script is the test's failure, shown to the client
                self._send(500, {"error": {"message": f"{type(exc).__name__}: {exc}"}})

    return Handler


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # every rollout of a run may connect at once
    daemon_threads = True


@contextmanager
def scripted_server(script: Script) -> Iterator[tuple[str, ScriptedServer]]:
    """Serve ``script`` on 127.0.0.1 (a free port); yields the ``/v1`` base URL and the server."""
    state = ScriptedServer(script)
    httpd = _Server(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)

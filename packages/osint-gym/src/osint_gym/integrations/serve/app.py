"""The OSINT-v0 server: FastAPI + uvicorn speaking OpenEnv's protocol (`osint_gym.integrations.serve.protocol`).

Endpoints: ``GET /health`` (status, sessions, internal errors), ``GET /metadata``, ``GET /schema``
(action, observation and state JSON schemas) and the ``/ws`` WebSocket, one session per connection.
OpenEnv's own server classes (openenv-core 0.3) are not used: the package requires gradio, fastmcp,
openai and huggingface_hub at install time, and runs every step in a thread executor, while an
OSINT-v0 step takes microseconds; the frames are OpenEnv's, so its clients work unchanged.

Steps run on the event loop (a step is pure Python and short; nothing awaits inside it). With
``--token`` the WebSocket needs ``Authorization: Bearer <token>``; ``/health`` stays open.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hmac
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from osint_gym.__about__ import __version__
from osint_gym.errors import ConfigError
from osint_gym.integrations.serve import protocol
from osint_gym.integrations.serve.protocol import ServeSettings, SessionManager


def _need(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigError(f"the OSINT-v0 server needs {module.split('.')[0]}: pip install 'osint-gym[serve]'") from exc


def _schemas() -> dict[str, Any]:
    text = {"type": "string"}
    return {
        "action": {
            "type": "object",
            "required": ["action"],
            "properties": {
                "action": {
                    "description": (
                        "what an LLM emits: short syntax, JSON tool calls, <tool_call> tags (see osint_gym.actions)"
                    ),
                    "anyOf": [text, {"type": "object"}, {"type": "array"}],
                }
            },
        },
        "observation": {
            "type": "object",
            "properties": {
                "text": text,
                "terminated": {"type": "boolean"},
                "truncated": {"type": "boolean"},
                "info": {"type": "object"},
            },
        },
        "state": {
            "type": "object",
            "properties": {
                "session_id": text,
                "episode_id": text,
                "step_count": {"type": "integer"},
                "done": {"type": "boolean"},
                "task_id": text,
                "family": text,
                "difficulty": text,
                "episode_reward": {"type": "number"},
            },
        },
    }


def _authorized(headers: Any, token: str | None) -> bool:
    if token is None:
        return True
    given = headers.get("authorization", "")
    return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())


async def _reaper(manager: SessionManager, sockets: dict[str, Any]) -> None:
    """Close sessions idle for longer than the timeout (the client is told why, then the slot is freed)."""
    period = min(1.0, manager.settings.idle_timeout_s / 4)
    while True:
        await asyncio.sleep(period)
        for sid in manager.idle(time.monotonic()):
            manager.close(sid)
            ws = sockets.pop(sid, None)
            if ws is not None:
                with contextlib.suppress(Exception):  # the peer may be gone already
                    await ws.send_text(
                        json.dumps(protocol.error(protocol.IDLE_TIMEOUT, "session idle too long; closed"))
                    )
                    await ws.close(code=1001)


def create_app(settings: ServeSettings) -> Any:
    """The ASGI app for ``settings`` (builds the world and tasks now, so bad settings fail here)."""
    fastapi = _need("fastapi")
    manager = SessionManager(settings)
    # the world and its tasks live as long as the server: keep them out of the cyclic GC's scans, whose
    # full passes over them otherwise show up as tens of milliseconds in the step latency's tail
    gc.collect()
    gc.freeze()
    sockets: dict[str, Any] = {}

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        task = asyncio.create_task(_reaper(manager, sockets))
        yield
        task.cancel()

    app = fastapi.FastAPI(title="OSINT-v0", version=__version__, lifespan=lifespan)
    app.state.manager = manager
    metadata = {
        "name": "OSINT-v0",
        "version": __version__,
        "author": "OSINT Gym maintainers",
        "description": "Investigate a hidden world of people and their online traces through tools; name one entity.",
        "documentation_url": "https://github.com/osint-gym/osint-gym",
        "readme_content": None,
        "benchmark": settings.benchmark,
        "env": dict(settings.env),
        "auth": settings.token is not None,
        "limits": {
            "max_sessions": settings.max_sessions,
            "idle_timeout_s": settings.idle_timeout_s,
            "max_message_bytes": settings.max_message_bytes,
            "rate_per_session": settings.rate_per_session,
        },
    }
    app.get("/health")(manager.health)
    app.get("/metadata")(lambda: metadata)
    app.get("/schema")(_schemas)

    async def ws(websocket: Any) -> None:
        await websocket.accept()
        if not _authorized(websocket.headers, settings.token):
            await _refuse(websocket, protocol.UNAUTHORIZED, "missing or wrong bearer token", 1008)
            return
        try:
            session = manager.open(time.monotonic())
        except protocol.CapacityError as exc:
            await _refuse(websocket, protocol.CAPACITY_REACHED, str(exc), 1013)
            return
        sockets[session.id] = websocket
        try:
            await _serve(websocket, session)
        finally:
            manager.close(session.id)
            sockets.pop(session.id, None)
            with contextlib.suppress(Exception):
                await websocket.close()

    ws.__annotations__["websocket"] = fastapi.WebSocket  # FastAPI injects by type; fastapi is imported lazily
    app.websocket("/ws")(ws)
    return app


async def _refuse(websocket: Any, code: str, message: str, close_code: int) -> None:
    with contextlib.suppress(Exception):
        await websocket.send_text(json.dumps(protocol.error(code, message)))
        await websocket.close(code=close_code)


async def _serve(websocket: Any, session: protocol.Session) -> None:
    """One frame in, one frame out, until the client closes, leaves, or the reaper closes the session."""
    while True:
        try:
            message = await websocket.receive()
        except Exception:  # the reaper closed this socket, or the transport broke
            return
        if message["type"] == "websocket.disconnect":
            return
        raw = message.get("text") if message.get("text") is not None else message.get("bytes")
        reply, close = session.handle(raw, time.monotonic())
        try:
            await websocket.send_text(json.dumps(reply, default=str))  # info may hold tuples; nothing else is not JSON
        except Exception:  # the client left before reading its reply
            return
        if close:
            return


def serve(settings: ServeSettings, host: str, port: int) -> None:
    """Run the server in this process until it is stopped (Ctrl-C or a signal)."""
    uvicorn = _need("uvicorn")
    app = create_app(settings)
    print(f"OSINT-v0 serving {settings.benchmark or 'sampled tasks'} on http://{host}:{port} (WebSocket /ws), "
          f"at most {settings.max_sessions} sessions", flush=True)
    # the transport's own frame cap sits above ours, so an oversized frame gets our error reply,
    # not a dropped connection
    uvicorn.run(app, host=host, port=port, log_level="warning", ws_max_size=4 * settings.max_message_bytes,
                ws_ping_interval=20.0, ws_ping_timeout=20.0, ws_per_message_deflate=False)

"""Clients for an OSINT-v0 server: `OSINTClient` (sync) and `AsyncOSINTClient`, with the env's API.

``reset(seed=, options=) -> (observation, info)`` and ``step(action) -> (observation, reward,
terminated, truncated, info)`` return exactly what `OSINTEnv` returns in process; ``state()`` the
session's state. Each client is one session (one WebSocket). A server error frame raises
`RemoteError` (its code and one-line message; the session goes on); a server that is down,
killed or silent raises `ServerUnavailable` within ``timeout`` seconds, never hangs.
Frames are not compressed (permessage-deflate costs more CPU than it saves on a
loopback or LAN link). Needs the ``websockets`` package (``pip install 'osint-gym[client]'``).
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from osint_gym.errors import ConfigError, OSINTGymError

StepTuple = tuple[str, float, bool, bool, dict[str, Any]]


class RemoteError(OSINTGymError):
    """The server answered a frame with an error (bad input, a limit, auth); ``code`` says which."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class ServerUnavailable(OSINTGymError, ConnectionError):
    """The server cannot be reached, went away, or did not answer in time."""


def ws_url(base_url: str) -> str:
    """``http://host:port`` (or ws://) -> ``ws://host:port/ws``, as OpenEnv's clients do."""
    if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://", "ws://", "wss://")):
        raise ConfigError(f"base_url must start with http://, https://, ws:// or wss://, got {base_url!r}")
    url = base_url.rstrip("/")
    url = "ws" + url[4:] if url.startswith("http") else url
    return url if url.endswith("/ws") else url + "/ws"


def _websockets(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(f"websockets.{module}")
    except ImportError as exc:
        raise ConfigError("the OSINT-v0 client needs websockets>=13: pip install 'osint-gym[client]'") from exc


def _headers(token: str | None) -> dict[str, str] | None:
    return {"Authorization": f"Bearer {token}"} if token else None


def _check_timeout(timeout: float) -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
        raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
    return float(timeout)


def _frame(kind: str, data: dict[str, Any] | None = None) -> str:
    return json.dumps({"type": kind, "data": data or {}})


def _reply(raw: str | bytes, expect: str) -> dict[str, Any]:
    """The data of a server frame of type ``expect``; an error frame raises `RemoteError`."""
    message = json.loads(raw)
    if message.get("type") == "error":
        data = message.get("data", {})
        raise RemoteError(str(data.get("code", "UNKNOWN")), str(data.get("message", "")))
    if message.get("type") != expect:
        raise RemoteError("PROTOCOL", f"expected a {expect!r} frame, got {message.get('type')!r}")
    return dict(message.get("data", {}))


def _reset_data(seed: int | None, options: dict[str, Any] | None) -> dict[str, Any]:
    return {"seed": seed, "options": options}


def _as_reset(data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    obs = data["observation"]
    return obs["text"], obs["info"]


def _as_step(data: dict[str, Any]) -> StepTuple:
    obs = data["observation"]
    return obs["text"], float(data["reward"]), bool(obs["terminated"]), bool(obs["truncated"]), obs["info"]


class OSINTClient:
    """A blocking client: one session on the server at ``base_url`` (connects on construction)."""

    def __init__(self, base_url: str, *, token: str | None = None, timeout: float = 30.0) -> None:
        self.url, self.timeout = ws_url(base_url), _check_timeout(timeout)
        sync_client = _websockets("sync.client")
        try:
            # entered like `with connect(...) as ws` and left in close(): the form websockets >= 17.1 asks for
            # (a bare connect() warns there), and one that works since websockets 13
            self._ws = sync_client.connect(self.url, additional_headers=_headers(token), open_timeout=self.timeout,
                                           max_size=None, close_timeout=1.0, compression=None).__enter__()
        except Exception as exc:
            raise ServerUnavailable(f"cannot connect to the OSINT-v0 server at {self.url}: {exc}") from exc

    def _exchange(self, frame: str | bytes) -> str | bytes:
        """Send one frame, return the raw reply (or `ServerUnavailable`)."""
        try:
            self._ws.send(frame)
        except Exception as exc:  # closed already: a refusal (capacity, auth, idle) may wait in the buffer
            try:
                return self._ws.recv(timeout=0)
            except Exception:
                raise ServerUnavailable(f"lost the OSINT-v0 server at {self.url}: {exc}") from exc
        try:
            return self._ws.recv(timeout=self.timeout)
        except TimeoutError as exc:
            raise ServerUnavailable(
                f"the OSINT-v0 server at {self.url} did not answer within {self.timeout:g} s"
            ) from exc
        except Exception as exc:  # ConnectionClosed and transport errors
            raise ServerUnavailable(f"lost the OSINT-v0 server at {self.url}: {exc}") from exc

    def _call(self, frame: str, expect: str) -> dict[str, Any]:
        return _reply(self._exchange(frame), expect)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        return _as_reset(self._call(_frame("reset", _reset_data(seed, options)), "observation"))

    def step(self, action: Any) -> StepTuple:
        return _as_step(self._call(_frame("step", {"action": action}), "observation"))

    def state(self) -> dict[str, Any]:
        return self._call(_frame("state"), "state")

    def send_raw(self, frame: str | bytes) -> dict[str, Any]:
        """Send any frame and return the server's reply as parsed JSON (for tests and debugging)."""
        return dict(json.loads(self._exchange(frame)))

    def close(self) -> None:
        with contextlib.suppress(Exception):  # closing a session the server already dropped is fine
            self._ws.send(_frame("close"))
        self._ws.close()

    def __enter__(self) -> OSINTClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncOSINTClient:
    """The asyncio client: ``async with AsyncOSINTClient(url) as env: obs, info = await env.reset()``."""

    def __init__(self, base_url: str, *, token: str | None = None, timeout: float = 30.0) -> None:
        self.url, self.timeout, self._token = ws_url(base_url), _check_timeout(timeout), token
        self._ws: Any = None

    async def connect(self) -> AsyncOSINTClient:
        if self._ws is None:
            connect = _websockets("asyncio.client").connect
            try:
                self._ws = await connect(self.url, additional_headers=_headers(self._token), open_timeout=self.timeout,
                                         max_size=None, close_timeout=1.0, compression=None)
            except Exception as exc:
                raise ServerUnavailable(f"cannot connect to the OSINT-v0 server at {self.url}: {exc}") from exc
        return self

    async def _call(self, frame: str, expect: str) -> dict[str, Any]:
        import asyncio

        await self.connect()
        try:
            await self._ws.send(frame)
        except Exception as exc:  # closed already: a refusal (capacity, auth, idle) may wait in the buffer
            try:
                raw = await asyncio.wait_for(self._ws.recv(), timeout=0.1)
            except Exception:
                raise ServerUnavailable(f"lost the OSINT-v0 server at {self.url}: {exc}") from exc
            return _reply(raw, expect)
        try:
            raw = await asyncio.wait_for(self._ws.recv(), timeout=self.timeout)
        except asyncio.TimeoutError as exc:
            raise ServerUnavailable(
                f"the OSINT-v0 server at {self.url} did not answer within {self.timeout:g} s"
            ) from exc
        except Exception as exc:
            raise ServerUnavailable(f"lost the OSINT-v0 server at {self.url}: {exc}") from exc
        return _reply(raw, expect)

    async def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        return _as_reset(await self._call(_frame("reset", _reset_data(seed, options)), "observation"))

    async def step(self, action: Any) -> StepTuple:
        return _as_step(await self._call(_frame("step", {"action": action}), "observation"))

    async def state(self) -> dict[str, Any]:
        return await self._call(_frame("state"), "state")

    async def close(self) -> None:
        if self._ws is not None:
            with contextlib.suppress(Exception):  # the server may have dropped the session already
                await self._ws.send(_frame("close"))
            await self._ws.close()
            self._ws = None

    async def __aenter__(self) -> AsyncOSINTClient:
        return await self.connect()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

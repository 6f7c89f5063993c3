"""Run ``osint-gym serve`` as a child process on a free loopback port (tests, benchmarks, notebooks).

    with ServerProcess(["--benchmark", "v0:test"]) as server:
        client = OSINTClient(server.url)

The process is stopped by its process id (SIGTERM, then SIGKILL after a grace period).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from typing import Any

from osint_gym.errors import OSINTGymError


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def get_json(url: str, timeout: float = 5.0) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - our own loopback server
        return dict(json.loads(response.read()))


class ServerProcess:
    """``python -m osint_gym serve --host 127.0.0.1 --port <free> <args>``, healthy before it is returned."""

    def __init__(self, args: list[str] | None = None, *, port: int | None = None, startup_timeout: float = 90.0,
                 env: dict[str, str] | None = None) -> None:
        self.args, self.port, self.startup_timeout = list(args or []), port or free_port(), startup_timeout
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> ServerProcess:
        cmd = [sys.executable, "-m", "osint_gym", "serve", "--host", "127.0.0.1", "--port", str(self.port), *self.args]
        # SIM115: lives as long as the process; a file, not a pipe: a chatty server never blocks on a full pipe
        self.log = tempfile.TemporaryFile()  # noqa: SIM115
        self.proc = subprocess.Popen(
            cmd, stdout=self.log, stderr=subprocess.STDOUT, env={**os.environ, **(self.env or {})}
        )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise OSINTGymError(f"osint-gym serve exited with {self.proc.returncode}: {self.output()[-500:]}")
            try:
                if get_json(self.url + "/health", timeout=1.0).get("status") == "healthy":
                    return self
            except (OSError, urllib.error.URLError, ValueError):
                time.sleep(0.2)
        self.stop()
        raise OSINTGymError(f"osint-gym serve did not become healthy on {self.url} within {self.startup_timeout:g} s")

    def output(self) -> str:
        """What the server printed so far."""
        self.log.seek(0)
        return self.log.read().decode(errors="replace").strip()

    def health(self) -> dict[str, Any]:
        return get_json(self.url + "/health")

    def kill(self) -> None:
        """SIGKILL, no clean-up: what a crash looks like to the clients."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.kill(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

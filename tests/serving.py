"""A real OpenAI-compatible server on loopback: ``transformers serve`` of a local model, on a free
port, stopped by its process group id. Shared by the endpoint tests and the agent-framework adapters'."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def transformers_serve(model_dir: str, timeout: float = 180.0) -> Iterator[str]:
    """Serve ``model_dir`` with ``transformers serve`` on 127.0.0.1; yields the ``/v1`` base URL."""
    exe = Path(sys.executable).with_name("transformers")
    assert exe.exists(), "transformers' CLI (the serving extra) must be installed in the test env"
    port = free_port()
    proc = subprocess.Popen([str(exe), "serve", model_dir, "--port", str(port), "--host", "127.0.0.1"],
                            env={**os.environ, "HF_HUB_OFFLINE": "1"}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            time.sleep(0.5)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail(f"transformers serve did not come up within {timeout:.0f} s")
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)

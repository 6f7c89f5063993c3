"""Where the tests find SmolLM2-135M-Instruct: the folder `osint-eval fetch-smollm2` writes (``hatch run
fetch-smollm2``, which .ci/run also runs), or ``OSINT_SMOLLM2``. Absent, its tests skip and say how to fetch it;
with ``OSINT_REQUIRE_SMOLLM2=1`` (CI) they fail instead, so CI cannot pass by skipping them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from osint_eval.local_models import SMOLLM2_FOLDER

ROOT = Path(__file__).resolve().parent.parent


def smollm2_path() -> str:
    """The SmolLM2 model folder, or a skip (a failure under ``OSINT_REQUIRE_SMOLLM2=1``) naming the fetch step."""
    path = Path(os.environ.get("OSINT_SMOLLM2") or ROOT / SMOLLM2_FOLDER)
    if (path / "config.json").is_file():
        return str(path)
    reason = f"SmolLM2 is not at {path}: run `hatch run fetch-smollm2` (or set OSINT_SMOLLM2 to its folder)"
    if os.environ.get("OSINT_REQUIRE_SMOLLM2") == "1":
        pytest.fail(reason)
    pytest.skip(reason)

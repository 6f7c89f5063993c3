"""Fixtures for the Inspect AI and verifiers adapters' tests (`hatch run verifiers:test`,
`hatch run inspect:test`): one real OpenAI-compatible server for the whole session, ``transformers serve``
of a tiny local model, and one of SmolLM2-135M-Instruct (a real pretrained chat model, `hatch run fetch-smollm2`)."""

from __future__ import annotations

import pytest

from tests.serving import transformers_serve

TINY = "tiny:64x2"


@pytest.fixture(scope="session")
def served_tiny():
    """``(base_url, model_name)`` of a tiny local model served on loopback; stopped by its process group."""
    from osint_eval.modeling import tiny_path

    model_dir = str(tiny_path(TINY))
    with transformers_serve(model_dir) as url:
        yield url, model_dir


@pytest.fixture(scope="session")
def served_smollm2():
    """``(base_url, model_name)`` of SmolLM2-135M-Instruct served on loopback (tests/smollm2.py finds its folder)."""
    from tests.smollm2 import smollm2_path

    model_dir = smollm2_path()
    with transformers_serve(model_dir) as url:
        yield url, model_dir

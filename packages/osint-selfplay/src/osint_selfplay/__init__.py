"""osint-selfplay: adversarial generator/answerer self-play on OSINT-v0 with TRL GRPO.

Imports are at the top of each module, except the heavy ones: torch, trl, transformers, peft,
datasets, accelerate, vllm, wandb, huggingface_hub and `osint_eval.decoding` (which imports torch)
are imported inside the functions that use them, so ``import osint_selfplay`` and
``osint-selfplay --help`` load none of them (tests/selfplay/test_cli.py checks it).
"""

from osint_selfplay.__about__ import __version__
from osint_selfplay.config import RunConfig, load_config

__all__ = ["RunConfig", "__version__", "load_config"]

"""osint-selfplay: adversarial generator/answerer self-play on OSINT-v0 with TRL GRPO.

Heavy imports (torch, trl, transformers) happen inside functions, so ``import osint_selfplay``
and ``osint-selfplay --help`` stay fast.
"""

from osint_selfplay.__about__ import __version__
from osint_selfplay.config import RunConfig, load_config

__all__ = ["RunConfig", "__version__", "load_config"]

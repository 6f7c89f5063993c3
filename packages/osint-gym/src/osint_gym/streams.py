"""Named random streams: every random choice draws from ``(seed, stream, index)``, never ``seed + offset``.

Each stream has its own index space, so two streams can never hand out the same item, whatever their
sizes (numeric offsets such as ``seed + 40_000_000`` collide as soon as a stream outgrows its gap, and
nothing checks them). osint-selfplay names the streams of a run (`osint_selfplay.streams`); osint-eval
names the offers it samples a generator on (`osint_eval.tasks.GENERATOR_STREAM`).
"""

from __future__ import annotations

import hashlib


def stream_seed(seed: int, stream: str, index: int = 0, bits: int = 31) -> int:
    """A non-negative integer seed for ``stream`` (and ``index`` within it, for per-round seeds):
    a hash, so distinct names give unrelated seeds (two streams collide with odds of 2**-bits)."""
    digest = hashlib.sha256(f"{seed}:{stream}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % (1 << bits)

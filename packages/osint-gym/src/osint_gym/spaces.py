"""OSINT-v0's text spaces, safe in Gymnasium's shared-memory vector envs.

`AsyncVectorEnv` (shared memory is its default) reads its observations out of shared memory once,
when it is built, and then hands back that object after every step: for `Box` spaces a numpy view
that the workers update, but for `Text` a tuple of strings decoded at construction, so every
observation came back as 16,384 blanks. `ObservationText` is a `Text` whose shared-memory reader
returns a live view instead (decoded when read; a deep copy, which the vector env makes by
default, is a plain tuple), and whose shared-memory form is the code points themselves (-1 pads),
independent of the order of a character set. An async vector env then returns exactly what a sync
one does.
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils.shared_memory import create_shared_memory, read_from_shared_memory, write_to_shared_memory

from osint_gym.text import CHARSET


class ObservationText(spaces.Text):
    """`gymnasium.spaces.Text` over `osint_gym.text.CHARSET`, with an order-free shared-memory form."""

    def __init__(self, max_length: int, seed: int | None = None) -> None:
        super().__init__(max_length, charset=CHARSET, seed=seed)


@create_shared_memory.register(ObservationText)
def _create(space: ObservationText, n: int = 1, ctx: ModuleType = mp) -> Any:
    return ctx.Array(np.dtype(np.int32).char, n * space.max_length)


@write_to_shared_memory.register(ObservationText)
def _write(space: ObservationText, index: int, value: str, shared_memory: Any) -> None:
    size = space.max_length
    row = np.frombuffer(shared_memory.get_obj(), dtype=np.int32)[index * size : (index + 1) * size]
    codes = np.frombuffer(value.encode("utf-32-le"), dtype=np.int32)[:size]
    row[: len(codes)] = codes
    row[len(codes) :] = -1


class LiveTexts(Sequence[str]):
    """The texts in a shared-memory buffer, decoded whenever they are read."""

    def __init__(self, data: np.ndarray) -> None:
        self._data = data

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return tuple(self)[i]
        row = self._data[i]
        return row[row >= 0].tobytes().decode("utf-32-le")

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __repr__(self) -> str:
        return repr(tuple(self))


@read_from_shared_memory.register(ObservationText)
def _read(space: ObservationText, shared_memory: Any, n: int = 1) -> LiveTexts:
    return LiveTexts(np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape((n, space.max_length)))


_SHARED: dict[int, ObservationText] = {}  # one space per size, shared by every env (spaces are not mutated)


def text_space(max_length: int) -> ObservationText:
    if max_length not in _SHARED:
        _SHARED[max_length] = ObservationText(max_length)
    return _SHARED[max_length]

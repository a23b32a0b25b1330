"""Where fuzzers get their randomness: a seeded ``random.Random`` or hypothesis.

Every generator in this package draws through :class:`Source`, so the same code serves
two masters: hypothesis (which can shrink a failing input to a minimal one) in the tests,
and a plain seeded ``random.Random`` in the benchmark (hypothesis's bookkeeping costs more
than most of the commands it would drive, and 10,000 inputs must stay cheap).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

T = TypeVar("T")

#: Characters fuzzed text is built from: the structural characters of every genotype form
#: and option syntax, whitespace, quotes, and a few non-ASCII and control characters.
STRUCTURAL = "|~+()[]{},'\"=:._- 0123456789abcdefxyz_NAT\t\n\\/*#@!$%^&?<>`;"
UNICODE = "éß中😀\u200b\u202e\ufeff\x7f\x01"


class Source(Protocol):
    """The draws a fuzzer may make. Implementations must be deterministic given their seed."""

    def integer(self, lo: int, hi: int) -> int: ...

    def choice(self, options: Sequence[T]) -> T: ...

    def chance(self, p: float) -> bool: ...

    def text(self, alphabet: str, max_size: int) -> str: ...

    def binary(self, max_size: int) -> bytes: ...


class SeededSource:
    """A :class:`Source` over ``random.Random(seed)``: fast, reproducible by seed."""

    def __init__(self, seed: Any) -> None:
        self.rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def choice(self, options: Sequence[T]) -> T:
        return options[self.rng.randrange(len(options))]

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def text(self, alphabet: str, max_size: int) -> str:
        n = self.rng.randint(0, max_size)
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def binary(self, max_size: int) -> bytes:
        return self.rng.randbytes(self.rng.randint(0, max_size))


class HypothesisSource:
    """A :class:`Source` over hypothesis's ``data`` object, so failures shrink."""

    def __init__(self, data: Any) -> None:
        from hypothesis import strategies as st

        self.data, self.st = data, st

    def integer(self, lo: int, hi: int) -> int:
        return self.data.draw(self.st.integers(lo, hi))

    def choice(self, options: Sequence[T]) -> T:
        return options[self.data.draw(self.st.integers(0, len(options) - 1))]

    def chance(self, p: float) -> bool:
        # True with probability p under uniform draws; shrinks (and leans) towards False,
        # i.e. towards the plainer input and away from the rare, often costlier branch
        return self.data.draw(self.st.integers(0, 999)) >= 1000 - int(p * 1000)

    def text(self, alphabet: str, max_size: int) -> str:
        return self.data.draw(self.st.text(alphabet=alphabet, max_size=max_size))

    def binary(self, max_size: int) -> bytes:
        return self.data.draw(self.st.binary(max_size=max_size))

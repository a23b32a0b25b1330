"""The example input an exported network is traced with: its shape, from text or numbers.

A user gives it as text (``1,3,32,32`` or ``1x3x32x32``) or as numbers; either way absurd
sizes are refused in one line before any network is built, since a shape of 2**40
elements would only fail deep inside torch, after minutes.
"""

from __future__ import annotations

from collections.abc import Sequence

from nasforge.kernel.errors import OptionError, show

#: Most elements an example input may have (a 3x4096x4096 image is about 2^25.6).
MAX_SHAPE_ELEMENTS = 2**28
#: The example input of a genotype string or file, which knows no data.
DEFAULT_INPUT_SHAPE = (1, 3, 32, 32)


def parse_shape(text: str) -> tuple[int, ...]:
    """``"1,3,32,32"`` or ``"1x3x32x32"`` -> ``(1, 3, 32, 32)``; absurd sizes are refused."""
    try:
        shape = tuple(int(part) for part in text.replace("x", ",").split(","))
    except ValueError as exc:
        raise OptionError(f"input shape {show(text)} is not a comma-separated list of integers") from exc
    return checked_shape(shape, text)


def input_shape(value: str | Sequence[int]) -> tuple[int, ...]:
    """A shape given as text (:func:`parse_shape`) or as a sequence of sizes, checked."""
    if isinstance(value, str):
        return parse_shape(value)
    if any(isinstance(d, bool) or not isinstance(d, int) for d in value):
        raise OptionError(f"input shape {show(list(value))} is not a sequence of integers")
    return checked_shape(tuple(value), ",".join(map(str, value)))


def checked_shape(shape: tuple[int, ...], text: str) -> tuple[int, ...]:
    """``shape`` if every size is positive and it has at most :data:`MAX_SHAPE_ELEMENTS`."""
    if not shape or any(d <= 0 for d in shape):
        raise OptionError(f"input shape {show(text)} must have positive sizes")
    elements = 1
    for d in shape:
        elements *= d
        if elements > MAX_SHAPE_ELEMENTS:
            raise OptionError(f"input shape {show(text)} has over {MAX_SHAPE_ELEMENTS} elements")
    return shape

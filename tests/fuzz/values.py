"""Fuzzed scalar values: option values, JSON values and text mutations.

The values are chosen by what breaks parsers in practice, not uniformly: wrong JSON types,
numbers at and past the limits of int/float/JSON (``1e309`` is inf, a 5,000-digit integer
exceeds Python's int-parsing limit), deeply nested JSON (recursion), malformed JSON, empty
and huge strings, and a few well-formed values so that the success paths run too.
Sizes that would make a *valid* input expensive (a network with C=3000) are left out on
purpose: the fuzzers look for crashes, and a 14 GB network is not one.
"""

from __future__ import annotations

import json
from typing import Any

from fuzz.source import STRUCTURAL, UNICODE, Source

#: Integers that stay cheap when they are accepted (network widths, counts, seeds).
SMALL_INTS = (-(2**63), -2, -1, 0, 1, 2, 3, 4, 5, 8, 16)
#: Integers far past any sane size: accepted values must be refused, not allocated.
HUGE_INTS = ("1000000000", "1000000000000", "9223372036854775807", "9223372036854775808", "1" + "0" * 40)
FLOATS = ("0.5", "1.5", "-0.0", "1e-320", "1e308", "1e309", "-1e309", "NaN", "Infinity", "-Infinity", "2.0")
LITERALS = ("null", "true", "false", '""', '"x"', "[]", "{}", "[1, 2]", '{"a": 1}', '{"C": 4}', "[[]]")
MALFORMED = (
    "[",
    "{",
    "[1,",
    '"unterminated',
    "{'a': 1}",
    "1 2",
    "0x10",
    "01",
    "+1",
    ".5",
    "1e",
    "--1",
    "nan",
)


def json_value(src: Source, depth: int = 0) -> Any:
    """A JSON-able Python value for tampering with records (journals, safetensors headers)."""
    kind = src.integer(0, 9 if depth < 2 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return src.choice((True, False))
    if kind == 2:
        return src.choice((-1, 0, 1, 2, 5, 10**6, -(2**63), 2**64, 10**30))
    if kind == 3:
        return src.choice((0.5, -0.0, 1e308, float("inf"), float("-inf"), float("nan")))
    if kind == 4:
        return src.choice(("", "x", "none", "nb201", "toy", "darts", "header", "trial", "end", "1"))
    if kind == 5:
        return src.text(STRUCTURAL + UNICODE, 12)
    if kind == 6:
        return "y" * src.choice((256, 5000))
    if kind == 7:
        return [json_value(src, depth + 1) for _ in range(src.integer(0, 3))]
    if kind == 8:
        return {src.choice(("a", "", "type", "name", "0")): json_value(src, depth + 1)}
    return nested_json_value(src.integer(1, 60))


def deep_json(depth: int, bracket: str, *, closed: bool) -> str:
    """``[[[...0]]]`` or ``{"a":{"a":...0}}`` as text, optionally left unclosed."""
    opener, closer = ("[", "]") if bracket == "[" else ('{"a":', "}")
    return opener * depth + ("0" + closer * depth if closed else "")


def nested_json_value(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def option_value(src: Source) -> str:
    """The text after ``key=`` in ``-o key=value`` (read as JSON when it parses)."""
    kind = src.integer(0, 11)
    if kind <= 1:
        return str(src.choice(SMALL_INTS))
    if kind == 2:
        return src.choice(HUGE_INTS)
    if kind == 3:
        return src.choice(FLOATS)
    if kind == 4:
        return src.choice(LITERALS)
    if kind == 5:
        return src.choice(MALFORMED)
    if kind == 6:  # deep nesting, closed or not: json's recursion limit
        return deep_json(
            src.choice((50, 500, 5_000, 100_000)), src.choice(("[", "{")), closed=src.chance(0.5)
        )
    if kind == 7:  # more than 4,300 digits: int() refuses it (ValueError, not JSONDecodeError)
        return "9" * src.choice((4_301, 5_000))
    if kind == 8:
        return src.text(STRUCTURAL + UNICODE, 16)
    if kind == 9:
        return src.choice(("x", "", " ", "20x", " 20 ", "1_000", "True", "None", "cpu", "cuda"))
    if kind == 10:
        return "z" * src.choice((300, 100_000))
    return json.dumps(json_value(src), allow_nan=True)


def mutate_text(src: Source, text: str, *, rounds: int | None = None) -> str:
    """Character-level mutations: delete, insert, replace, duplicate, swap, truncate."""
    for _ in range(src.integer(1, 3) if rounds is None else rounds):
        n = len(text)
        kind = src.integer(0, 6)
        i = src.integer(0, n)
        j = src.integer(i, min(n, i + 12))
        if kind == 0:
            text = text[:i] + text[j:]
        elif kind == 1:
            text = text[:i] + src.text(STRUCTURAL + UNICODE, 6) + text[i:]
        elif kind == 2 and n:
            text = text[:i] + src.choice(STRUCTURAL) + text[i + 1 :]
        elif kind == 3:
            text = text[:i] + text[i:j] * src.integer(2, 4) + text[j:]
        elif kind == 4:
            k = src.integer(0, n)
            a, b = sorted((i, k))
            text = text[a:b] + text[:a] + text[b:]
        elif kind == 5:
            text = text[:i]
        else:
            text = src.choice((text.upper(), text.lower(), f" {text} ", text.replace(" ", ""), text * 2))
    return text

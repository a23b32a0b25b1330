"""Parsing of ``key=value`` options given on the command line.

Values are user input of any size and shape, so the JSON reader is guarded: a value
nested deeper than any real option (``[[[[...`` a hundred thousand times) would overflow
the parser's recursion, and a huge one would only echo back in errors; both are refused
in one line before ``json.loads`` sees them.
"""

from __future__ import annotations

import json
from typing import Any

from nasforge.kernel.errors import OptionError, show
from nasforge.tools.export.input_shape import MAX_SHAPE_ELEMENTS, parse_shape

__all__ = [
    "MAX_DEPTH",
    "MAX_LENGTH",
    "MAX_SHAPE_ELEMENTS",
    "json_depth",
    "parse_options",
    "parse_shape",
    "parse_value",
]

#: Deepest nesting of lists/objects an option value may have ({"supernet": {"C": 8}} is 2).
MAX_DEPTH = 32
#: Longest option value, in characters (a DARTS genotype string is about 400).
MAX_LENGTH = 65_536


def parse_options(items: list[str] | None) -> dict[str, Any]:
    """``["population_size=20", "name=x"]`` -> ``{"population_size": 20, "name": "x"}``.

    Values are read as JSON when they parse (numbers, booleans, lists), else as strings.
    """
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise OptionError(f"option {show(item)} is not of the form key=value")
        name = key.strip().replace("-", "_")
        out[name] = parse_value(name, raw)
    return out


def parse_value(name: str, raw: str) -> Any:
    """One option value: JSON if it parses, else the text itself."""
    if len(raw) > MAX_LENGTH:
        raise OptionError(f"option '{name}': value of {len(raw)} characters (at most {MAX_LENGTH})")
    depth = json_depth(raw)
    if depth > MAX_DEPTH:
        raise OptionError(f"option '{name}': value nested {depth} levels deep (at most {MAX_DEPTH})")
    try:
        return json.loads(raw)
    except ValueError:  # not JSON (or an int past Python's digit limit): the text itself
        return raw


def json_depth(text: str) -> int:
    """Deepest bracket nesting of ``text`` outside JSON strings, without recursion."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(0, depth - 1)
    return deepest

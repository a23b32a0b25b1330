"""Parsing of ``key=value`` options given on the command line."""

from __future__ import annotations

import json
from typing import Any

from nasforge.errors import NasforgeError


def parse_options(items: list[str] | None) -> dict[str, Any]:
    """``["population_size=20", "name=x"]`` -> ``{"population_size": 20, "name": "x"}``.

    Values are read as JSON when they parse (numbers, booleans, lists), else as strings.
    """
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise NasforgeError(f"option '{item}' is not of the form key=value")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        out[key.strip().replace("-", "_")] = value
    return out


def parse_shape(text: str) -> tuple[int, ...]:
    try:
        shape = tuple(int(part) for part in text.replace("x", ",").split(","))
    except ValueError as exc:
        raise NasforgeError(f"input shape '{text}' is not a comma-separated list of integers") from exc
    if not shape or any(d <= 0 for d in shape):
        raise NasforgeError(f"input shape '{text}' must have positive sizes")
    return shape

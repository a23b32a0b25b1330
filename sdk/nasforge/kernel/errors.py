"""Exceptions that cross the public API.

Every error a user can cause derives from :class:`NasforgeError`, so the CLI can turn it
into one line and a non-zero exit instead of a traceback, and embedders can catch one type.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Sequence
from typing import Any


class NasforgeError(Exception):
    """Base class of every error a user's input can cause."""


class UnknownNameError(NasforgeError, KeyError):
    """A registry lookup failed; the message carries a "did you mean" suggestion."""

    def __init__(self, kind: str, name: str, known: Iterable[str]) -> None:
        known = sorted(known)
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        listing = ", ".join(known) if known else "none registered"
        super().__init__(f"unknown {kind} '{name}'{hint} (known: {listing})")
        self.kind, self.name, self.known = kind, name, known

    def __str__(self) -> str:  # KeyError would quote the message otherwise
        return str(self.args[0])


class InvalidGenotypeError(NasforgeError, ValueError):
    """A genotype (or its string form) does not belong to the space it claims."""


class CapabilityError(NasforgeError, TypeError):
    """A strategy or tool needs a capability the search space does not offer."""


class JournalError(NasforgeError):
    """A run journal is missing, corrupt, or belongs to a different experiment."""


class RunLockError(NasforgeError):
    """A run directory cannot be locked for writing (not a directory, not writable, no locks)."""


class RunInUseError(RunLockError):
    """Another live process writes the same run directory; the message names it (pid, host).

    Two writers on one journal would interleave duplicate trials and make it unreadable,
    so the second one is refused at once instead of waiting.
    """


class SearchFailedError(NasforgeError):
    """Every trial of a search failed: there is no best architecture, so the run is no success."""


class InfeasibleSearchError(SearchFailedError):
    """No trial satisfied the run's constraints: there is no best architecture to report
    (the message says how near the nearest came; the journal keeps every trial)."""


class ExportError(NasforgeError):
    """An exported file is corrupt, foreign, or failed its parity check."""


class BudgetError(NasforgeError, ValueError):
    """A budget that can never be spent (zero or negative) or has no limit at all."""


class MissingDependencyError(NasforgeError, ImportError):
    """An optional extra is needed for the feature the user asked for."""

    def __init__(self, package: str, extra: str, feature: str) -> None:
        super().__init__(f"{feature} needs the optional package '{package}': pip install 'nasforge[{extra}]'")


class BuildOptionError(NasforgeError, ValueError):
    """A space's network cannot be built with the options the user gave."""


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its type name when it has none), for
    one-line errors that wrap a library's multi-line message."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class OptionError(NasforgeError, ValueError):
    """An option has the wrong type or a value out of its range (one line, names the option)."""


def show(value: Any, limit: int = 60) -> str:
    """A short, single-line rendering of a user value for an error message."""
    if type(value) is int and abs(value) > 10**30:
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # int digits limit, or a deep structure from Python
        text = f"a {type(value).__name__}"
    text = text.replace("\n", "\\n").replace("\r", "\\r")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def suggest(name: str, known: Sequence[str]) -> str | None:
    """The known name ``name`` was most likely meant to be (case slips first: c -> C)."""
    folded = [k for k in known if k.lower() == name.lower()]
    if folded:
        return folded[0]
    close = difflib.get_close_matches(name, list(known), n=1)
    return close[0] if close else None

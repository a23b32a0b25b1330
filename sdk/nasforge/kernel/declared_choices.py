"""One choice of a declared space, as the declaration records it (no torch here).

A declared space (:mod:`nasforge.kernel.declared_space`) is written once as PyTorch code
that asks a chooser for what it may vary; reading that code records each request as a
:class:`DeclaredChoice`: its full label (``stage1.block0.kernel``), its kind, the tokens a
genotype may hold for it, the cell of the supernet it is a row of, the scope it was made
in and the condition under which it exists at all (a block of a repeat exists only when
the chosen depth reaches it; a candidate's own choices only when that candidate is
chosen). Everything else of the space (decisions, text forms, sampling, sizes, the
supernet's topology) is derived from these records.

Tokens are what a genotype stores and its text shows: strings and integers as given,
booleans as ``true``/``false``, floats as their shortest text, ``None`` as ``none``; any
other value (a class, a function) needs a name, given as a dict ``{name: value}``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from nasforge.kernel.errors import NasforgeError, show

Token = str | int

#: The kinds of choice a declaration may make.
VALUE = "value"  # a value the code uses (kernel size, activation name, expansion)
WIDTH = "width"  # a value choice of positive integers (channels, features)
LAYER = "layer"  # one module among candidates
DEPTH = "depth"  # how many blocks of a repeat exist
INPUTS = "inputs"  # which earlier outputs a node reads
KINDS = (VALUE, WIDTH, LAYER, DEPTH, INPUTS)

#: What a label may hold: names joined by dots (as scopes join them), no spaces or '='.
LABEL = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*(\.[A-Za-z_][A-Za-z0-9_\-]*)*\Z")


class DeclarationError(NasforgeError, ValueError):
    """A space's declaration that cannot make a search space: the message names the label
    (or the path) and what is wrong, in one line."""


def check_label(label: Any, *, where: str) -> str:
    """``label`` if it is a usable local label, else a DeclarationError naming it."""
    if not isinstance(label, str) or not LABEL.match(label):
        raise DeclarationError(
            f"{where}: label {show(label)} must be a name of letters, digits, '_' or '-' "
            "(or names joined by dots; no spaces or '=')"
        )
    return label


def token_of(value: Any, *, label: str) -> Token:
    """The token a genotype stores for the candidate ``value`` of choice ``label``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return check_token(value, label=label)
    raise DeclarationError(
        f"choice '{label}': candidate {show(value)} has no name; give the candidates as a dict "
        "{name: value}"
    )


def check_token(token: Any, *, label: str) -> Token:
    """A token given by name (a dict key): a non-empty string without spaces or '=', or an int."""
    if isinstance(token, int) and not isinstance(token, bool):
        return token
    if not isinstance(token, str) or not token or any(ch.isspace() or ch == "=" for ch in token):
        raise DeclarationError(
            f"choice '{label}': candidate name {show(token)} must be a non-empty string without "
            "spaces or '=', or an integer"
        )
    return token


def named_candidates(candidates: Any, *, label: str) -> tuple[tuple[Token, ...], tuple[Any, ...]]:
    """(tokens, values) of a value choice's candidates: a dict ``{name: value}`` or a list
    of values that name themselves (:func:`token_of`); empty or repeated ones refused."""
    if isinstance(candidates, Mapping):
        tokens = tuple(check_token(k, label=label) for k in candidates)
        values = tuple(candidates.values())
    elif isinstance(candidates, Iterable) and not isinstance(candidates, str | bytes):
        values = tuple(candidates)
        tokens = tuple(token_of(v, label=label) for v in values)
    else:
        raise DeclarationError(
            f"choice '{label}': candidates must be a list or a dict, got {show(candidates)}"
        )
    check_tokens(tokens, label=label)
    return tokens, values


def check_tokens(tokens: tuple[Token, ...], *, label: str) -> None:
    """At least one token, none named twice (as text: ``1`` and ``"1"`` would read alike)."""
    if not tokens:
        raise DeclarationError(f"choice '{label}' has no candidates")
    texts = [str(t) for t in tokens]
    repeated = sorted({t for t in texts if texts.count(t) > 1})
    if repeated:
        raise DeclarationError(f"choice '{label}' names candidate '{repeated[0]}' twice")


def check_roles(label: str, tokens: tuple[Token, ...], *, zero: Any, skip: Any) -> None:
    """A layer choice's op roles: each names one of its candidates, and not the same one."""
    for role, token in (("zero", zero), ("skip", skip)):
        if token is not None and (isinstance(token, bool) or token not in tokens):
            raise DeclarationError(
                f"layer choice '{label}': {role}={show(token)} names no candidate "
                f"(candidates: {', '.join(map(str, tokens))})"
            )
    if zero is not None and zero == skip:
        raise DeclarationError(f"layer choice '{label}': candidate '{zero}' cannot be both zero and skip")


def _tokens(value: Iterable[Token]) -> tuple[Token, ...]:
    return tuple(value)


def _token_set(value: Iterable[Token]) -> frozenset[Token]:
    return frozenset(value)


@attrs.frozen
class Condition:
    """A choice exists only while the choice ``label`` holds one of ``tokens``."""

    label: str
    tokens: frozenset[Token] = attrs.field(converter=_token_set)


@attrs.frozen
class DeclaredChoice:
    """One choice a declaration makes (see the module docstring)."""

    label: str
    kind: str = attrs.field(validator=attrs.validators.in_(KINDS))
    tokens: tuple[Token, ...] = attrs.field(converter=_tokens)
    #: The supernet cell (architecture tensor) the choice is a row of.
    cell: str
    #: The scope the choice was made in ("" for the declaration's top level).
    scope: str
    #: The condition under which the choice exists (None: always).
    condition: Condition | None = None
    #: Of a layer choice: the candidate that outputs zeros (the edge absent), if any.
    zero: Token | None = None
    #: Of a layer choice: the candidate that is the identity (a skip), if any.
    skip: Token | None = None

    @property
    def canonical(self) -> Token:
        """The token an absent choice holds in every genotype (its first)."""
        return self.tokens[0]

    def token_text(self, token: Token) -> str:
        return str(token)

    def read_token(self, text: str) -> Token:
        """The token whose text is ``text`` (KeyError if none)."""
        for t in self.tokens:
            if str(t) == text:
                return t
        raise KeyError(text)


__all__ = [
    "DEPTH",
    "INPUTS",
    "KINDS",
    "LAYER",
    "VALUE",
    "WIDTH",
    "Condition",
    "DeclarationError",
    "DeclaredChoice",
    "Token",
    "check_label",
    "check_roles",
    "check_token",
    "check_tokens",
    "named_candidates",
    "token_of",
]

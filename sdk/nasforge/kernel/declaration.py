"""The choices a declared space makes, and everything about genotypes that follows from them.

A :class:`Declaration` is the ordered tuple of :class:`~nasforge.kernel.declared_choices.DeclaredChoice`
records that reading a declaration gives (a choice's condition always names a choice
recorded before it). A genotype of the space holds one token per choice, in that order.

Conditional choices are canonical: a choice whose condition fails (a block beyond the
chosen depth, the inner choices of a candidate not chosen) is *absent* and holds its first
token in every genotype, so two genotypes differ only where their networks do. That is
what makes :attr:`Declaration.size` the number of distinct networks and
:meth:`Declaration.enumerate` yield each once; a genotype holding anything else for an
absent choice is refused by :meth:`Declaration.check`, and :meth:`Declaration.canonical`
turns any assignment into the genotype it means.

The text form lists the present choices as ``label=token``, separated by spaces, in
declaration order: ``stage1.depth=2 stage1.block0.kernel=5 ...``. No torch here.
"""

from __future__ import annotations

import difflib
import random
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property

from nasforge.kernel.declared_choices import DeclarationError, DeclaredChoice, Token
from nasforge.kernel.errors import InvalidGenotypeError, show

Assignment = dict[str, Token]


class Declaration:
    """The declared choices of one space (``name`` is the space's, for messages)."""

    def __init__(self, name: str, choices: Sequence[DeclaredChoice]) -> None:
        self.name = name
        self.choices: tuple[DeclaredChoice, ...] = tuple(choices)
        if not self.choices:
            raise DeclarationError(f"space '{name}' declares no choice: there is nothing to search")
        self.index: dict[str, int] = {c.label: i for i, c in enumerate(self.choices)}
        for i, c in enumerate(self.choices):
            cond = c.condition
            if cond is not None and self.index.get(cond.label, len(self.choices)) >= i:
                raise DeclarationError(f"choice '{c.label}' depends on '{cond.label}', which comes after it")
        self.children: dict[str, list[DeclaredChoice]] = {c.label: [] for c in self.choices}
        for c in self.choices:
            if c.condition is not None:
                self.children[c.condition.label].append(c)
        self.roots = [c for c in self.choices if c.condition is None]

    @cached_property
    def labels(self) -> tuple[str, ...]:
        return tuple(c.label for c in self.choices)

    # --- presence -----------------------------------------------------------------------
    def present(self, values: Sequence[Token]) -> list[bool]:
        """For each choice, whether it exists in the network ``values`` describe."""
        out: list[bool] = []
        for c in self.choices:
            cond = c.condition
            out.append(
                cond is None
                or (out[self.index[cond.label]] and values[self.index[cond.label]] in cond.tokens)
            )
        return out

    def canonical(self, values: Sequence[Token]) -> tuple[Token, ...]:
        """``values`` with every absent choice set to its first token (see the module docstring)."""
        values = list(values)
        if len(values) != len(self.choices):
            raise InvalidGenotypeError(
                f"a genotype of '{self.name}' has {len(self.choices)} choices, got {len(values)}"
            )
        for i, on in enumerate(self.present(values)):
            if not on:
                values[i] = self.choices[i].canonical
        return tuple(values)

    def check(self, values: Sequence[Token]) -> None:
        """Raise InvalidGenotypeError unless ``values`` is a canonical genotype's choices."""
        if len(values) != len(self.choices):
            raise InvalidGenotypeError(
                f"a genotype of '{self.name}' has {len(self.choices)} choices, got {len(values)}"
            )
        for c, v in zip(self.choices, values, strict=True):
            if isinstance(v, bool) or v not in c.tokens or type(v) is not type(c.tokens[c.tokens.index(v)]):
                raise InvalidGenotypeError(
                    f"choice '{c.label}' of '{self.name}': {show(v)} is not one of {list(c.tokens)}"
                )
        for c, v, on in zip(self.choices, values, self.present(values), strict=True):
            if not on and v != c.canonical:
                assert c.condition is not None
                raise InvalidGenotypeError(
                    f"choice '{c.label}' of '{self.name}' is absent in this network (it needs "
                    f"{c.condition.label} in {sorted(map(str, c.condition.tokens))}) and holds its first "
                    f"candidate {c.canonical!r}, got {v!r}"
                )

    # --- text -----------------------------------------------------------------------------
    def format(self, values: Sequence[Token]) -> str:
        """``label=token`` of every present choice, in order, separated by spaces."""
        return " ".join(
            f"{c.label}={c.token_text(v)}"
            for c, v, on in zip(self.choices, values, self.present(values), strict=True)
            if on
        )

    def parse(self, text: str) -> tuple[Token, ...]:
        """The choices of a genotype written as :meth:`format` writes it."""
        if not isinstance(text, str) or not text.strip():
            raise InvalidGenotypeError(
                f"a genotype of '{self.name}' reads 'label=value ...', got {show(text)}"
            )
        given: dict[str, str] = {}
        for part in text.split():
            label, eq, token = part.partition("=")
            if not eq or not label or not token:
                raise InvalidGenotypeError(
                    f"a genotype of '{self.name}' reads 'label=value ...'; {show(part)} is no 'label=value'"
                )
            if label not in self.index:
                close = difflib.get_close_matches(label, self.labels, n=1)
                hint = f"; did you mean '{close[0]}'?" if close else ""
                raise InvalidGenotypeError(f"space '{self.name}' has no choice '{label}'{hint}")
            if label in given:
                raise InvalidGenotypeError(f"choice '{label}' is given twice")
            given[label] = token
        values: list[Token] = []
        for c in self.choices:
            cond = c.condition
            on = cond is None or (
                _present(self, cond.label, values) and values[self.index[cond.label]] in cond.tokens
            )
            if not on:
                if c.label in given:
                    assert cond is not None
                    raise InvalidGenotypeError(
                        f"choice '{c.label}' is absent unless {cond.label} is one of "
                        f"{sorted(map(str, cond.tokens))}; leave it out"
                    )
                values.append(c.canonical)
                continue
            if c.label not in given:
                raise InvalidGenotypeError(f"the genotype gives no value for choice '{c.label}'")
            try:
                values.append(c.read_token(given[c.label]))
            except KeyError:
                raise InvalidGenotypeError(
                    f"choice '{c.label}': {given[c.label]!r} is not one of {[str(t) for t in c.tokens]}"
                ) from None
        return tuple(values)

    # --- sampling and moves ---------------------------------------------------------------
    def sample(self, rng: random.Random) -> tuple[Token, ...]:
        """Each present choice drawn uniformly, in order (absent ones draw nothing)."""
        values: list[Token] = []
        for c in self.choices:
            cond = c.condition
            on = cond is None or (
                _present(self, cond.label, values) and values[self.index[cond.label]] in cond.tokens
            )
            values.append(rng.choice(c.tokens) if on else c.canonical)
        return tuple(values)

    def neighbours(self, values: Sequence[Token]) -> list[tuple[Token, ...]]:
        """Every genotype with one present choice changed (absent ones made canonical), in
        declaration order, then token order."""
        out: list[tuple[Token, ...]] = []
        seen = {tuple(values)}
        for i, (c, on) in enumerate(zip(self.choices, self.present(values), strict=True)):
            if not on:
                continue
            for t in c.tokens:
                if t == values[i]:
                    continue
                moved = list(values)
                moved[i] = t
                n = self.canonical(moved)
                if n not in seen:
                    seen.add(n)
                    out.append(n)
        return out

    # --- numbers ------------------------------------------------------------------------
    @cached_property
    def encoding_length(self) -> int:
        return sum(len(c.tokens) for c in self.choices)

    def encode(self, values: Sequence[Token]) -> list[float]:
        """One-hot per choice, concatenated; an absent choice's block is all zeros."""
        out: list[float] = []
        for c, v, on in zip(self.choices, values, self.present(values), strict=True):
            out.extend(1.0 if on and t == v else 0.0 for t in c.tokens)
        return out

    def decode(self, x: Sequence[float]) -> tuple[Token, ...]:
        """Each choice's largest entry (ties to the earlier token), made canonical."""
        if len(x) != self.encoding_length:
            raise InvalidGenotypeError(
                f"an encoding of '{self.name}' has {self.encoding_length} entries, got {len(x)}"
            )
        values: list[Token] = []
        start = 0
        for c in self.choices:
            part = x[start : start + len(c.tokens)]
            start += len(c.tokens)
            best = max(range(len(part)), key=lambda k, part=part: (part[k], -k))  # type: ignore[misc]
            values.append(c.tokens[best])
        return self.canonical(values)

    @cached_property
    def size(self) -> int:
        """The number of distinct networks (canonical genotypes)."""
        return _count(self, self.roots)

    def enumerate(self) -> Iterator[tuple[Token, ...]]:
        """Every canonical genotype's choices once, the first choice varying slowest."""
        for a in _assignments(self, self.roots):
            yield tuple(a.get(c.label, c.canonical) for c in self.choices)

    def assignment(self, values: Sequence[Token]) -> Assignment:
        return dict(zip(self.labels, values, strict=True))

    def values_of(self, assignment: Mapping[str, Token]) -> tuple[Token, ...]:
        return tuple(assignment[label] for label in self.labels)


def _present(decl: Declaration, label: str, values: Sequence[Token]) -> bool:
    """Whether the choice ``label`` (already among ``values``) is present."""
    i = decl.index[label]
    c = decl.choices[i]
    cond = c.condition
    return cond is None or (
        _present(decl, cond.label, values) and values[decl.index[cond.label]] in cond.tokens
    )


def _count(decl: Declaration, siblings: Sequence[DeclaredChoice]) -> int:
    total = 1
    for c in siblings:
        total *= sum(
            _count(
                decl,
                [k for k in decl.children[c.label] if k.condition is not None and t in k.condition.tokens],
            )
            for t in c.tokens
        )
    return total


def _assignments(decl: Declaration, siblings: Sequence[DeclaredChoice]) -> Iterator[Assignment]:
    if not siblings:
        yield {}
        return
    first, rest = siblings[0], siblings[1:]
    for t in first.tokens:
        kids = [k for k in decl.children[first.label] if k.condition is not None and t in k.condition.tokens]
        for inner in _assignments(decl, kids):
            for tail in _assignments(decl, rest):
                yield {first.label: t, **inner, **tail}


__all__ = ["Assignment", "Declaration"]

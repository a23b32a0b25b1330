"""The chooser a declaration is handed: the one object through which its code asks for what
it may vary.

A declared space's code (``declare(self, c, **options)``, or a function under
:func:`~nasforge.kernel.declared_space.declared_space`) builds an ordinary ``nn.Module``,
asking the chooser ``c`` wherever the architecture varies:

- ``c.choice(label, candidates)``: a value the code uses (a kernel size, an activation's
  name, an expansion ratio); returns one of the candidates.
- ``c.width(label, candidates)``: the same for a number of channels or features
  (positive integers); the supernet shares one set of weights, sliced to each width.
- ``c.layer(label, candidates)``: one module among candidates, given as a dict ``{name:
  module or factory}`` (a factory, such as a class, is called only for a candidate that is
  built, with choices of its own if it makes any); returns the module. ``zero=`` and
  ``skip=`` name the candidates that output zeros and that are the identity, if any.
- ``c.repeat(label, depths, block)``: ``block(c)`` repeated a chosen number of times (an
  ``nn.Sequential``); with ``carry``, ``block(c, carry)`` returns ``(module, carry)`` and
  the repeat ``(module, last carry)``, so a block can hand its width to the next. Block
  ``i``'s choices are labelled ``label.block<i>.*`` and exist only when the depth reaches it.
- ``c.block(label, fn, *args)``: ``fn(c, *args)`` as a scope of its own (labels
  ``label.*``); in the supernet the value choices made in a scope become one mixed
  operation over that scope's variants, so a scope keeps the supernet small.
- ``c.inputs(label, n_candidates, n_chosen=1)``: a module that reads ``n_chosen`` of
  ``n_candidates`` tensors (summed, averaged or concatenated), for cells.

The same code is read three ways (:mod:`nasforge.kernel.declared_reading` and
:mod:`nasforge.kernel.declared_supernet`): once to record the choices, once per genotype
to build its network (only the chosen operations), and once to build the supernet.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from nasforge.kernel.declared_choices import (
    VALUE,
    WIDTH,
    Condition,
    DeclarationError,
    Token,
    check_label,
    check_roles,
    check_token,
    check_tokens,
    named_candidates,
)
from nasforge.kernel.errors import show

if TYPE_CHECKING:
    from torch import nn

#: The ways an input choice may combine what it reads.
REDUCTIONS = ("sum", "mean", "concat")


class _NoCarry:
    def __repr__(self) -> str:
        return "NO_CARRY"


#: ``repeat`` without ``carry``: ``block(c)`` returns a module.
NO_CARRY: Any = _NoCarry()


class Reading(Protocol):
    """What a chooser hands its checked requests to (a recorder, a builder, the supernet's)."""

    def value(
        self, c: Chooser, label: str, kind: str, tokens: tuple[Token, ...], values: tuple[Any, ...], cell: str
    ) -> Any: ...

    def layer(
        self,
        c: Chooser,
        label: str,
        tokens: tuple[Token, ...],
        candidates: tuple[Any, ...],
        cell: str,
        *,
        zero: Token | None = None,
        skip: Token | None = None,
    ) -> nn.Module: ...

    def repeat(
        self,
        c: Chooser,
        label: str,
        depths: tuple[int, ...],
        block: Callable[..., Any],
        carry: Any,
        cell: str,
    ) -> Any: ...

    def block(
        self, c: Chooser, label: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any: ...

    def inputs(
        self,
        c: Chooser,
        label: str,
        tokens: tuple[Token, ...],
        picks: tuple[tuple[int, ...], ...],
        reduce: str,
        cell: str,
    ) -> nn.Module: ...


class Chooser:
    """What a declaration asks for its choices (see the module docstring).

    ``scope`` is the label path the chooser's labels extend (``""`` at the top level);
    ``block_index`` is the index of the repeat block it builds (None outside one).
    """

    def __init__(
        self,
        reading: Reading,
        scope: str = "",
        *,
        condition: Condition | None = None,
        fixed: Mapping[str, Any] | None = None,
        block_index: int | None = None,
    ) -> None:
        self._reading = reading
        self.scope = scope
        self.condition = condition
        #: Values of this scope's own value choices (the supernet's variant being built).
        self.fixed: Mapping[str, Any] = fixed or {}
        self.block_index = block_index

    def full(self, label: str, *, what: str) -> str:
        local = check_label(label, where=f"{what} in scope '{self.scope}'" if self.scope else what)
        return f"{self.scope}.{local}" if self.scope else local

    def inner(
        self,
        scope: str,
        *,
        condition: Condition | None = None,
        fixed: Mapping[str, Any] | None = None,
        block_index: int | None = None,
    ) -> Chooser:
        """The chooser of a scope inside this one (same reading)."""
        return Chooser(
            self._reading,
            scope,
            condition=condition if condition is not None else self.condition,
            fixed=fixed,
            block_index=block_index,
        )

    # --- the requests -----------------------------------------------------------------
    def choice(
        self, label: str, candidates: Sequence[Any] | Mapping[Any, Any], *, cell: str | None = None
    ) -> Any:
        """One of ``candidates`` (a list of values naming themselves, or ``{name: value}``)."""
        full = self.full(label, what="a choice")
        tokens, values = named_candidates(candidates, label=full)
        return self._reading.value(self, full, VALUE, tokens, values, _cell(cell, label, full))

    def width(self, label: str, candidates: Sequence[int], *, cell: str | None = None) -> int:
        """One of ``candidates``, positive integers (channels or features)."""
        full = self.full(label, what="a width choice")
        if isinstance(candidates, Mapping | str | bytes) or not hasattr(candidates, "__iter__"):
            raise DeclarationError(
                f"width choice '{full}': candidates must be a list of positive integers, "
                f"got {show(candidates)}"
            )
        values = tuple(candidates)
        bad = [v for v in values if isinstance(v, bool) or not isinstance(v, int) or v < 1]
        if bad:
            raise DeclarationError(
                f"width choice '{full}': candidates must be positive integers, got {show(bad[0])}"
            )
        check_tokens(values, label=full)
        return self._reading.value(self, full, WIDTH, values, values, _cell(cell, label, full))

    def layer(
        self,
        label: str,
        candidates: Sequence[Any] | Mapping[Any, Any],
        *,
        cell: str | None = None,
        zero: Token | None = None,
        skip: Token | None = None,
    ) -> nn.Module:
        """One module of ``candidates``: ``{name: module or factory}``, or a list (named
        0, 1, ...); a factory (a class, a function) is called when its candidate is built.

        ``zero`` and ``skip`` name the candidates, if any, that output zeros (the edge
        absent) and that are the identity: one-shot methods reason about these roles (a
        derivation may leave the zero op out, PR-DARTS groups the skips), and the supernet
        never runs the zero candidate (its weight multiplies zeros)."""
        full = self.full(label, what="a layer choice")
        if isinstance(candidates, Mapping):
            tokens: tuple[Token, ...] = tuple(candidates)
            items = tuple(candidates.values())
        elif isinstance(candidates, Sequence) and not isinstance(candidates, str | bytes):
            tokens, items = tuple(range(len(candidates))), tuple(candidates)
        else:
            raise DeclarationError(
                f"layer choice '{full}': candidates must be a dict or a list, got {show(candidates)}"
            )
        return self._reading.layer(self, full, tokens, items, _cell(cell, label, full), zero=zero, skip=skip)

    def repeat(
        self,
        label: str,
        depths: Sequence[int],
        block: Callable[..., Any],
        carry: Any = NO_CARRY,
        *,
        cell: str | None = None,
    ) -> Any:
        """``block`` repeated a chosen number (one of ``depths``) of times: an
        ``nn.Sequential``, or ``(sequential, carry)`` when ``carry`` is given."""
        full = self.full(label, what="a repeat")
        given = tuple(depths) if not isinstance(depths, str | bytes) and hasattr(depths, "__iter__") else None
        if not given or any(isinstance(d, bool) or not isinstance(d, int) or d < 1 for d in given):
            raise DeclarationError(
                f"repeat '{full}': depths must be a list of positive integers, got {show(depths)}"
            )
        check_tokens(given, label=f"{full}.depth")
        if not callable(block):
            raise DeclarationError(
                f"repeat '{full}': block must be a function making a module, got {show(block)}"
            )
        return self._reading.repeat(self, full, given, block, carry, cell or "depth")

    def block(self, label: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``fn(c, *args, **kwargs)`` as a scope ``label`` of its own (see the module docstring)."""
        full = self.full(label, what="a block")
        if not callable(fn):
            raise DeclarationError(f"block '{full}': fn must be a function making a module, got {show(fn)}")
        return self._reading.block(self, full, fn, args, kwargs)

    def inputs(
        self,
        label: str,
        n_candidates: int,
        n_chosen: int = 1,
        *,
        reduce: str = "sum",
        cell: str | None = None,
    ) -> nn.Module:
        """A module reading ``n_chosen`` of the ``n_candidates`` tensors it is given (as a
        list or as arguments), combined by ``reduce`` (sum, mean or concat along dim 1)."""
        full = self.full(label, what="an input choice")
        for name, value, low in (("n_candidates", n_candidates, 1), ("n_chosen", n_chosen, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise DeclarationError(
                    f"input choice '{full}': {name} must be a positive integer, got {show(value)}"
                )
        if n_chosen > n_candidates:
            raise DeclarationError(
                f"input choice '{full}': n_chosen {n_chosen} exceeds n_candidates {n_candidates}"
            )
        if reduce not in REDUCTIONS:
            raise DeclarationError(
                f"input choice '{full}': reduce must be one of {list(REDUCTIONS)}, got {show(reduce)}"
            )
        picks = tuple(itertools.combinations(range(n_candidates), n_chosen))
        tokens: tuple[Token, ...] = (
            tuple(p[0] for p in picks) if n_chosen == 1 else tuple("+".join(map(str, p)) for p in picks)
        )
        return self._reading.inputs(self, full, tokens, picks, reduce, _cell(cell, label, full))


def check_layer(
    label: str, tokens: tuple[Any, ...], items: tuple[Any, ...], *, zero: Any = None, skip: Any = None
) -> None:
    """A layer choice's candidates: named by distinct tokens, each a module or a function
    that makes one, its roles naming candidates (checked when the declaration is recorded;
    a later reading compares its tokens with the recorded ones)."""
    for token in tokens:
        check_token(token, label=label)
    check_tokens(tokens, label=label)
    check_roles(label, tokens, zero=zero, skip=skip)
    for token, item in zip(tokens, items, strict=True):
        if not _is_module(item) and not callable(item):
            raise DeclarationError(
                f"layer choice '{label}': candidate '{token}' is {show(item)}, not a module or a "
                "function that makes one"
            )


def _cell(cell: str | None, local: str, full: str) -> str:
    if cell is None:
        return local
    if not isinstance(cell, str) or not cell:
        raise DeclarationError(f"choice '{full}': cell must be a non-empty string, got {show(cell)}")
    return cell


def _is_module(item: Any) -> bool:
    module = sys.modules.get("torch.nn")  # torch is loaded once a module exists: none before
    return module is not None and isinstance(item, module.Module)


__all__ = ["NO_CARRY", "REDUCTIONS", "Chooser", "Reading", "check_layer"]

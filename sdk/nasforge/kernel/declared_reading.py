"""Reading a declaration: once to record its choices, once per genotype to build its network.

:func:`record` runs the declaration's code on PyTorch's ``meta`` device (no memory, no
arithmetic, no random numbers drawn) with a :class:`Recorder` that takes each choice's
first candidate and records every choice it meets: every candidate of a layer choice is
made and every block of a repeat up to its largest depth, so the choices that exist only
for some genotypes are recorded too, with their condition. Labels are checked unique.

:func:`build` runs the code again with a :class:`Builder` that answers each choice from a
genotype, makes only the chosen candidates and the chosen number of blocks, and checks
that the code asked for exactly the choices the genotype's network has: a choice made
only for some *values* of another (``if k == 5: c.choice(...)``) cannot be recorded, so it
is refused by name (it belongs in a layer choice's candidate or a repeat's block).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import types
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

from nasforge.kernel.declaration import Declaration
from nasforge.kernel.declared_choices import (
    DEPTH,
    INPUTS,
    LAYER,
    Condition,
    DeclarationError,
    DeclaredChoice,
    Token,
)
from nasforge.kernel.declared_chooser import NO_CARRY, Chooser, check_layer
from nasforge.kernel.declared_mixing import SelectInputs
from nasforge.kernel.errors import NasforgeError, first_line, show


# --- what every reading shares ----------------------------------------------------------------
def takes_chooser(factory: Callable[..., Any]) -> bool:
    """Whether a candidate's factory wants the chooser (it has a required positional
    parameter: ``lambda c: ...``); classes such as ``nn.ReLU`` are called with nothing.
    (Read off the code object where there is one: a build asks it of every candidate.)"""
    if isinstance(factory, type):
        return False
    if isinstance(factory, functools.partial):
        return _required(factory.func, bound=len(factory.args), named=frozenset(factory.keywords))
    return _required(factory, bound=0, named=frozenset())


def _required(fn: Any, *, bound: int, named: frozenset[str]) -> bool:
    """Whether ``fn`` has required positional parameters besides the first ``bound`` and
    those ``named`` by keyword."""
    if isinstance(fn, types.FunctionType):
        code = fn.__code__
        names = code.co_varnames[: code.co_argcount]
        required = list(names[: len(names) - len(fn.__defaults__ or ())])
    else:
        try:
            required = list(_required_of(fn))
        except TypeError:  # unhashable: read its signature each time
            required = list(_required_of.__wrapped__(fn))
    return any(p not in named for p in required[bound:])


@functools.lru_cache(maxsize=1024)
def _required_of(fn: Any) -> tuple[str, ...]:
    """The required positional parameters of a callable that is no plain function (a class
    a ``functools.partial`` wraps, say): its signature, read once (a build asks it of every
    candidate it makes)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return ()
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return tuple(p.name for p in params if p.default is inspect.Parameter.empty and p.kind in positional)


def module_result(out: Any, *, what: str) -> nn.Module:
    if not isinstance(out, nn.Module):
        raise DeclarationError(f"{what} made {show(out)}, not an nn.Module")
    return out


def make_candidate(
    chooser: Chooser, label: str, token: Token, item: Any, *, condition: Condition | None
) -> nn.Module:
    """A layer choice's candidate: a module as given, or its factory called in the scope
    ``label.token`` (with the chooser if it takes one)."""
    if isinstance(item, nn.Module):
        return item
    inner = chooser.inner(f"{label}.{token}", condition=condition)
    out = item(inner) if takes_chooser(item) else item()
    return module_result(out, what=f"layer choice '{label}': candidate '{token}'")


def call_block(chooser: Chooser, block: Callable[..., Any], carry: Any, label: str) -> tuple[nn.Module, Any]:
    """One block of a repeat: ``(module, carry)``."""
    if carry is NO_CARRY:
        return module_result(block(chooser), what=f"repeat '{label}': its block"), NO_CARRY
    out = block(chooser, carry)
    if not (isinstance(out, tuple) and len(out) == 2):
        raise DeclarationError(
            f"repeat '{label}': a block given a carry returns (module, carry), got {show(out)}"
        )
    return module_result(out[0], what=f"repeat '{label}': its block"), out[1]


def repeat_result(blocks: Any, carry: Any, given: Any) -> Any:
    return blocks if given is NO_CARRY else (blocks, carry)


def scope_result(out: Any, *, label: str) -> Any:
    """What a block's function returned: a module, or a tuple starting with one."""
    first = out[0] if isinstance(out, tuple) and out else out
    module_result(first, what=f"block '{label}'")
    return out


def depth_condition(depth_label: str, depths: tuple[int, ...], index: int) -> Condition:
    """Block ``index`` exists when the depth exceeds it."""
    return Condition(depth_label, {d for d in depths if d > index})


@contextlib.contextmanager
def weightless() -> Iterator[None]:
    """Modules made inside have their tensors on the meta device, and the random number
    generator is left as it was."""
    with torch.random.fork_rng(devices=[]), torch.device("meta"):
        yield


# --- recording ------------------------------------------------------------------------------
class Recorder:
    """Records every choice (see the module docstring)."""

    def __init__(self) -> None:
        self.choices: list[DeclaredChoice] = []
        self.labels: set[str] = set()

    def claim(self, label: str) -> None:
        if label in self.labels:
            raise DeclarationError(f"label '{label}' is used twice; each choice and block needs its own")
        self.labels.add(label)

    def record(
        self,
        c: Chooser,
        label: str,
        kind: str,
        tokens: tuple[Token, ...],
        cell: str,
        *,
        zero: Token | None = None,
        skip: Token | None = None,
    ) -> None:
        self.claim(label)
        self.choices.append(DeclaredChoice(label, kind, tokens, cell, c.scope, c.condition, zero, skip))

    def value(
        self, c: Chooser, label: str, kind: str, tokens: tuple[Token, ...], values: tuple[Any, ...], cell: str
    ) -> Any:
        self.record(c, label, kind, tokens, cell)
        return values[0]

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
    ) -> nn.Module:
        check_layer(label, tokens, candidates, zero=zero, skip=skip)
        self.record(c, label, LAYER, tokens, cell, zero=zero, skip=skip)
        made = [
            make_candidate(c, label, t, item, condition=Condition(label, {t}))
            for t, item in zip(tokens, candidates, strict=True)
        ]
        return made[0]

    def repeat(
        self,
        c: Chooser,
        label: str,
        depths: tuple[int, ...],
        block: Callable[..., Any],
        carry: Any,
        cell: str,
    ) -> Any:
        self.claim(label)
        depth_label = f"{label}.depth"
        self.record(c, depth_label, DEPTH, depths, cell)
        blocks: list[nn.Module] = []
        carries: list[Any] = []
        current = carry
        for i in range(max(depths)):
            scope = f"{label}.block{i}"
            self.claim(scope)
            inner = c.inner(scope, condition=depth_condition(depth_label, depths, i), block_index=i)
            module, current = call_block(inner, block, current, label)
            blocks.append(module)
            carries.append(current)
        first = depths[0]
        return repeat_result(nn.Sequential(*blocks[:first]), carries[first - 1], carry)

    def block(
        self, c: Chooser, label: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        self.claim(label)
        return scope_result(fn(c.inner(label), *args, **kwargs), label=label)

    def inputs(
        self,
        c: Chooser,
        label: str,
        tokens: tuple[Token, ...],
        picks: tuple[tuple[int, ...], ...],
        reduce: str,
        cell: str,
    ) -> nn.Module:
        self.record(c, label, INPUTS, tokens, cell)
        return SelectInputs(picks[0], reduce)


def record(name: str, declare: Callable[[Chooser], Any]) -> Declaration:
    """The declaration ``declare`` makes (read weightless; see the module docstring)."""
    recorder = Recorder()
    with weightless():
        out = guarded(name, lambda: declare(Chooser(recorder)))
    module_result(out, what=f"space '{name}': its declaration")
    return Declaration(name, recorder.choices)


def guarded(name: str, run: Callable[[], Any]) -> Any:
    """``run()``, with a failure of the declaration's own code as one line naming the space."""
    try:
        return run()
    except NasforgeError:
        raise
    except Exception as exc:
        raise DeclarationError(
            f"space '{name}': its declaration failed: {type(exc).__name__}: {first_line(exc)}"
        ) from exc


# --- building one genotype's network -----------------------------------------------------------
def not_recorded(label: str) -> DeclarationError:
    return DeclarationError(
        f"choice '{label}' was not made when the declaration was read with each choice's first "
        "candidate: a choice made only for some values of another belongs in a layer choice's "
        "candidate or a repeat's block"
    )


class Builder:
    """Answers each choice from one genotype's ``values`` (see the module docstring)."""

    def __init__(self, declaration: Declaration, values: tuple[Token, ...]) -> None:
        self.declaration = declaration
        self.values = declaration.assignment(values)
        self.visited: set[str] = set()

    def take(self, label: str, kind: str, tokens: tuple[Token, ...]) -> Token:
        index = self.declaration.index.get(label)
        if index is None:
            raise not_recorded(label)
        recorded = self.declaration.choices[index]
        if recorded.kind != kind or recorded.tokens != tokens:
            raise DeclarationError(
                f"choice '{label}' changed between readings ({recorded.kind} of {list(recorded.tokens)}, "
                f"then {kind} of {list(tokens)}): its candidates must not depend on other choices or on "
                "network options"
            )
        if label in self.visited:
            raise DeclarationError(f"label '{label}' is used twice; each choice and block needs its own")
        self.visited.add(label)
        return self.values[label]

    def value(
        self, c: Chooser, label: str, kind: str, tokens: tuple[Token, ...], values: tuple[Any, ...], cell: str
    ) -> Any:
        return values[tokens.index(self.take(label, kind, tokens))]

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
    ) -> nn.Module:
        token = self.take(label, LAYER, tokens)
        return make_candidate(c, label, token, candidates[tokens.index(token)], condition=None)

    def repeat(
        self,
        c: Chooser,
        label: str,
        depths: tuple[int, ...],
        block: Callable[..., Any],
        carry: Any,
        cell: str,
    ) -> Any:
        depth_label = f"{label}.depth"
        depth = self.take(depth_label, DEPTH, depths)
        assert isinstance(depth, int)
        blocks: list[nn.Module] = []
        current = carry
        for i in range(depth):
            inner = c.inner(
                f"{label}.block{i}", condition=depth_condition(depth_label, depths, i), block_index=i
            )
            module, current = call_block(inner, block, current, label)
            blocks.append(module)
        return repeat_result(nn.Sequential(*blocks), current, carry)

    def block(
        self, c: Chooser, label: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        return scope_result(fn(c.inner(label), *args, **kwargs), label=label)

    def inputs(
        self,
        c: Chooser,
        label: str,
        tokens: tuple[Token, ...],
        picks: tuple[tuple[int, ...], ...],
        reduce: str,
        cell: str,
    ) -> nn.Module:
        token = self.take(label, INPUTS, tokens)
        return SelectInputs(picks[tokens.index(token)], reduce)

    def finish(self) -> None:
        """Every choice present in the genotype's network was asked for."""
        if len(self.visited) == len(self.declaration.choices):
            return  # every choice, present or not: nothing can be missing
        values = self.declaration.values_of(self.values)
        for c, on in zip(self.declaration.choices, self.declaration.present(values), strict=True):
            if on and c.label not in self.visited:
                raise DeclarationError(
                    f"the declaration did not ask for choice '{c.label}' when building "
                    f"{self.declaration.format(values)!r}: a choice made only for some values of another "
                    "belongs in a layer choice's candidate or a repeat's block"
                )


def build(
    declaration: Declaration, values: tuple[Token, ...], declare: Callable[[Chooser], Any]
) -> nn.Module:
    """The network of the genotype ``values``: only the chosen operations."""
    builder = Builder(declaration, values)
    out = declare(Chooser(builder))  # what the code raises with these options is the caller's to word
    builder.finish()
    return module_result(out, what=f"space '{declaration.name}': its declaration")


__all__ = ["Builder", "Recorder", "build", "record", "weightless"]

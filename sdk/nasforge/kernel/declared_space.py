"""A search space declared once, in PyTorch, with the choices inline: everything else derived.

Most spaces are a family of networks written as ordinary PyTorch code with a few places
that vary. Write that code once, asking a chooser (:mod:`nasforge.kernel.declared_chooser`)
where the architecture varies::

    class SmallMlp(DeclaredSpace):
        name = "small-mlp"

        def declare(self, c, *, in_features=8, num_classes=10):
            width = c.width("width", [16, 32, 64])
            act = c.layer("act", {"relu": nn.ReLU, "tanh": nn.Tanh})
            head = nn.Linear(width, num_classes)
            return nn.Sequential(nn.Flatten(), nn.Linear(in_features, width), act, head)

and the space has every capability a strategy may need: its decisions, a readable text
form (``width=32 act=tanh``), sampling, mutation and neighbours, a numeric encoding, its
size and an enumeration (conditional choices canonical, so the size counts distinct
networks: :mod:`nasforge.kernel.declaration`), ``build(g)`` holding only the chosen
operations, and ``supernet()`` under the core's supernet contract
(:mod:`nasforge.kernel.declared_supernet`), so every one-shot method searches it too.

The keyword arguments of ``declare`` are the space's network options (``num_classes``,
``in_channels``, ...: what ``build`` and ``supernet`` take, and what a run fills from its
data); the constructor's, as for any space, are the space's own options. The choices a
declaration makes must not depend on the network options. A function decorated with
:func:`declared_space` is the same thing without a class. A space's ``name`` defaults to
its class name in kebab case (``CnnFamily``: ``cnn-family``).
"""

from __future__ import annotations

import abc
import inspect
import random
import re
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from nasforge.kernel.decisions import Decision
from nasforge.kernel.declaration import Declaration
from nasforge.kernel.errors import InvalidGenotypeError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.search_space import (
    BUILD,
    DECISIONS,
    ENCODE,
    ENUMERATE,
    MUTATE,
    NEIGHBOURS,
    SAMPLE,
    SUPERNET,
    SearchSpace,
)

if TYPE_CHECKING:
    import torch
    from torch import nn

    from nasforge.kernel.declared_chooser import Chooser
    from nasforge.kernel.declared_supernet import DeclaredSupernet


def kebab(name: str) -> str:
    """``CnnFamily`` -> ``cnn-family``, ``ActMLP`` -> ``act-mlp``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", name)
    return spaced.replace("_", "-").lower()


def option_parameters(declare: Callable[..., Any]) -> list[inspect.Parameter]:
    """The keyword options of a ``declare(self, c, **options)`` method, as keyword-only
    parameters, in order."""
    params = list(inspect.signature(declare).parameters.values())[2:]
    return [
        p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
        for p in params
        if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]


def _with_options(
    fn: Callable[..., Any], head: list[str], options: list[inspect.Parameter]
) -> Callable[..., Any]:
    """``fn`` under a signature of its own, ``(self, *head, *, <options>)``, so what reads
    a space's ``build`` or ``supernet`` signature sees the declaration's options."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return fn(self, *args, **kwargs)

    positional = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in ("self", *head)]
    method.__signature__ = inspect.Signature([*positional, *options])  # type: ignore[attr-defined]
    method.__doc__, method.__name__, method.__qualname__ = fn.__doc__, fn.__name__, fn.__qualname__
    return method


class DeclaredSpace(SearchSpace):
    """A space made from its declaration (see the module docstring); subclasses write
    :meth:`declare` and set ``name`` (else their class name in kebab case)."""

    version: ClassVar[str] = "1"
    capabilities: ClassVar[frozenset[str]] = frozenset(
        {SAMPLE, MUTATE, NEIGHBOURS, ENCODE, ENUMERATE, BUILD, SUPERNET, DECISIONS}
    )

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            cls.name = kebab(cls.__name__)
        params = option_parameters(cls.declare)
        cls.build_options = cls.supernet_options = frozenset(p.name for p in params)
        if "build" not in cls.__dict__:
            cls.build = _with_options(DeclaredSpace.build, ["g"], params)  # type: ignore[method-assign]
        if "supernet" not in cls.__dict__:
            cls.supernet = _with_options(DeclaredSpace.supernet, [], params)  # type: ignore[method-assign]

    if TYPE_CHECKING:  # a subclass declares its own keyword options
        declare: Callable[..., nn.Module]
    else:

        @abc.abstractmethod
        def declare(self, c: Chooser, **options: Any) -> nn.Module:
            """The network, asking ``c`` wherever it varies (:mod:`nasforge.kernel.declared_chooser`)."""

    # --- the declaration ----------------------------------------------------------------
    @cached_property
    def declaration(self) -> Declaration:
        """The choices this space makes, read once (weightless) with default options."""
        from nasforge.kernel.declared_reading import record

        return record(self.name, self.declare)

    # --- identity -------------------------------------------------------------------------
    def genotype(self, choices: Sequence[str | int]) -> Genotype:
        """The genotype of ``choices``, absent choices set to their first candidate."""
        return super().genotype(self.declaration.canonical(choices))

    def _validate_choices(self, choices: tuple[str | int, ...]) -> None:
        self.declaration.check(choices)

    def format(self, g: Genotype) -> str:
        """``label=value`` of each choice the network has: ``stage1.depth=2 stage1.block0.kernel=5 ...``."""
        self.validate(g)
        return self.declaration.format(g.choices)

    def parse(self, text: str) -> Genotype:
        return self.genotype(self.declaration.parse(text))

    # --- sampling and moves ---------------------------------------------------------------
    def sample(self, rng: random.Random) -> Genotype:
        return self.genotype(self.declaration.sample(rng))

    def neighbours(self, g: Genotype) -> list[Genotype]:
        """Every network one present choice away, in declaration order."""
        self.validate(g)
        return [self.genotype(v) for v in self.declaration.neighbours(g.choices)]

    # --- numeric views --------------------------------------------------------------------
    def encode(self, g: Genotype) -> torch.Tensor:
        """One-hot per choice, concatenated (an absent choice's part all zeros)."""
        import torch

        self.validate(g)
        return torch.tensor(self.declaration.encode(g.choices), dtype=torch.float32)

    def decode(self, x: torch.Tensor) -> Genotype:
        import torch

        if not isinstance(x, torch.Tensor):
            raise InvalidGenotypeError(f"an encoding of '{self.name}' is a tensor, got {type(x).__name__}")
        return self.genotype(self.declaration.decode(x.detach().flatten().tolist()))

    def decisions(self) -> tuple[Decision, ...]:
        """One decision per choice; a combination that sets an absent choice reads as the
        network it describes (its genotype holds the absent choice's first candidate)."""
        return tuple(Decision(c.label, c.tokens) for c in self.declaration.choices)

    @property
    def size(self) -> int:
        """The number of distinct networks."""
        return self.declaration.size

    def enumerate(self) -> Iterator[Genotype]:
        for values in self.declaration.enumerate():
            yield Genotype(space=self.name, version=self.version, choices=values)

    # --- networks ---------------------------------------------------------------------------
    def check_options(self, options: dict[str, Any], *, what: str) -> None:
        """A TypeError, as Python gives a function, for an option the declaration lacks."""
        known = self.build_options or frozenset()
        unknown = sorted(set(options) - known)
        if unknown:
            raise TypeError(
                f"{what}() got an unexpected keyword argument '{unknown[0]}' (space '{self.name}' takes "
                f"{', '.join(sorted(known)) or 'no options'})"
            )

    def build(self, g: Genotype, *args: Any, **options: Any) -> nn.Module:
        """The network of ``g``: only its chosen operations (``options``: the declaration's)."""
        from nasforge.kernel.declared_reading import build

        if args:
            raise TypeError(f"build() of space '{self.name}' takes the genotype and keyword options only")
        self.validate(g)
        self.check_options(options, what="build")
        return build(self.declaration, g.choices, lambda c: self.declare(c, **options))

    def supernet(self, *args: Any, **options: Any) -> DeclaredSupernet:
        """The weight-sharing network of every genotype (the core's supernet contract)."""
        from nasforge.kernel.declared_supernet import DeclaredSupernet

        if SUPERNET not in self.capabilities:
            raise self._missing(SUPERNET)
        if args:
            raise TypeError(f"supernet() of space '{self.name}' takes keyword options only")
        self.check_options(options, what="supernet")
        return DeclaredSupernet(self, options)

    def preflight_supernet(self, input_shape: Sequence[int], options: dict[str, Any]) -> None:
        """The supernet with ``options``, run on one example of ``input_shape`` (random
        numbers drawn and left as they were): a declaration whose alternatives disagree
        in shape is refused here, naming them, before a one-shot run writes anything."""
        import torch

        with torch.random.fork_rng(devices=[]):
            supernet = self.supernet(**options).eval()
            with torch.no_grad():
                supernet(torch.zeros(1, *input_shape))


def declared_space(
    name: str | None = None, *, version: str = "1"
) -> Callable[[Callable[..., nn.Module]], type[DeclaredSpace]]:
    """A declared space from a function ``fn(c, **options) -> nn.Module`` (define-by-run),
    as a :class:`DeclaredSpace` subclass named like the function::

        @declared_space("small-mlp")
        def SmallMlp(c, *, in_features=8, num_classes=10): ...
    """

    def wrap(fn: Callable[..., nn.Module]) -> type[DeclaredSpace]:
        def declare(self: DeclaredSpace, c: Chooser, **options: Any) -> nn.Module:
            return fn(c, **options)

        params = list(inspect.signature(fn).parameters.values())
        self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        declare.__signature__ = inspect.Signature([self_param, *params])  # type: ignore[attr-defined]
        namespace = {
            "declare": declare,
            "version": version,
            "__module__": fn.__module__,
            "__qualname__": fn.__qualname__,
            "__doc__": fn.__doc__,
        }
        if name is not None:
            namespace["name"] = name
        return type(fn.__name__, (DeclaredSpace,), namespace)

    return wrap


__all__ = ["DeclaredSpace", "declared_space", "kebab"]

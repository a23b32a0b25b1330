"""``act-mlp``: an MLP whose hidden layers each pick an activation (Roberts et al.'s search space).

A genotype is one activation name per hidden layer, written ``relu|tanh|swish``; with the
default five candidates and three layers that is 5^3 = 125 networks. The space is small
on purpose: the paper's theory is about a mixed activation, and a space whose edges are
activation choices is where that theory applies most directly (exactly for the last
layer, whose output reaches the logits through the affine head).

Options (``--space-option``): ``layers``, the candidate ``ops`` (from
:data:`~nasforge_simplex.activations.ACTIVATIONS`) and LeakyReLU's ``negative_slope``.
The genotype encodes the layers' choices only, so a genotype of three layers is refused by
a four-layer space, and one naming an activation outside the candidate set is refused too.
Its ``supernet()`` follows the core's supernet contract, which is how every one-shot
method (this plugin's ``simplex`` and the others) searches it unchanged.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from typing import ClassVar

import torch
from torch import nn

from nasforge import Genotype, InvalidGenotypeError, SearchSpace
from nasforge.kernel.decisions import Decision
from nasforge.kernel.errors import OptionError
from nasforge.kernel.search_space import (
    BUILD,
    DECISIONS,
    ENCODE,
    ENUMERATE,
    MUTATE,
    NEIGHBOURS,
    SAMPLE,
    SUPERNET,
)
from nasforge_simplex.activations import ACTIVATIONS, DEFAULT_NEGATIVE_SLOPE, DEFAULT_OPS, check_ops

#: Most hidden layers a space may have (a typo beyond, not an MLP).
MAX_LAYERS = 64
SEPARATOR = "|"


class ActMlpSpace(SearchSpace):
    """Per-layer activation choice for an MLP of ``layers`` hidden layers."""

    name: ClassVar[str] = "act-mlp"
    version: ClassVar[str] = "1"
    capabilities: ClassVar[frozenset[str]] = frozenset(
        {SAMPLE, MUTATE, NEIGHBOURS, ENCODE, ENUMERATE, BUILD, SUPERNET, DECISIONS}
    )
    op_names: ClassVar[tuple[str, ...]] = ACTIVATIONS

    def __init__(
        self,
        *,
        layers: int = 3,
        ops: tuple[str, ...] | None = None,
        negative_slope: float = DEFAULT_NEGATIVE_SLOPE,
    ) -> None:
        if isinstance(layers, bool) or not isinstance(layers, int) or not 1 <= layers <= MAX_LAYERS:
            raise OptionError(f"option 'layers' must be an integer in [1, {MAX_LAYERS}], got {layers!r}")
        if isinstance(negative_slope, bool) or not isinstance(negative_slope, int | float):
            raise OptionError(f"option 'negative_slope' must be a number, got {negative_slope!r}")
        if not 0.0 <= float(negative_slope) < 1.0:
            raise OptionError(f"option 'negative_slope' must be in [0, 1), got {negative_slope!r}")
        self.layers = layers
        self.ops: tuple[str, ...] = check_ops(
            tuple(DEFAULT_OPS if ops is None else ops), owner="option 'ops'"
        )
        self.negative_slope = float(negative_slope)

    # --- identity -------------------------------------------------------------------
    def _validate_choices(self, choices: tuple[str | int, ...]) -> None:
        if len(choices) != self.layers:
            raise InvalidGenotypeError(
                f"an act-mlp genotype has {self.layers} choices (one activation per layer), "
                f"got {len(choices)}"
            )
        for layer, op in enumerate(choices):
            if op not in self.ops:
                raise InvalidGenotypeError(
                    f"layer {layer}: unknown activation {op!r}; candidates: {self.ops}"
                )

    def format(self, g: Genotype) -> str:
        self.validate(g)
        return SEPARATOR.join(str(op) for op in g.choices)

    def parse(self, text: str) -> Genotype:
        if not isinstance(text, str) or not text.strip():
            raise InvalidGenotypeError(f"an act-mlp genotype reads 'act|act|...', got {text!r}")
        return self.genotype([part.strip() for part in text.strip().split(SEPARATOR)])

    # --- sampling and moves ---------------------------------------------------------
    def sample(self, rng: random.Random) -> Genotype:
        return self.genotype([rng.choice(self.ops) for _ in range(self.layers)])

    def neighbours(self, g: Genotype) -> list[Genotype]:
        """Every genotype with one layer's activation changed, layer by layer."""
        self.validate(g)
        out = []
        for layer in range(self.layers):
            for op in self.ops:
                if op != g.choices[layer]:
                    choices = list(g.choices)
                    choices[layer] = op
                    out.append(self.genotype(choices))
        return out

    # --- numeric views --------------------------------------------------------------
    def encode(self, g: Genotype) -> torch.Tensor:
        """One-hot per layer, concatenated (``layers * len(ops)`` floats)."""
        self.validate(g)
        x = torch.zeros(self.layers, len(self.ops))
        for layer, op in enumerate(g.choices):
            x[layer, self.ops.index(str(op))] = 1.0
        return x.flatten()

    def decode(self, x: torch.Tensor) -> Genotype:
        """Each layer's largest entry (ties to the earlier candidate)."""
        if not isinstance(x, torch.Tensor) or x.numel() != self.layers * len(self.ops):
            raise InvalidGenotypeError(f"an act-mlp encoding has {self.layers * len(self.ops)} entries")
        index = x.detach().reshape(self.layers, len(self.ops)).argmax(dim=-1).tolist()
        return self.genotype([self.ops[i] for i in index])

    def decisions(self) -> tuple[Decision, ...]:
        """Each layer's activation among the candidates (``layer0``, ``layer1``, ...)."""
        return tuple(Decision(f"layer{k}", self.ops) for k in range(self.layers))

    @property
    def size(self) -> int:
        return len(self.ops) ** self.layers

    def enumerate(self) -> Iterator[Genotype]:
        for combo in itertools.product(self.ops, repeat=self.layers):
            yield self.genotype(combo)

    # --- networks -------------------------------------------------------------------
    def build(
        self,
        g: Genotype,
        *,
        width: int = 64,
        num_classes: int = 10,
        in_channels: int = 3,
        in_features: int | None = None,
        pool: int = 8,
    ) -> nn.Module:
        """The stand-alone network of ``g`` (images pooled to ``pool x pool``, or
        ``in_features`` flat inputs)."""
        from nasforge_simplex.act_mlp_network import ActMlpNetwork

        self.validate(g)
        return ActMlpNetwork(
            tuple(str(op) for op in g.choices),
            width=width,
            num_classes=num_classes,
            in_channels=in_channels,
            in_features=in_features,
            pool=pool,
            negative_slope=self.negative_slope,
        )

    def supernet(
        self,
        *,
        width: int = 64,
        num_classes: int = 10,
        in_channels: int = 3,
        in_features: int | None = None,
        pool: int = 8,
    ) -> nn.Module:
        """The weight-sharing network (the core's supernet contract)."""
        from nasforge_simplex.act_mlp_supernet import ActMlpSupernet

        return ActMlpSupernet(
            self,
            width=width,
            num_classes=num_classes,
            in_channels=in_channels,
            in_features=in_features,
            pool=pool,
        )

"""``act-mlp``: an MLP whose hidden layers each pick an activation (Roberts et al.'s search space).

A genotype is one activation name per hidden layer, written ``relu|tanh|swish``; with the
default five candidates and three layers that is 5^3 = 125 networks. The space is small
on purpose: the paper's theory is about a mixed activation, and a space whose edges are
activation choices is where that theory applies most directly (exactly for the last
layer, whose output reaches the logits through the affine head).

It is a declaration (:mod:`nasforge.kernel.declared_space`): shared linear maps and one
layer choice of activation after each, all rows of the supernet's cell ``layers``, so the
supernet mixes the activations after each layer's one linear map (the paper's shared
weights W, one alpha per layer), the setting in which the paper's identity is exact for the
last layer. Everything but its text form is derived.

Options (``--space-option``): ``layers``, the candidate ``ops`` (from
:data:`~nasforge_simplex.activations.ACTIVATIONS`) and LeakyReLU's ``negative_slope``.
Network options: ``width``, ``num_classes``, ``in_channels``, ``in_features`` and ``pool``
(:mod:`nasforge_simplex.act_mlp_network`).
"""

from __future__ import annotations

from functools import partial
from typing import ClassVar

from torch import nn

from nasforge import Chooser, DeclaredSpace, Genotype, InvalidGenotypeError
from nasforge.kernel.errors import OptionError
from nasforge_simplex.act_mlp_network import ActMlp, InputAdapter, check_sizes
from nasforge_simplex.activations import (
    ACTIVATIONS,
    DEFAULT_NEGATIVE_SLOPE,
    DEFAULT_OPS,
    check_ops,
    make_activation,
)

#: Most hidden layers a space may have (a typo beyond, not an MLP).
MAX_LAYERS = 64
SEPARATOR = "|"


class ActMlpSpace(DeclaredSpace):
    """Per-layer activation choice for an MLP of ``layers`` hidden layers."""

    name: ClassVar[str] = "act-mlp"
    version: ClassVar[str] = "1"
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

    def declare(
        self,
        c: Chooser,
        *,
        width: int = 64,
        num_classes: int = 10,
        in_channels: int = 3,
        in_features: int | None = None,
        pool: int = 8,
    ) -> nn.Module:
        """Images pooled to ``pool x pool`` (or ``in_features`` flat inputs), then ``layers``
        linear maps of width ``width``, each followed by its chosen activation, then a head."""
        features = check_sizes(
            width=width, num_classes=num_classes, in_channels=in_channels, in_features=in_features, pool=pool
        )
        linears = [nn.Linear(features if layer == 0 else width, width) for layer in range(self.layers)]
        head = nn.Linear(width, num_classes)
        candidates = {op: partial(make_activation, op, negative_slope=self.negative_slope) for op in self.ops}
        acts = [c.layer(f"layer{layer}", candidates, cell="layers") for layer in range(self.layers)]
        return ActMlp(InputAdapter(pool if in_features is None else None), linears, acts, head)

    # --- the text form of its genotypes ------------------------------------------------
    def format(self, g: Genotype) -> str:
        self.validate(g)
        return SEPARATOR.join(str(op) for op in g.choices)

    def parse(self, text: str) -> Genotype:
        if not isinstance(text, str) or not text.strip():
            raise InvalidGenotypeError(f"an act-mlp genotype reads 'act|act|...', got {text!r}")
        parts = [part.strip() for part in text.strip().split(SEPARATOR)]
        if len(parts) != self.layers:
            raise InvalidGenotypeError(
                f"an act-mlp genotype has {self.layers} choices (one activation per layer), got {len(parts)}"
            )
        for layer, op in enumerate(parts):
            if op not in self.ops:
                raise InvalidGenotypeError(
                    f"layer {layer}: unknown activation {op!r}; candidates: {self.ops}"
                )
        return self.genotype(parts)

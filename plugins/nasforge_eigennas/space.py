"""``mlp-res``: Eigen-NAS's search space, per-layer activations and per-layer skip switches.

A depth-L network (Eq. 1) has L-1 hidden layers, each choosing σ_l from {relu, leaky_relu,
sigmoid, tanh, swish}, and a skip α_{l-1} ∈ {0, 1} around each hidden layer but the first:
5^(L-1)·2^(L-2) architectures (500 at the default L = 4, 5,000 at L = 5). A genotype's
choices are (σ_1, …, σ_{L-1}, α_1, …, α_{L-2}), the activations by name and the skips as the
paper's 0/1 bits; its text is one token per hidden layer, ``+skip`` marking a skipped one::

    relu|tanh+skip|swish        (L = 4: σ = relu, tanh, swish; α = 1, 0)

The depth and the two activation settings the paper leaves open (LeakyReLU slope η,
whether the sigmoid is shifted to σ(0) = 0) are space options, so a network, its supernet
and its infinite-width kernel always agree on them.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import ClassVar

import torch

from nasforge import Chooser, DeclaredSpace, Genotype, InvalidGenotypeError
from nasforge_eigennas.activations import ACTIVATIONS, ActivationSet
from nasforge_eigennas.bounds import Bounds, theorem1, theorem2
from nasforge_eigennas.kernel_recursion import Variant, ntk_diagonal
from nasforge_eigennas.network import Activation, MLPNetwork, NoSkip, Skip

SPACE_NAME = "mlp-res"
SKIP_MARK = "+skip"
MAX_DEPTH = 64
#: A skip's candidates: its bit (the genotype's token) and its module.
SKIPS = {0: NoSkip, 1: Skip}


class MLPResSpace(DeclaredSpace):
    """Activation and skip-connection search over a depth-``depth`` MLP (Eigen-NAS, Eq. 1).

    A declaration (:mod:`nasforge.kernel.declared_space`): each hidden layer's activation is
    a layer choice among the five (rows of the supernet's cell ``activation``, after the
    layer's one linear map), then each skip a layer choice of no skip (the zero op) or the
    identity (rows of the cell ``skip``), so sampling, moves, decisions, size, enumeration,
    ``build`` and the supernet are derived: the supernet mixes each layer's activations and
    each skip on its own, as the paper's one-shot search does ("independently", §5.1). The
    space keeps its own text form and its encoding (skip bits as they are).
    """

    name: ClassVar[str] = SPACE_NAME
    version: ClassVar[str] = "1"
    op_names: ClassVar[tuple[str, ...]] = ACTIVATIONS

    def __init__(self, *, depth: int = 4, leaky_slope: float = 0.01, shifted_sigmoid: bool = True) -> None:
        """``depth`` is the paper's L (hidden layers + output layer), at least 3."""
        if isinstance(depth, bool) or not isinstance(depth, int) or not 3 <= depth <= MAX_DEPTH:
            raise ValueError(f"depth must be an integer in [3, {MAX_DEPTH}], got {depth!r}")
        self.depth = depth
        self.acts = ActivationSet(leaky_slope=leaky_slope, shifted_sigmoid=shifted_sigmoid)

    @property
    def hidden(self) -> int:
        return self.depth - 1

    def declare(
        self,
        c: Chooser,
        *,
        width: int = 128,
        num_classes: int = 10,
        in_channels: int = 1,
        input_size: int = 8,
        in_features: int | None = None,
        parameterisation: str = "ntk",
        normalize_input: bool = True,
    ) -> MLPNetwork:
        """The network of the chosen activations and skips; the defaults fit sklearn digits
        (1x8x8, 10 classes). ``parameterisation``: "ntk" (P*, whose infinite-width NTK is the
        kernel recursion), "standard" (the paper's N(0, 1/m)) or "torch" (PyTorch's Linear
        initialisation)."""
        candidates = {a: partial(Activation, a, self.acts) for a in ACTIVATIONS}
        acts = [c.layer(f"layer{k}.activation", candidates, cell="activation") for k in range(1, self.depth)]
        skips = [c.layer(f"layer{k}.skip", SKIPS, cell="skip", zero=0, skip=1) for k in range(2, self.depth)]
        return MLPNetwork(
            acts,
            skips,
            width=width,
            num_classes=num_classes,
            in_channels=in_channels,
            input_size=input_size,
            in_features=in_features,
            parameterisation=parameterisation,
            normalize_input=normalize_input,
        )

    def split(self, g: Genotype) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """(σ_1..σ_{L-1}, α_1..α_{L-2}) of a genotype of this space."""
        self.validate(g)
        return tuple(map(str, g.choices[: self.hidden])), tuple(int(b) for b in g.choices[self.hidden :])

    def from_parts(self, activations: Sequence[str], skips: Sequence[int]) -> Genotype:
        return self.genotype([*activations, *(int(b) for b in skips)])

    # --- its own text form and encoding ---------------------------------------------
    def format(self, g: Genotype) -> str:
        acts, skips = self.split(g)
        marks = ("", *(SKIP_MARK if b else "" for b in skips))
        return "|".join(a + m for a, m in zip(acts, marks, strict=True))

    def parse(self, text: str) -> Genotype:
        if not isinstance(text, str):
            raise InvalidGenotypeError(f"an {self.name} genotype is text, got {type(text).__name__}")
        parts = [p.strip() for p in text.strip().split("|")]
        if len(parts) != self.hidden:
            raise InvalidGenotypeError(
                f"a depth-{self.depth} {self.name} genotype has {self.hidden} '|'-separated layers "
                f"such as 'relu|tanh+skip|swish', got {text!r}"
            )
        acts, skips = [], []
        for layer, part in enumerate(parts, start=1):
            skipped = part.endswith(SKIP_MARK)
            name = part[: -len(SKIP_MARK)] if skipped else part
            if skipped and layer == 1:
                raise InvalidGenotypeError(
                    f"layer 1 has no skip (its input is not {self.name}-wide): {text!r}"
                )
            if name not in ACTIVATIONS:
                raise InvalidGenotypeError(
                    f"layer {layer}: unknown activation {name!r}; expected one of {', '.join(ACTIVATIONS)}"
                )
            acts.append(name)
            if layer >= 2:
                skips.append(int(skipped))
        return self.from_parts(acts, skips)

    def encode(self, g: Genotype) -> torch.Tensor:
        """One-hot activations ((L-1) x 5, layer-major) followed by the L-2 skip bits."""
        acts, skips = self.split(g)
        onehot = torch.zeros(self.hidden, len(ACTIVATIONS))
        for layer, a in enumerate(acts):
            onehot[layer, ACTIVATIONS.index(a)] = 1.0
        return torch.cat([onehot.flatten(), torch.tensor(skips, dtype=torch.float32)])

    def decode(self, x: torch.Tensor) -> Genotype:
        """Per-layer arg-max activation (ties to the first) and skips above 1/2."""
        n_act = self.hidden * len(ACTIVATIONS)
        if not isinstance(x, torch.Tensor) or x.numel() != n_act + self.hidden - 1:
            got = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise InvalidGenotypeError(
                f"a depth-{self.depth} {self.name} encoding has {n_act + self.hidden - 1} values, got {got}"
            )
        if not torch.isfinite(x).all():
            raise InvalidGenotypeError(f"an {self.name} encoding must be finite")
        flat = x.detach().flatten()
        idx = flat[:n_act].reshape(self.hidden, len(ACTIVATIONS)).argmax(dim=1).tolist()
        bits = (flat[n_act:] > 0.5).long().tolist()
        return self.from_parts([ACTIVATIONS[i] for i in idx], bits)

    # --- theory ---------------------------------------------------------------------
    def ntk_diagonal(self, g: Genotype, *, variant: Variant = "exact") -> float:
        """Infinite-width K_ii of ``g`` (unit-norm inputs): the data-free trace score."""
        acts, skips = self.split(g)
        return ntk_diagonal(acts, skips, variant=variant, acts=self.acts)

    def theorem1(self, g: Genotype) -> Bounds:
        acts, skips = self.split(g)
        return theorem1(acts, skips, acts=self.acts)

    def theorem2(self, g: Genotype) -> Bounds:
        acts, skips = self.split(g)
        return theorem2(acts, skips, acts=self.acts)

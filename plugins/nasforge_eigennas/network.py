"""The network of Eq. (1): a depth-L MLP with per-layer activations and one-layer identity skips.

    f_1 = σ_1(c_1 W_1 x),  f_l = σ_l(c_l W_l f_{l-1}) + α_{l-1} f_{l-1}  (2 ≤ l ≤ L-1),  out = c_L W_L f_{L-1}

No biases, equal hidden widths m (identity skips need them), a skip bypassing one linear
map and one activation (Remark (i) after Lemma 1). The output is ``num_classes`` wide: the
theory's scalar output is ``num_classes=1``.

Parameterisations (our choice, and why): the paper's N(0, 1/m) for every layer does not
produce the kernel of its own Lemma 1, so the default is P* (``"ntk"``): N(0, 1) weights,
c_1 = 1 on unit-norm inputs and c_l = √(2/m) after, whose width limit is exactly the
recursion of :mod:`nasforge_eigennas.kernel_recursion`. ``"standard"`` is the paper's
literal N(0, 1/m) without multipliers, ``"torch"`` PyTorch's default Linear initialisation.

Inputs: Assumption 1 puts every input on the unit sphere, so the network normalises its
(flattened) input unless ``normalize_input=False``. Image inputs are average-pooled to
``input_size`` x ``input_size`` first (identity when they already are, e.g. sklearn digits
8x8), so one genotype builds a network for digits, for 3x32x32 Gaussian batches of a
data-agnostic score, or for whatever shape an export is asked for; ``in_features`` instead
fixes a flat feature count (tabular data).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from nasforge_eigennas.activations import DEFAULT_ACTIVATIONS, ActivationSet, check_activation

Parameterisation = Literal["ntk", "standard", "torch"]
PARAMETERISATIONS: tuple[str, ...] = ("ntk", "standard", "torch")


class InputAdapter(nn.Module):
    """Pool images to the trained size, flatten, normalise to unit norm (Assumption 1)."""

    def __init__(self, in_features: int, input_size: int | None, normalize: bool) -> None:
        super().__init__()
        self.in_features, self.input_size, self.normalize = in_features, input_size, normalize

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = self.input_size
        tracing = torch.jit.is_tracing()  # an export fixes the shapes: no Python branch on them
        if s is not None and x.dim() == 4 and (tracing or tuple(x.shape[-2:]) != (s, s)):
            x = F.adaptive_avg_pool2d(x, s)  # the identity at s x s
        x = x.flatten(1)
        if not tracing and x.shape[1] != self.in_features:
            raise ValueError(f"the network takes {self.in_features} input features, got {x.shape[1]}")
        if self.normalize:
            x = x / x.norm(dim=1, keepdim=True).clamp_min(1e-12)
        return x


class MLPTrunk(nn.Module):
    """Linear maps, multipliers and head of the network; the activations are the caller's."""

    def __init__(
        self,
        depth: int,
        *,
        width: int,
        num_classes: int,
        in_channels: int,
        input_size: int,
        in_features: int | None,
        parameterisation: str,
        normalize_input: bool,
    ) -> None:
        super().__init__()
        for name, value, low in (
            ("depth", depth, 3),
            ("width", width, 1),
            ("num_classes", num_classes, 1),
            ("in_channels", in_channels, 1),
            ("input_size", input_size, 1),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
        if in_features is not None and (isinstance(in_features, bool) or not isinstance(in_features, int)):
            raise ValueError(f"in_features must be a positive integer or None, got {in_features!r}")
        if in_features is not None and in_features < 1:
            raise ValueError(f"in_features must be a positive integer or None, got {in_features!r}")
        if parameterisation not in PARAMETERISATIONS:
            raise ValueError(f"parameterisation must be one of {PARAMETERISATIONS}, got {parameterisation!r}")
        d = in_features if in_features is not None else in_channels * input_size * input_size
        self.depth, self.width, self.parameterisation = depth, width, parameterisation
        self.adapter = InputAdapter(d, None if in_features is not None else input_size, normalize_input)
        dims = [d] + [width] * (depth - 1)
        self.hidden = nn.ModuleList(nn.Linear(dims[i], dims[i + 1], bias=False) for i in range(depth - 1))
        self.head = nn.Linear(width, num_classes, bias=False)
        self.scales = self._init(d, normalize_input)

    def _init(self, d: int, unit_inputs: bool) -> tuple[float, ...]:
        """Draw the weights; return the multipliers c_1..c_L (as floats: nothing to train)."""
        layers = [*self.hidden, self.head]
        if self.parameterisation == "ntk":
            for layer in layers:
                nn.init.normal_(layer.weight)
            first = 1.0 if unit_inputs else 1.0 / math.sqrt(d)
            return (first, *[math.sqrt(2.0 / self.width)] * (len(layers) - 1))
        if self.parameterisation == "standard":
            for layer in layers:
                nn.init.normal_(layer.weight, std=1.0 / math.sqrt(self.width))
        return (1.0,) * len(layers)  # "torch": nn.Linear's own initialisation

    def linear(self, layer: int, f: torch.Tensor) -> torch.Tensor:
        """c_l W_l f (1-based layer l = 1..L-1)."""
        out = self.hidden[layer - 1](f)
        scale = self.scales[layer - 1]
        return out if scale == 1.0 else out * scale

    def output(self, f: torch.Tensor) -> torch.Tensor:
        out = self.head(f)
        scale = self.scales[-1]
        return out if scale == 1.0 else out * scale


class Activation(nn.Module):
    """σ as a module: a candidate of a hidden layer's activation choice."""

    def __init__(self, name: str, acts: ActivationSet = DEFAULT_ACTIVATIONS) -> None:
        super().__init__()
        self.name, self.acts = check_activation(name), acts
        self._fn: Callable[[torch.Tensor], torch.Tensor] = acts.torch_fn(name)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self._fn(z)

    def extra_repr(self) -> str:
        return self.name


class Skip(nn.Identity):
    """α = 1: the layer's input f_{l-1} added to its output."""


class NoSkip(nn.Module):
    """α = 0: nothing added (zeros, for a supernet that mixes it with the skip; the network
    of the genotype leaves the addition out)."""

    def forward(self, f: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(f)


class MLPNetwork(nn.Module):
    """Eq. (1) with the given σ_1..σ_{L-1} and skips around layers 2..L-1, as modules: the
    chosen ones (:class:`Activation`, :class:`Skip` or :class:`NoSkip`) in the network of
    one architecture, their mixtures in the supernet the declaration derives."""

    def __init__(
        self,
        activations: Sequence[nn.Module],
        skips: Sequence[nn.Module],
        *,
        width: int = 128,
        num_classes: int = 10,
        in_channels: int = 1,
        input_size: int = 8,
        in_features: int | None = None,
        parameterisation: str = "ntk",
        normalize_input: bool = True,
    ) -> None:
        super().__init__()
        if len(activations) < 2 or len(skips) != len(activations) - 1:
            raise ValueError(
                f"the network takes L-1 >= 2 activations and L-2 skips, got {len(activations)} and "
                f"{len(skips)}"
            )
        self.trunk = MLPTrunk(
            len(activations) + 1,
            width=width,
            num_classes=num_classes,
            in_channels=in_channels,
            input_size=input_size,
            in_features=in_features,
            parameterisation=parameterisation,
            normalize_input=normalize_input,
        )
        self.act = nn.ModuleList(activations)
        self.skip = nn.ModuleList(skips)
        self._adds = [not isinstance(s, NoSkip) for s in skips]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        f = self.trunk.adapter(x)
        for layer, act in enumerate(self.act, start=1):
            out = act(self.trunk.linear(layer, f))
            f = out + self.skip[layer - 2](f) if layer >= 2 and self._adds[layer - 2] else out
        return self.trunk.output(f)

    def architecture(self) -> tuple[tuple[str, ...], tuple[int, ...], ActivationSet] | None:
        """(σ_1..σ_{L-1}, α_1..α_{L-2}, the activations' settings) of the network of one
        architecture; None for a supernet's network of mixtures."""
        acts = [a for a in self.act if isinstance(a, Activation)]
        if len(acts) != len(self.act) or not all(isinstance(s, Skip | NoSkip) for s in self.skip):
            return None
        return tuple(a.name for a in acts), tuple(int(isinstance(s, Skip)) for s in self.skip), acts[0].acts

"""The candidate activations of a mixed-activation layer, by name.

One library serves the ``act-mlp`` space, its supernet and the paper's two-layer setting
(:mod:`nasforge_simplex.two_layer`), so "relu" means the same function in a search, an
exported network and a diagnostic fixture. Every entry is an ``nn.Module`` built from
ops ONNX exports (swish is ``nn.SiLU``), because a searched network must export.

LeakyReLU's slope is a parameter, not a constant: the paper fixes none; PyTorch's default
0.01 is the space's default, while our test fixtures use 0.1 (our choice; the paper fixes no
slope). Either way leaky_relu is a near-duplicate of relu, the case the diagnostic warns about.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from nasforge.kernel.errors import NasforgeError

_FACTORIES: dict[str, Callable[[float], nn.Module]] = {
    "relu": lambda slope: nn.ReLU(),
    "tanh": lambda slope: nn.Tanh(),
    "leaky_relu": lambda slope: nn.LeakyReLU(slope),
    "sigmoid": lambda slope: nn.Sigmoid(),
    "swish": lambda slope: nn.SiLU(),
    "elu": lambda slope: nn.ELU(),
    "softplus": lambda slope: nn.Softplus(),
    "gelu": lambda slope: nn.GELU(),
    "identity": lambda slope: nn.Identity(),
}

#: Every activation a layer may pick, in a fixed order (the space's ``op_names``).
ACTIVATIONS: tuple[str, ...] = tuple(_FACTORIES)
#: The default candidate set, {ReLU, LeakyReLU, Sigmoid, Tanh, Swish}; the paper fixes none.
DEFAULT_OPS: tuple[str, ...] = ("relu", "tanh", "leaky_relu", "sigmoid", "swish")
#: PyTorch's LeakyReLU slope, the space's default.
DEFAULT_NEGATIVE_SLOPE = 0.01


class UnknownActivationError(NasforgeError):
    """A candidate set names an activation this library lacks (one line, exit 2)."""


def check_ops(ops: tuple[str, ...], *, owner: str = "candidate set") -> tuple[str, ...]:
    """``ops`` as a tuple of known, distinct names, at least two (else nothing to search)."""
    ops = tuple(ops)
    unknown = [op for op in ops if op not in _FACTORIES]
    if unknown:
        raise UnknownActivationError(
            f"{owner}: unknown activation(s) {unknown}; choose from {', '.join(ACTIVATIONS)}"
        )
    if len(set(ops)) != len(ops):
        raise UnknownActivationError(f"{owner}: activations must be distinct, got {list(ops)}")
    if len(ops) < 2:
        raise UnknownActivationError(f"{owner}: needs at least two activations, got {list(ops)}")
    return ops


def make_activation(name: str, *, negative_slope: float = DEFAULT_NEGATIVE_SLOPE) -> nn.Module:
    """A fresh module computing activation ``name`` (parameter-free)."""
    try:
        factory = _FACTORIES[name]
    except KeyError:
        raise UnknownActivationError(
            f"unknown activation {name!r}; choose from {', '.join(ACTIVATIONS)}"
        ) from None
    return factory(float(negative_slope))


def apply_activation(
    name: str, z: torch.Tensor, *, negative_slope: float = DEFAULT_NEGATIVE_SLOPE
) -> torch.Tensor:
    """``name`` applied to ``z`` elementwise (any dtype; the fixtures run in float64)."""
    return make_activation(name, negative_slope=negative_slope)(z)

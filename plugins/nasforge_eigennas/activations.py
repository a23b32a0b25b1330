"""The five candidate activations of Eigen-NAS (Table 1), as torch functions and numpy maps.

One definition serves the network, the supernet and the kernel recursion, so the kernel
that predicts a network's NTK is computed from the very functions the network applies.
The theory uses the *shifted* sigmoid (σ(0) = 0, "facilitates our theoretical analysis"),
and LeakyReLU's slope η is not given in the paper; both are settings of an
:class:`ActivationSet`, with our choices where Zhu et al. leave it open (shifted, η = 0.01)
as defaults.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import numpy as np
import torch
from attrs import validators as v

RELU = "relu"
LEAKY_RELU = "leaky_relu"
SIGMOID = "sigmoid"
TANH = "tanh"
SWISH = "swish"

#: The search space's activation choices, in Table 1's order.
ACTIVATIONS: tuple[str, ...] = (RELU, LEAKY_RELU, SIGMOID, TANH, SWISH)
#: Activations whose kernels have closed forms (piecewise linear; Gauss-Hermite is poor at a kink).
PIECEWISE_LINEAR = frozenset({RELU, LEAKY_RELU})

NumpyMap = Callable[[np.ndarray], np.ndarray]


def _np_sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # overflow-free logistic


@attrs.frozen
class ActivationSet:
    """The activations with their two free settings (LeakyReLU slope, sigmoid shift)."""

    leaky_slope: float = attrs.field(default=0.01, converter=float, validator=[v.ge(0.0), v.lt(1.0)])
    shifted_sigmoid: bool = attrs.field(default=True, validator=v.instance_of(bool))

    # --- torch ------------------------------------------------------------------------
    def torch_fn(self, name: str) -> Callable[[torch.Tensor], torch.Tensor]:
        """The activation as a torch function (exportable to ONNX)."""
        check_activation(name)
        eta = self.leaky_slope
        shift = 0.5 if self.shifted_sigmoid else 0.0
        table: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
            RELU: torch.relu,
            LEAKY_RELU: lambda z: torch.nn.functional.leaky_relu(z, eta),
            SIGMOID: (lambda z: torch.sigmoid(z) - shift) if shift else torch.sigmoid,
            TANH: torch.tanh,
            SWISH: torch.nn.functional.silu,
        }
        return table[name]

    # --- numpy (the kernel recursion and the constants) ----------------------------------
    def value(self, name: str) -> NumpyMap:
        """σ as a numpy map."""
        check_activation(name)
        eta = self.leaky_slope
        shift = 0.5 if self.shifted_sigmoid else 0.0
        table: dict[str, NumpyMap] = {
            RELU: lambda z: np.maximum(z, 0.0),
            LEAKY_RELU: lambda z: np.where(z > 0, z, eta * z),
            SIGMOID: lambda z: _np_sigmoid(z) - shift,
            TANH: np.tanh,
            SWISH: lambda z: z * _np_sigmoid(z),
        }
        return table[name]

    def derivative(self, name: str) -> NumpyMap:
        """σ′ as a numpy map (ReLU's at 0 is 0, a null set under any Gaussian)."""
        check_activation(name)
        eta = self.leaky_slope

        def swish_prime(z: np.ndarray) -> np.ndarray:
            s = _np_sigmoid(z)
            return s + z * s * (1.0 - s)

        table: dict[str, NumpyMap] = {
            RELU: lambda z: (z > 0).astype(np.float64),
            LEAKY_RELU: lambda z: np.where(z > 0, 1.0, eta),
            SIGMOID: lambda z: _np_sigmoid(z) * (1.0 - _np_sigmoid(z)),
            TANH: lambda z: 1.0 - np.tanh(z) ** 2,
            SWISH: swish_prime,
        }
        return table[name]


DEFAULT_ACTIVATIONS = ActivationSet()


def check_activation(name: object) -> str:
    """``name`` if it is one of :data:`ACTIVATIONS`, else a ValueError naming them."""
    if name not in ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; expected one of {', '.join(ACTIVATIONS)}")
    return str(name)

"""Per-sample gradients of one layer's own parameters, from what the layer saw and got back.

A Conv, Linear or BatchNorm layer's per-sample parameter gradient is a small product of its
input ``a`` (BatchNorm: the normalised input x̂) and the gradient ``δ`` that came back to its
output, so one forward and one backward per output cotangent give every sample's gradient
without a backward per sample and without the Jacobian of the whole network (the identities
BackPACK's BatchGrad and Opacus's grad samples use):

- Linear ``y = a Wᵀ + b``: ∂y/∂W = Σ_t δ_t a_tᵀ and ∂y/∂b = Σ_t δ_t, t over any dims
  between the batch and the features;
- Conv ``y = W ⋆ a + b``: ∂y/∂W = δ Uᵀ per group, U the unfolded (im2col) padded input;
  ∂y/∂b = Σ_l δ_l over output positions;
- BatchNorm ``y = γ x̂ + β``: ∂y/∂γ = Σ_s δ_s x̂_s and ∂y/∂β = Σ_s δ_s per channel, s over
  positions, x̂ normalised as the forward normalised it.

Each function takes ``δ`` of shape ``(n, B, *out)`` (B output cotangents of n samples) and
returns ``(n, B, ...)``: [i, b] the gradient of sample i's b-th cotangent, its elements in
the parameter's order (possibly a strided view: the callers only reduce it). A layer type
not listed here has no identity (:func:`has_identity`); the callers take an exact path for
its parameters instead.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.conv import _ConvNd

#: Whether a 2-d conv's patches come from torch's im2col (``F.unfold``); False takes the
#: strided slices every conv can take (a benchmark compares the two in one run).
IM2COL = True


def has_identity(module: nn.Module) -> bool:
    """Whether this module's own parameters have a per-sample identity here."""
    if isinstance(module, _ConvNd):
        return not module.transposed
    return isinstance(module, nn.Linear | _BatchNorm)


def normalised_input(module: _BatchNorm, a: torch.Tensor, *, per_sample: bool) -> torch.Tensor:
    """x̂ as the forward computed it: each sample's own statistics (``per_sample``), or the
    running statistics of an evaluating BatchNorm."""
    if per_sample:
        return F.instance_norm(a, eps=module.eps)
    if module.running_mean is None or module.running_var is None:
        raise ValueError("a BatchNorm without running statistics normalises by batch statistics")
    return F.batch_norm(a, module.running_mean, module.running_var, training=False, eps=module.eps)


def unfold(module: _ConvNd, a: torch.Tensor, out_shape: tuple[int, ...]) -> torch.Tensor:
    """The ``(n, C_in·prod(kernel), L)`` patches of ``a`` the conv multiplied its weight with,
    one column per output position.

    Padded as the module pads (zeros or its padding mode), then one strided slice per kernel
    offset: any dimension, stride, dilation, asymmetric 'same' padding.
    """
    n, c = a.shape[:2]
    if IM2COL and a.dim() == 4 and module.padding_mode == "zeros" and isinstance(module.padding, tuple):
        # a 2-d conv padded alike on both sides: torch's own im2col, one pass (the slices
        # below copy the padded input once per kernel offset, then once more to stack)
        return F.unfold(a, module.kernel_size, module.dilation, module.padding, module.stride)
    pad = module._reversed_padding_repeated_twice
    if any(pad):
        mode = "constant" if module.padding_mode == "zeros" else module.padding_mode
        a = F.pad(a, pad, mode=mode)
    ks, st, dl = module.kernel_size, module.stride, module.dilation
    if all(k == 1 for k in ks) and all(s == 1 for s in st):
        return a.reshape(n, c, -1)
    slices = []
    for offset in itertools.product(*(range(k) for k in ks)):
        index: tuple[slice, ...] = tuple(
            slice(o * d, o * d + s * (size - 1) + 1, s)
            for o, d, s, size in zip(offset, dl, st, out_shape, strict=True)
        )
        key: tuple[Any, ...] = (..., *index)
        slices.append(a[key])
    patches = torch.stack(slices, dim=2)  # (n, C_in, K, *out)
    return patches.reshape(n, c * len(slices), math.prod(out_shape))


def prepare(module: nn.Module, a: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """What :func:`layer_grads` multiplies the output gradient with, for one call of ``module``
    on input ``a`` giving ``out``: formed once per call, shared by every cotangent.

    A BatchNorm without running statistics (train mode under the backends' BatchNorm modes)
    was forwarded sample by sample, so its x̂ is each sample's own.
    """
    a = a.detach()
    if isinstance(module, _BatchNorm):
        return normalised_input(module, a, per_sample=module.running_mean is None)
    if isinstance(module, _ConvNd):
        return unfold(module, a, tuple(out.shape[2:]))
    return a


def _linear(a: torch.Tensor, delta: torch.Tensor, name: str) -> torch.Tensor:
    n, b = delta.shape[:2]
    d = delta.reshape(n, b, -1, delta.shape[-1])  # (n, B, T, out)
    if name == "bias":
        return d.sum(2)
    x = a.reshape(n, -1, a.shape[-1])  # (n, T, in)
    if x.shape[1] == 1:
        return (d[:, :, 0, :, None] * x[:, None, 0, None, :]).reshape(n, b, -1)
    # (n, B·out, T) @ (n, T, in)
    prod = torch.bmm(d.transpose(2, 3).reshape(n, -1, x.shape[1]), x)
    return prod.reshape(n, b, -1)


def _conv(module: _ConvNd, u: torch.Tensor, delta: torch.Tensor, name: str) -> torch.Tensor:
    n, b, c_out = delta.shape[:3]
    d = delta.reshape(n, b, c_out, -1)  # (n, B, C_out, L)
    if name == "bias":
        return d.sum(-1)
    g = module.groups
    length = d.shape[-1]
    if g == 1:
        # (n, C_in·K, L) @ (n, L, B·C_out): the patches on the left read fastest as unfolded
        prod = torch.bmm(u, d.reshape(n, b * c_out, length).transpose(1, 2))
        return prod.reshape(n, -1, b, c_out).permute(0, 2, 3, 1)  # (n, B, C_out, C_in·K)
    u = u.reshape(n, g, -1, length)  # (n, G, C_in/G·K, L)
    d = d.reshape(n, b, g, c_out // g, length).permute(0, 2, 4, 1, 3).reshape(n, g, length, -1)
    prod = torch.matmul(u, d)  # (n, G, C_in/G·K, B·C_out/G)
    prod = prod.reshape(n, g, -1, b, c_out // g).permute(0, 3, 1, 4, 2)  # (n, B, G, C_out/G, C_in/G·K)
    return prod.reshape(n, b, c_out, -1)


def _batch_norm(x_hat: torch.Tensor, delta: torch.Tensor, name: str) -> torch.Tensor:
    n, b, c = delta.shape[:3]
    d = delta.reshape(n, b, c, -1)
    if name == "bias":
        return d.sum(-1)
    return (d * x_hat.reshape(n, 1, c, -1)).sum(-1)


def layer_grads(module: nn.Module, operand: torch.Tensor, delta: torch.Tensor, name: str) -> torch.Tensor:
    """Per-sample gradients ``(n, B, ...)`` of ``module``'s parameter ``name`` (weight or
    bias) for one call; ``operand`` is :func:`prepare`'s for the call, ``delta`` ``(n, B, *out)``.
    """
    if isinstance(module, nn.Linear):
        return _linear(operand, delta, name)
    if isinstance(module, _ConvNd) and not module.transposed:
        return _conv(module, operand, delta, name)
    if isinstance(module, _BatchNorm):
        return _batch_norm(operand, delta, name)
    raise TypeError(f"no per-sample identity for {type(module).__name__}")

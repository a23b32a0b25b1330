"""Helpers for the zero-cost tests: tiny NAS-Bench-201 nets and reference formulas.

The reference formulas are written the plain way (``.backward()``, ``.grad``, module
surgery on a deep copy), independent of the shared-pass machinery they check.
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn

from nasforge.kernel.registry import get_registry

TINY = {"C": 4, "N": 1, "num_classes": 10}


class Opaque(nn.Module):
    """``inner`` with nothing but its forward: hides a network's promises and closed forms
    (``nasforge_monotone``, ``forward_flops``), so metrics take their general path on it."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x)


def nb201():
    return get_registry().space("nb201")


def tiny_net(arch: str, seed: int = 0) -> nn.Module:
    space = nb201()
    torch.manual_seed(seed)
    return space.build(space.parse(arch), **TINY).train()


def batch(n: int = 8, seed: int = 0, hw: int = 8) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(n, 3, hw, hw, generator=gen), torch.randint(0, 10, (n,), generator=gen)


def layers(model: nn.Module) -> list[nn.Module]:
    return [m for m in model.modules() if isinstance(m, nn.Conv2d | nn.Linear)]


def ref_grad_snip(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    model.zero_grad()
    F.cross_entropy(model(x), y).backward()
    used = [m for m in layers(model) if m.weight.grad is not None]
    gn = sum(float(m.weight.grad.norm()) for m in used)
    sn = sum(float((m.weight.detach() * m.weight.grad).abs().sum()) for m in used)
    return gn, sn


def ref_grasp(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    """The zero-cost two-pass algorithm: detached g, then backward of g . grad(L)."""
    ws = [m.weight for m in layers(model)]
    g = torch.autograd.grad(F.cross_entropy(model(x), y), ws, allow_unused=True)
    g = [torch.zeros_like(w) if gi is None else gi.detach() for w, gi in zip(ws, g, strict=True)]
    gf = torch.autograd.grad(F.cross_entropy(model(x), y), ws, create_graph=True, allow_unused=True)
    z = sum((a * b).sum() for a, b in zip(gf, g, strict=True) if a is not None)
    hg = torch.autograd.grad(z, ws, allow_unused=True)
    return sum(float((-w.detach() * h).sum()) for w, h in zip(ws, hg, strict=True) if h is not None)


def ref_fisher(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    acts: list[torch.Tensor] = []

    def keep(_m: nn.Module, _i: object, out: torch.Tensor) -> None:
        out.retain_grad()
        acts.append(out)

    hooks = [m.register_forward_hook(keep) for m in layers(model)]
    loss = F.cross_entropy(model(x), y)
    for h in hooks:
        h.remove()
    loss.backward()
    total = 0.0
    for a in acts:
        p = a * a.grad
        p = p.sum(dim=(2, 3)) if p.ndim == 4 else p
        total += float(0.5 * p.detach().pow(2).mean(0).sum())
    return total


def ref_synflow(model: nn.Module, shape: tuple[int, ...]) -> float:
    net = copy.deepcopy(model).double()
    for mod in list(net.modules()):
        for cname, child in list(mod.named_children()):
            if isinstance(child, nn.BatchNorm2d):
                setattr(mod, cname, nn.Identity())
    with torch.no_grad():
        for p in net.parameters():
            p.abs_()
    net.zero_grad()
    net(torch.ones((1, *shape), dtype=torch.float64)).sum().backward()
    used = [m for m in layers(net) if m.weight.grad is not None]
    return sum(float((m.weight.detach() * m.weight.grad).abs().sum()) for m in used)


def ref_jacob_cov(model: nn.Module, x: torch.Tensor) -> float:
    import numpy as np

    x = x.clone().requires_grad_(True)
    model(x).sum().backward()
    jac = x.grad.reshape(len(x), -1).numpy().astype(np.float64)
    v = np.linalg.eigvalsh(np.corrcoef(jac))
    k = 1e-5
    return float(-np.sum(np.log(v + k) + 1.0 / (v + k)))


def ref_naswot(model: nn.Module, x: torch.Tensor) -> float:
    n = len(x)
    K = torch.zeros(n, n, dtype=torch.float64)

    def tap(_m: nn.Module, inp: tuple[torch.Tensor, ...]) -> None:
        c = (inp[0] > 0).reshape(n, -1).double()
        hamming = c @ (1 - c).T + (1 - c) @ c.T
        K.add_(c.shape[1] - hamming)

    hooks = [m.register_forward_pre_hook(tap) for m in model.modules() if isinstance(m, nn.ReLU)]
    with torch.no_grad():
        model(x)
    for h in hooks:
        h.remove()
    return float(torch.linalg.slogdet(K)[1])

"""Independent reimplementations of the papers' reference code, for the preset tests.

Each follows the published code's own algorithm, written the plain way (module hooks,
``.backward()``, ``.grad``, explicit loops), sharing nothing with the torch.func backends
or the shared-pass scorer they check:

- :func:`zero_cost_fisher`: zero-cost-nas ``fisher`` (hook on each Conv/Linear output,
  ``del_k = ½·mean_n(Σ_spatial act·grad)²``, broadcast over each channel's weights by
  ``reshape_elements``, everything summed);
- :func:`tenas_kernel`: TE-NAS ``get_ntk_n`` (one ``logit[i].backward(ones)`` per sample
  through the train-mode batch, ``'weight' in name`` gradients, Θ = G Gᵀ);
- :func:`hnas_kernel`: the HNAS code's NTK (autograd-hacks ``compute_grad1`` after one
  backward of Σ_i logit_{y_i}: back-prop ⊗ activation per Conv/Linear weight and bias);
- :func:`nasi_proxy`: NASI eq. 12, ‖∇_θ mean CE‖² in train mode;
- :func:`notebook_vote`: the zero-cost notebook's pairwise "vote", its double loop.
"""

from __future__ import annotations

import copy

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def zero_cost_fisher(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    """(published fisher, the same channel values each counted once)."""
    net = copy.deepcopy(model).train()
    layers = [m for m in net.modules() if isinstance(m, nn.Conv2d | nn.Linear)]
    fisher: dict[nn.Module, torch.Tensor] = {}
    acts: list[tuple[nn.Module, torch.Tensor]] = []

    def keep(layer: nn.Module, _inp: object, out: torch.Tensor) -> None:
        out.retain_grad()
        acts.append((layer, out))

    hooks = [m.register_forward_hook(keep) for m in layers]
    net.zero_grad()
    F.cross_entropy(net(x), y).backward()
    for h in hooks:
        h.remove()
    for layer, act in acts:
        a, g = act.detach(), act.grad.detach()
        g_nk = torch.sum(a * g, list(range(2, a.ndim))) if a.ndim > 2 else a * g
        del_k = g_nk.pow(2).mean(0).mul(0.5)
        fisher[layer] = fisher[layer] + del_k if layer in fisher else del_k
    published = channel = 0.0
    for layer in layers:
        values = torch.abs(fisher[layer]) if layer in fisher else torch.zeros(layer.weight.shape[0])
        shape = layer.weight.shape[1:]
        broadcast = torch.stack([torch.Tensor(shape).fill_(float(v)) for v in values], dim=0)
        published += float(torch.sum(broadcast))
        channel += float(values.sum())
    return published, channel


def tenas_kernel(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    net = copy.deepcopy(model).train()
    net.zero_grad()
    logit = net(x)
    rows = []
    for i in range(len(x)):
        logit[i : i + 1].backward(torch.ones_like(logit[i : i + 1]), retain_graph=True)
        grad = [
            w.grad.view(-1).detach().clone()
            for name, w in net.named_parameters()
            if "weight" in name and w.grad is not None
        ]
        rows.append(torch.cat(grad, -1))
        net.zero_grad()
    grads = torch.stack(rows, 0)
    return torch.einsum("nc,mc->nm", grads, grads)


def hnas_kernel(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    net = copy.deepcopy(model).train()
    layers = [m for m in net.modules() if type(m).__name__ in ("Conv2d", "Linear")]
    acts: dict[nn.Module, torch.Tensor] = {}
    backprops: dict[nn.Module, torch.Tensor] = {}

    def forward_tap(layer: nn.Module, inp: tuple[torch.Tensor, ...], _out: torch.Tensor) -> None:
        acts[layer] = inp[0].detach()

    def backward_tap(layer: nn.Module, _gin: object, gout: tuple[torch.Tensor, ...]) -> None:
        backprops[layer] = gout[0].detach()

    hooks = [m.register_forward_hook(forward_tap) for m in layers]
    hooks += [m.register_full_backward_hook(backward_tap) for m in layers]
    out = net(x.detach().requires_grad_(True))  # an input that asks for a gradient: every hook fires
    out.gather(1, y[:, None]).sum().backward()  # Σ_i f_i, loss_type "sum"
    for h in hooks:
        h.remove()
    n = len(x)
    per_param: list[torch.Tensor] = []
    for layer in layers:
        if layer not in acts:  # never ran
            per_param.append(torch.zeros(n, layer.weight.numel(), dtype=x.dtype))
            if layer.bias is not None:
                per_param.append(torch.zeros(n, layer.bias.numel(), dtype=x.dtype))
            continue
        A, B = acts[layer], backprops[layer]
        if isinstance(layer, nn.Linear):
            w = torch.einsum("ni,nj->nij", B, A)
            b = B
        else:
            A = F.unfold(
                A, layer.kernel_size, dilation=layer.dilation, padding=layer.padding, stride=layer.stride
            )
            B = B.reshape(n, -1, A.shape[-1])
            g = layer.groups
            w = torch.einsum(
                "icjk,iclk->icjl", B.reshape(n, g, B.shape[1] // g, -1), A.reshape(n, g, A.shape[1] // g, -1)
            )
            b = torch.sum(B, dim=2)
        per_param.append(w.reshape(n, -1))
        if layer.bias is not None:
            per_param.append(b.reshape(n, -1))
    grads = torch.cat(per_param, dim=1)
    return grads @ grads.T


def nasi_proxy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    net = copy.deepcopy(model).train()
    ws = [p for p in net.parameters() if p.requires_grad]
    gs = torch.autograd.grad(F.cross_entropy(net(x), y, reduction="mean"), ws, allow_unused=True)
    return float(sum((g.double() * g.double()).sum() for g in gs if g is not None))


def notebook_vote(metrics: list[np.ndarray], acc: np.ndarray) -> float:
    def vote(mets: list[float], gt: float) -> float:
        numpos = sum(1 if m > 0 else 0 for m in mets)
        sign = +1 if numpos >= len(mets) / 2 else -1
        return sign * gt

    tot = right = 0
    for i in range(len(acc)):
        for j in range(len(acc)):
            if i != j:
                diff = acc[i] - acc[j]
                if diff == 0:
                    continue
                same_sign = vote([m[i] - m[j] for m in metrics], diff)
                right += 1 if same_sign > 0 else 0
                tot += 1
    return right / tot

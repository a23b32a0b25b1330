"""NAS-Bench-201 networks for sweeps: modules reused, only the weights re-drawn.

Building a C=16, N=5 network took 0.03 s, as long as scoring synflow on it, and nearly all
of it was Python module construction (plus the seeded-init machinery), not arithmetic.
Every NB201 network has the same skeleton and differs only in which op module sits on
each of a cell's 6 edges, so this factory builds the skeleton once, keeps one module per
(cell, edge, op) as genotypes need it, and per genotype only slots the edge modules in and
re-draws every weight with an explicit generator, in the order a fresh build draws them
(module registration order, which is construction order in this package). The result is
bit-identical to ``seeded_build(lambda: space.build(g, **cfg), seed)`` (tested over the
whole op vocabulary), at about a tenth of the cost.

Only modules whose default init is known here are re-drawn (Conv2d, Linear, BatchNorm2d);
the factory refuses to be made over anything else, so a changed op cannot silently keep
stale weights.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from typing import cast

import torch
from torch import nn
from torch.nn import init

from nasforge.kernel.genotype import Genotype
from nasforge_nb201.arch import NUM_EDGES, check_ops
from nasforge_nb201.macro import MacroConfig
from nasforge_nb201.network import NB201Network
from nasforge_nb201.ops import make_op

#: Parameter-free modules the skeleton and the ops may contain.
_STATELESS = (nn.ReLU, nn.AvgPool2d, nn.Identity, nn.Sequential, nn.ModuleList)


class NB201NetworkFactory:
    """One reusable NB201 network; :meth:`build` re-targets it to a genotype and a seed.

    The network returned is the same object every time: score it before the next
    ``build`` (the :class:`~nasforge.kernel.network_factory.NetworkFactory` contract).
    """

    def __init__(self, config: MacroConfig) -> None:
        self.config = config
        with torch.device("meta"):  # shapes only: no init drawn, global generator untouched
            net = NB201Network(("none",) * NUM_EDGES, config)
        self.network = net.to_empty(device="cpu")
        self.cells = net.cells()
        self._cell_widths = [config.stage_channels[i // config.N] for i in range(len(self.cells))]
        #: (cell, edge, op) -> the op's module, its parametrised leaves and all its modules
        self._ops: dict[tuple[int, int, str], tuple[nn.Module, list[nn.Module], list[nn.Module]]] = {}
        self._skeleton = list(net.modules())  # (the placeholder edges too: harmless)
        # each layer's modules in registration order, with the cells' edges left as slots
        self._plan: list[list[nn.Module] | int] = [_leaves(net.stem)]
        cell_index = {id(c): i for i, c in enumerate(self.cells)}
        for layer in net.layers:
            self._plan.append(cell_index[id(layer)] if id(layer) in cell_index else _leaves(layer))
        self._plan.append(_leaves(net.lastact) + _leaves(net.classifier))

    def build(self, g: Genotype | Sequence[str], seed: int) -> NB201Network:
        net, leaves = self._arrange(g)
        _redraw(leaves, torch.Generator().manual_seed(int(seed)))
        return net

    def arrange(self, g: Genotype | Sequence[str]) -> NB201Network:
        """The network of ``g`` with whatever weights its modules hold, nothing drawn: for a
        scorer that loads weights built elsewhere (a sweep's worker) into it."""
        return self._arrange(g)[0]

    def _arrange(self, g: Genotype | Sequence[str]) -> tuple[NB201Network, list[nn.Module]]:
        """The reused network with ``g``'s edge modules slotted in, in train mode; its
        parametrised leaves in the order a fresh build draws them."""
        ops = cast("tuple[str, ...]", tuple(g.choices if isinstance(g, Genotype) else g))  # checked next
        check_ops(ops)
        net = self.network
        leaves: list[nn.Module] = []
        modules = list(self._skeleton)
        edge_leaves = [self._slot_edges(i, ops, modules) for i in range(len(self.cells))]
        for step in self._plan:
            leaves.extend(edge_leaves[step] if isinstance(step, int) else step)
        for cell in self.cells:
            cell.ops = ops  # type: ignore[assignment]
        net.ops = ops
        for m in modules:  # train mode, as a new module is (a metric may have left one in eval)
            m.__dict__["training"] = True
        return net, leaves

    def _slot_edges(self, i: int, ops: tuple[str, ...], modules: list[nn.Module]) -> list[nn.Module]:
        """Slot the op modules of cell ``i`` in (adding them to ``modules``); their
        parametrised leaves, in order."""
        edges = self.cells[i].edges
        out: list[nn.Module] = []
        for e, op in enumerate(ops):
            key = (i, e, op)
            entry = self._ops.get(key)
            if entry is None:
                with torch.device("meta"):
                    module = make_op(op, self._cell_widths[i])
                module = module.to_empty(device="cpu")
                entry = self._ops[key] = (module, _leaves(module), list(module.modules()))
            cast(nn.Module, edges)._modules[str(e)] = entry[0]
            out.extend(entry[1])
            modules.extend(entry[2])
        return out


def _leaves(module: nn.Module) -> list[nn.Module]:
    """The modules under ``module`` (itself included) that hold state, in registration
    order; anything this file does not know how to re-initialise is refused."""
    out: list[nn.Module] = []
    for m in module.modules():
        if isinstance(m, nn.Conv2d | nn.Linear | nn.BatchNorm2d):
            out.append(m)
        elif any(True for _ in m.parameters(recurse=False)) or any(True for _ in m.buffers(recurse=False)):
            raise TypeError(f"NB201NetworkFactory cannot re-initialise {type(m).__name__}")
        elif not isinstance(m, _STATELESS) and type(m).__module__.startswith("torch."):
            raise TypeError(f"NB201NetworkFactory does not know {type(m).__name__}")
    return out


def _bounds(m: nn.Conv2d | nn.Linear) -> tuple[float, float | None]:
    """The uniform bounds ``reset_parameters`` draws ``m``'s weight and bias from, computed
    as ``kaiming_uniform_(a=sqrt(5))`` and the bias init compute them (the same floats, so
    the same draws): once per module, not per network."""
    bounds = _BOUNDS.get(m)
    if bounds is None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(m.weight)
        gain = init.calculate_gain("leaky_relu", math.sqrt(5))
        weight = math.sqrt(3.0) * (gain / math.sqrt(fan_in))
        bias = None
        if m.bias is not None:
            bias = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        bounds = _BOUNDS[m] = (weight, bias)
    return bounds


#: Per reused module, its bounds (weak: a factory's modules go with it).
_BOUNDS: weakref.WeakKeyDictionary[nn.Module, tuple[float, float | None]] = weakref.WeakKeyDictionary()


def _redraw(leaves: list[nn.Module], gen: torch.Generator) -> None:
    """torch's default init of each leaf, in order, from ``gen``: the same draws
    ``reset_parameters`` makes (kaiming-uniform with a=sqrt(5) for weights, U(+-1/sqrt(fan_in))
    for biases, BN to ones/zeros), so the weights match a seeded fresh build exactly. The
    bounds are computed once per module (:func:`_bounds`); the draws are most of the cost."""
    zeros: list[torch.Tensor] = []
    ones: list[torch.Tensor] = []
    with torch.no_grad():
        for m in leaves:
            if isinstance(m, nn.BatchNorm2d):
                zeros += [m.running_mean, m.num_batches_tracked]  # type: ignore[list-item]
                ones.append(m.running_var)  # type: ignore[arg-type]
                if m.affine:
                    ones.append(m.weight)
                    zeros.append(m.bias)
                    _fresh(m.weight)
                    _fresh(m.bias)
                continue
            m = cast("nn.Conv2d | nn.Linear", m)  # what _leaves keeps besides BN
            weight, bias = _bounds(m)
            m.weight.uniform_(-weight, weight, generator=gen)
            _fresh(m.weight)
            if bias is not None and m.bias is not None:
                m.bias.uniform_(-bias, bias, generator=gen)
                _fresh(m.bias)
        torch._foreach_zero_(zeros)
        torch._foreach_zero_(ones)
        torch._foreach_add_(ones, 1.0)


def _fresh(p: torch.Tensor) -> None:
    """A parameter as a new module has it: trainable, no gradient."""
    if p.grad is not None:
        p.grad = None
    if not p.requires_grad:
        p.requires_grad_(True)


__all__ = ["NB201NetworkFactory"]

"""Which variants of a scope differ only in the sizes of their tensors, and may share a forward.

The variants of a scope (one per combination of its value choices,
:class:`~nasforge.kernel.declared_mixing.MixedScope`) often differ only in a kernel size or
a width: the same modules in the same order, with the same settings, and tensors of
different sizes. Such a *group* is computed as NNI's mixed operations compute a width or
a kernel choice: once, by its largest variant (the *leader*), with each weight the mixture
``sum_v q_v * mask_v * W`` of the variants' slices (the channels a narrower variant lacks
and the kernel rows a smaller one lacks are zero), so a block with three kernels and three
widths runs once, not nine times, under weights that are not one-hot.

Grouped are only variants whose modules agree in type and in every setting other than
their sizes, and whose size-dependent modules are known to compute on zero-padded weights
what the smaller module computes (:data:`SIZED`): linear maps, convolutions whose padding
keeps a smaller kernel centred on the same pixels ("same" padding) and that are not
grouped, batch normalisation (its scale and shift are masked too, so padded channels stay
zero). Anything else (a layer norm over the channels, a size a module keeps in an
attribute of its own) keeps its variants apart, each run on its own, so exactness never
rests on a guess. One variant alone in a group, or alone with a weight, runs exactly as
``build(g)`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn
from torch.nn.modules.batchnorm import _NormBase
from torch.nn.modules.conv import _ConvNd

Shape = tuple[int, ...]

#: Module types whose size settings may differ inside a group, and those settings.
SIZED: tuple[tuple[type[nn.Module], frozenset[str]], ...] = (
    (nn.Linear, frozenset({"in_features", "out_features"})),
    (_ConvNd, frozenset({"in_channels", "out_channels", "kernel_size", "padding"})),
    (_NormBase, frozenset({"num_features"})),
)


def _sized(module: nn.Module) -> frozenset[str]:
    for kind, names in SIZED:
        if isinstance(module, kind):
            return names
    return frozenset()


def _settings(module: nn.Module) -> dict[str, Any]:
    """A module's own settings: its plain attributes, not its tensors or submodules."""
    return {
        k: v
        for k, v in vars(module).items()
        if not k.startswith("_") and k != "training" and not isinstance(v, torch.Tensor | nn.Module)
    }


def structure(template: nn.Module) -> list[tuple[str, type, dict[str, Any]]]:
    """What must agree for two variants to share a forward: each module's name, type and
    settings, less the size settings of the modules that may differ in size."""
    out = []
    for name, m in template.named_modules():
        sized = _sized(m)
        out.append((name, type(m), {k: v for k, v in _settings(m).items() if k not in sized}))
    return out


def _same_padding(leader: nn.Module, other: nn.Module) -> bool:
    """Whether the smaller convolution's kernel, centred in the leader's, sees the same pixels."""
    if not isinstance(leader, _ConvNd) or not isinstance(other, _ConvNd):
        return True
    if leader.groups != 1 or other.groups != 1 or leader.padding_mode != "zeros":
        return False
    if isinstance(leader.padding, str) or isinstance(other.padding, str):
        return False
    for big, small, pad_big, pad_small, dil in zip(
        leader.kernel_size, other.kernel_size, leader.padding, other.padding, leader.dilation, strict=True
    ):
        if (big - small) % 2 or pad_big - pad_small != (big - small) // 2 * dil:
            return False
    return True


def groups(
    templates: Sequence[nn.Module], shapes: Sequence[dict[str, Shape]]
) -> list[tuple[int, tuple[int, ...]]]:
    """(leader, members) of each group of variants (see the module docstring), in variant
    order; ``shapes[v]`` are variant ``v``'s tensor shapes by name."""
    found: list[tuple[list[Any], list[int]]] = []
    for v, template in enumerate(templates):
        s = structure(template)
        for signature, members in found:
            if signature == s and set(shapes[members[0]]) == set(shapes[v]):
                members.append(v)
                break
        else:
            found.append((s, [v]))
    out: list[tuple[int, tuple[int, ...]]] = []
    for _, members in found:
        leader = _leader(members, shapes)
        modules = {v: dict(templates[v].named_modules()) for v in members}
        if leader is None or not all(
            _same_padding(modules[leader][name], m) for v in members for name, m in modules[v].items()
        ):
            out.extend((v, (v,)) for v in members)
        else:
            out.append((leader, tuple(members)))
    return sorted(out)


def _leader(members: Sequence[int], shapes: Sequence[dict[str, Shape]]) -> int | None:
    """The member whose every tensor is at least as large as every other member's."""
    for v in members:
        if all(
            len(shapes[v][n]) == len(shapes[o][n])
            and all(a >= b for a, b in zip(shapes[v][n], shapes[o][n], strict=True))
            for o in members
            for n in shapes[v]
        ):
            return v
    return None


__all__ = ["SIZED", "groups", "structure"]

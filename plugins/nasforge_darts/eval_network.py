"""The DARTS evaluation network: stem, stacked cells, auxiliary head, classifier.

Topology follows DARTS exactly (it is what the published parameter counts measure):
cells ``floor(L/3)`` and ``floor(2L/3)`` reduce and double the width, every cell reads
the two previous cells' outputs, and the auxiliary tower taps the second reduction.
``forward`` returns logits only, so exporters and evaluators need no special case;
training code that wants the auxiliary loss calls :meth:`forward_with_aux`.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from nasforge_darts.aux_heads import AuxiliaryHead
from nasforge_darts.cell_genotype import CellGenotype
from nasforge_darts.eval_cell import EvalCell
from nasforge_darts.eval_config import EvalNetConfig
from nasforge_darts.primitives import CONCAT


def _cifar_stem(cfg: EvalNetConfig) -> tuple[nn.Module, nn.Module | None, int, int]:
    width = cfg.stem_multiplier * cfg.C
    stem = nn.Sequential(nn.Conv2d(cfg.in_channels, width, 3, padding=1, bias=False), nn.BatchNorm2d(width))
    return stem, None, width, width


def _imagenet_stem(cfg: EvalNetConfig) -> tuple[nn.Module, nn.Module | None, int, int]:
    c = cfg.C
    stem0 = nn.Sequential(
        nn.Conv2d(cfg.in_channels, c // 2, 3, stride=2, padding=1, bias=False),
        nn.BatchNorm2d(c // 2),
        nn.ReLU(inplace=True),
        nn.Conv2d(c // 2, c, 3, stride=2, padding=1, bias=False),
        nn.BatchNorm2d(c),
    )
    stem1 = nn.Sequential(
        nn.ReLU(inplace=True),
        nn.Conv2d(c, c, 3, stride=2, padding=1, bias=False),
        nn.BatchNorm2d(c),
    )
    return stem0, stem1, c, c


class EvalNetwork(nn.Module):
    """A stack of ``cfg.layers`` discrete cells of one genotype."""

    def __init__(self, cells: CellGenotype | Any, cfg: EvalNetConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.genotype = cells
        self.drop_path_prob = cfg.drop_path
        imagenet = cfg.dataset == "imagenet"
        self.stem0, self.stem1, c_pp, c_p = (_imagenet_stem if imagenet else _cifar_stem)(cfg)
        reduction_prev = imagenet  # the ImageNet stem ends with a stride-2 conv
        channels = cfg.C
        self.cells = nn.ModuleList()
        self.aux_after: int = cfg.reduction_cells[1]
        c_aux = c_p
        for i in range(cfg.layers):
            reduction = i in cfg.reduction_cells
            if reduction:
                channels *= 2
            cell = EvalCell(
                cells.reduce if reduction else cells.normal,
                c_pp,
                c_p,
                channels,
                reduction=reduction,
                reduction_prev=reduction_prev,
                # a NASNet-space genotype names its output nodes; a DARTS one concatenates all
                concat=getattr(cells, "reduce_concat" if reduction else "normal_concat", CONCAT),
            )
            self.cells.append(cell)
            reduction_prev = reduction
            c_pp, c_p = c_p, cell.multiplier * channels
            if i == self.aux_after:
                c_aux = c_p
        self.auxiliary: nn.Module | None = (
            AuxiliaryHead(c_aux, cfg.num_classes, pool_stride=2 if imagenet else 3, bn_768=not imagenet)
            if cfg.auxiliary
            else None
        )
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(c_p, cfg.num_classes)

    def forward_with_aux(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Logits, and the auxiliary logits when training with an auxiliary head."""
        s0 = self.stem0(x)
        s1 = s0 if self.stem1 is None else self.stem1(s0)
        aux = None
        for i, cell in enumerate(self.cells):
            s0, s1 = s1, cell(s0, s1, self.drop_path_prob)
            if i == self.aux_after and self.auxiliary is not None and self.training:
                aux = self.auxiliary(s1)
        logits = self.classifier(self.global_pool(s1).flatten(1))
        return logits, aux

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward_with_aux(x)[0]


def build_network(cells: CellGenotype, **options: Any) -> EvalNetwork:
    """``build_network(cells, C=36, layers=20, num_classes=10, auxiliary=True, dataset='cifar')``.

    ``dataset='imagenet'`` defaults to ``C=48, layers=14, num_classes=1000``.
    """
    return EvalNetwork(cells, EvalNetConfig.create(**options))

"""Stage E: train each member from scratch and average their predictions (§5.3.5).

The thesis trains every member of the chosen ensemble independently with its space's
protocol and averages their outputs at test time. This trainer is the small CPU version
of that step for in-memory data (what the digits benchmark uses): the space's network
built from a seed, SGD with momentum and a cosine learning rate to 0, the recipe of the
core's short-train evaluator, but returning the trained network, because an ensemble is
scored on its members' per-example predictions, not on their accuracies.
"""

from __future__ import annotations

from typing import Any

import attrs
import torch
from torch import nn

from nasforge.datasets import TensorData
from nasforge.genotype import Genotype
from nasforge.search_space import SearchSpace, build_network
from nasforge.seeding import LocalRandomness, seeded_generator
from nasforge.training import CosineSchedule, iterate_batches, set_lr, train_epoch


@attrs.frozen
class MemberTraining:
    """How each member is trained (defaults: a few seconds per small network on a CPU core)."""

    epochs: int = 30
    batch_size: int = 64
    lr: float = 0.05
    momentum: float = 0.9
    weight_decay: float = 3e-4
    grad_clip: float | None = 5.0


def train_member(
    space: SearchSpace,
    g: Genotype,
    data: TensorData,
    *,
    seed: int = 0,
    recipe: MemberTraining | None = None,
    build_options: dict[str, Any] | None = None,
    device: str = "cpu",
) -> nn.Module:
    """``g``'s network trained from scratch on ``data`` (initial weights and batches from ``seed``)."""
    recipe = recipe or MemberTraining()
    options = {"num_classes": data.num_classes, "in_channels": data.input_shape[0], **(build_options or {})}
    randomness = LocalRandomness(seed)
    with randomness:
        model = build_network(space, g, options).to(device)
    opt = torch.optim.SGD(
        model.parameters(), lr=recipe.lr, momentum=recipe.momentum, weight_decay=recipe.weight_decay
    )
    schedule = CosineSchedule(recipe.lr, 0.0, recipe.epochs)
    shuffle = seeded_generator(seed)
    x, y = data.x.to(device), data.y.to(device)
    for epoch in range(recipe.epochs):
        set_lr(opt, schedule(epoch))
        batches = iterate_batches(x, y, recipe.batch_size, generator=shuffle)
        train_epoch(model, batches, opt, grad_clip=recipe.grad_clip, randomness=randomness)
    return model.eval()


def predict_logits(model: nn.Module, x: torch.Tensor, *, batch_size: int = 512) -> torch.Tensor:
    """[N, C] logits of a trained member in eval mode (BatchNorm on its running statistics)."""
    model.eval()
    device = next(model.parameters()).device
    with torch.no_grad():
        out = [model(x[i : i + batch_size].to(device)).cpu() for i in range(0, len(x), batch_size)]
    return torch.cat(out)

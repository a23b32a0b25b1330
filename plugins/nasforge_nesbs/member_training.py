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

import torch
from torch import nn

from nasforge.kernel.datasets import TensorData
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.search_space import SearchSpace
from nasforge.run.ensemble_training import MemberRecipe, train_network

#: How each member is trained: the core's recipe (defaults: a few seconds per small network
#: on a CPU core), under the name this plugin and its benchmark have always used.
MemberTraining = MemberRecipe


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
    """``g``'s network trained from scratch on ``data`` (initial weights and batches from ``seed``).

    The core's :func:`nasforge.kernel.ensemble.train_network` with this recipe, so ``nasforge
    export RUN_DIR --train-epochs N`` trains members exactly as the benchmark does.
    """
    recipe = recipe or MemberTraining()
    return train_network(
        space,
        g,
        data,
        seed=seed,
        recipe=recipe,
        build_options=build_options,
        device=device,
    )


def predict_logits(model: nn.Module, x: torch.Tensor, *, batch_size: int = 512) -> torch.Tensor:
    """[N, C] logits of a trained member in eval mode (BatchNorm on its running statistics)."""
    model.eval()
    device = next(model.parameters()).device
    with torch.no_grad():
        out = [model(x[i : i + batch_size].to(device)).cpu() for i in range(0, len(x), batch_size)]
    return torch.cat(out)

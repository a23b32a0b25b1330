"""DARTS (Liu et al., 2019): softmax relaxation, bilevel search, top-2 discretisation.

``order=1`` treats the weights as constant in the architecture step (xi = 0); ``order=2``
differentiates through one virtual SGD step of the weights with the finite-difference
Hessian-vector product of :mod:`nasforge_darts.unrolled` (xi = the current weight lr).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import torch
import torch.nn.functional as F

from nasforge.kernel.option_types import as_float, in_range, one_of
from nasforge_darts.bilevel_config import BilevelConfig
from nasforge_darts.bilevel_search import Batch, BilevelSearch, StepContext, Weights
from nasforge_darts.convergence import convergence_factor
from nasforge_darts.supernet_view import SupernetView
from nasforge_darts.unrolled import unrolled_arch_gradient


@attrs.frozen(kw_only=True)
class DartsConfig(BilevelConfig):
    """DARTS's search settings (50 epochs, batch 64, SGD 0.025 -> 0.001, Adam 3e-4)."""

    order: int = attrs.field(default=1, validator=one_of((1, 2)))
    #: Finite-difference step of the Hessian-vector product: ``eps_scale / |grad|``.
    unrolled_eps: float = attrs.field(default=0.01, converter=as_float, validator=in_range(gt=0))


class DartsStrategy(BilevelSearch):
    """``DartsStrategy(order=1|2, epochs=..., supernet={...}, seed=...).fit(space, data)``."""

    name: ClassVar[str] = "darts"
    config_class: ClassVar[type[BilevelConfig]] = DartsConfig
    config: DartsConfig

    def train_weights(self, view: SupernetView, ctx: StepContext) -> Weights | None:
        return [torch.softmax(a, dim=-1) for a in view.arch_parameters()]

    def eval_weights(self, view: SupernetView) -> Weights | None:
        return [torch.softmax(a.detach(), dim=-1) for a in view.arch_parameters()]

    def derive_scores(self, view: SupernetView) -> Weights:
        return [torch.softmax(a.detach(), dim=-1) for a in view.arch_parameters()]

    def arch_gradient(
        self, view: SupernetView, train: Batch, val: Batch, ctx: StepContext
    ) -> tuple[list[torch.Tensor], dict[str, float]]:
        cfg: DartsConfig = self.active_config  # type: ignore[assignment]
        arch = view.arch_parameters()

        def loss_on(batch: Batch) -> torch.Tensor:
            weights = [torch.softmax(a, dim=-1) for a in arch]
            return F.cross_entropy(view.forward(batch[0], weights), batch[1])

        if cfg.order == 1:
            loss = loss_on(val)
            grads = list(torch.autograd.grad(loss, arch))
            return grads, {"arch_loss": float(loss.detach())}
        weights = view.weight_parameters()
        buffers = [ctx.w_optimizer.state.get(p, {}).get("momentum_buffer") for p in weights]
        grads = unrolled_arch_gradient(
            arch,
            weights,
            lambda: loss_on(train),
            lambda: loss_on(val),
            xi=ctx.w_lr,
            momentum=cfg.w_momentum,
            momentum_buffers=buffers,
            weight_decay=cfg.w_weight_decay,
            eps_scale=cfg.unrolled_eps,
        )
        return grads, {}

    def diagnostics(self, view: SupernetView, ctx: StepContext) -> dict[str, Any]:
        out: dict[str, float] = {}
        for cell, a in zip(view.cells, view.arch_parameters(), strict=True):
            kind = cell.name
            w = torch.softmax(a.detach(), dim=-1)
            if cell.ops.skip is not None:
                out[f"{kind}_mean_skip_weight"] = float(w[:, cell.ops.column(cell.ops.skip)].mean())
            for variant in ("literal", "chain"):
                out[f"{kind}_lambda_{variant}"] = convergence_factor(w, cell, variant=variant)
        return out

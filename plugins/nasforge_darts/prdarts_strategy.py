"""PR-DARTS (Zhou et al., NeurIPS 2020): independent gates, group sparsity, path reward.

Per op a hard-concrete gate with log-odds ``beta`` replaces DARTS's per-edge softmax, so
ops no longer compete locally and skip connections lose the edge Theorem 1 gives them; a
group-sparsity penalty (heavier on skips) restores a global competition, and a reward on
the probability of a parametric chain through the cell keeps cells from going shallow.
Gates are drawn once per step per cell type (shared by all cells of that type), freshly
for the weight step and the architecture step (research note A19).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import torch
import torch.nn.functional as F

from nasforge.supernet_topology import OpSet
from nasforge.training import LinearSchedule
from nasforge_darts.bilevel_config import BilevelConfig
from nasforge_darts.bilevel_search import Batch, BilevelSearch, StepContext, Weights
from nasforge_darts.convergence import convergence_factor
from nasforge_darts.edge_select import select_edges
from nasforge_darts.gates import HardConcreteGate
from nasforge_darts.prdarts_config import PRDartsConfig, prdarts_config
from nasforge_darts.regularisers import OpGroup, group_penalty, path_reward
from nasforge_darts.supernet_view import SupernetView


def op_groups(ops: OpSet, cfg: PRDartsConfig) -> list[OpGroup]:
    """The penalised groups of ``cfg.groups`` for this op set (addressed by role)."""
    skip = OpGroup("skip", () if ops.skip is None else (ops.skip,), cfg.lambda_skip)
    if cfg.groups == "paper":
        rest = tuple(op for op in ops.names if op != ops.skip)
        return [skip, OpGroup("non_skip", rest, cfg.lambda_nonskip)]
    pools = tuple(op for op in ops.names if op in ops.pools)
    rest = tuple(op for op in ops.names if op != ops.skip and op not in pools)
    return [
        skip,
        OpGroup("non_skip", rest, cfg.lambda_nonskip),
        OpGroup("pool", pools, cfg.lambda_nonskip),
    ]


def regulariser(
    view: SupernetView,
    betas: list[torch.Tensor],
    tau: float,
    cfg: PRDartsConfig,
    masks: list[torch.Tensor] | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """``sum_groups lambda_g L_g - lambda3 L_path``, averaged over the cell types.

    Each cell type's groups, node count, parametric ops and chain come from its topology;
    a group none of whose ops the cell has costs nothing.
    """
    gate = HardConcreteGate(cfg.stretch_a, cfg.stretch_b)
    total = betas[0].sum() * 0.0
    info: dict[str, float] = {}
    for i, (cell, beta) in enumerate(zip(view.cells, betas, strict=True)):
        kind, h = cell.name, cell.num_nodes
        zeta = 1.0 / len(cell.edges) if cfg.zeta == "mean" else 2.0 / (h * (h - 1))
        p = gate.prob_nonzero(beta, tau)
        mask = masks[i] if (masks is not None and cfg.masked) else None
        for g in op_groups(cell.ops, cfg):
            cols = cell.ops.columns(g.ops)
            if not cols:
                info[f"{kind}_L_{g.name}"] = 0.0
                continue
            value = group_penalty(p, cols, zeta=zeta, mask=mask, hinge=cfg.hinge)
            total = total + g.weight * value / len(betas)
            info[f"{kind}_L_{g.name}"] = float(value.detach())
        convs = cell.ops.columns(cell.ops.parametric)
        path = path_reward(p, cell.chain, convs, aggregate=cfg.path_aggregate, mask=mask)
        total = total - cfg.lambda_path * path / len(betas)
        info[f"{kind}_L_path"] = float(path.detach())
    return total, info


class PRDartsStrategy(BilevelSearch):
    """``PRDartsStrategy(preset='paper'|'official-code', **overrides).fit(space, data)``."""

    name: ClassVar[str] = "prdarts"
    config_class: ClassVar[type[BilevelConfig]] = PRDartsConfig
    config: PRDartsConfig

    def __init__(self, *, preset: str = "paper", **options: Any) -> None:
        self._preset = preset
        super().__init__(**options)

    def default_config(self) -> BilevelConfig:
        return prdarts_config(self._preset)

    @property
    def cfg(self) -> PRDartsConfig:
        return self.active_config  # type: ignore[return-value]

    def view_options(self) -> dict[str, Any]:
        return {"distinct_sources": self.cfg.distinct_sources, "exclude_zero": True}

    def _gate(self) -> HardConcreteGate:
        return HardConcreteGate(self.cfg.stretch_a, self.cfg.stretch_b)

    def begin_epoch(self, view: SupernetView, ctx: StepContext) -> None:
        self.tau = LinearSchedule(self.cfg.tau_max, self.cfg.tau_min, ctx.epochs)(ctx.epoch)
        self.exact_zero_sum, self.gate_draws = 0.0, 0

    def _sample(self, view: SupernetView, ctx: StepContext) -> tuple[Weights, Weights]:
        weights, masks = [], []
        for cell, beta in zip(view.cells, view.arch_parameters(), strict=True):
            exclude = [] if cell.ops.zero is None else [cell.ops.column(cell.ops.zero)]
            g = self._gate().sample(beta, self.tau, generator=ctx.generator)
            self.exact_zero_sum += float((g.detach() == 0).float().mean())
            self.gate_draws += 1
            w, m = select_edges(
                g,
                mode=self.cfg.edge_select,
                k=self.cfg.ops_per_edge,
                op_dropout=self.cfg.op_dropout,
                exclude=exclude,
                generator=ctx.generator,
            )
            weights.append(w)
            masks.append(m)
        return weights, masks

    def train_weights(self, view: SupernetView, ctx: StepContext) -> Weights | None:
        with torch.no_grad():
            return self._sample(view, ctx)[0]

    def arch_gradient(
        self, view: SupernetView, train: Batch, val: Batch, ctx: StepContext
    ) -> tuple[list[torch.Tensor], dict[str, float]]:
        weights, masks = self._sample(view, ctx)
        ce = F.cross_entropy(view.forward(val[0], weights), val[1])
        betas = view.arch_parameters()
        reg, info = regulariser(view, betas, self.tau, self.cfg, masks)
        grads_ce = torch.autograd.grad(ce, betas, allow_unused=True, retain_graph=False)
        grads_reg: tuple[torch.Tensor | None, ...] = (None,) * len(betas)
        if reg.requires_grad:
            grads_reg = torch.autograd.grad(reg, betas, allow_unused=True)
        grads = []
        norm_ce = norm_reg = 0.0
        for b, gc, gr in zip(betas, grads_ce, grads_reg, strict=True):
            gc = torch.zeros_like(b) if gc is None else gc
            gr = torch.zeros_like(b) if gr is None else gr
            norm_ce += float(gc.pow(2).sum())
            norm_reg += float(gr.pow(2).sum())
            grads.append(gc + gr)
        info.update(
            arch_ce=float(ce.detach()),
            arch_reg=float(reg.detach()),
            grad_norm_ce=math.sqrt(norm_ce),  # D10: is the regulariser saturated (large tau)?
            grad_norm_reg=math.sqrt(norm_reg),
        )
        return grads, info

    def eval_weights(self, view: SupernetView) -> Weights | None:
        return [self._gate().deterministic(b.detach()) for b in view.arch_parameters()]

    def derive_scores(self, view: SupernetView) -> Weights:
        betas = [b.detach() for b in view.arch_parameters()]
        if self.cfg.derive == "edge_softmax":
            return [torch.softmax(b, dim=-1) for b in betas]
        return [self._gate().prob_nonzero(b, self.cfg.tau_min) for b in betas]

    def diagnostics(self, view: SupernetView, ctx: StepContext) -> dict[str, float]:
        out: dict[str, float] = {"tau": self.tau}
        if self.gate_draws:
            out["exact_zero_gates"] = self.exact_zero_sum / self.gate_draws  # D4
        gate = self._gate()
        for cell, beta in zip(view.cells, view.arch_parameters(), strict=True):
            kind = cell.name
            p = gate.prob_nonzero(beta.detach(), self.tau)
            out[f"{kind}_mean_activation"] = float(p.mean())  # D5
            out[f"{kind}_density"] = float((p > 0.5).float().mean())
            if cell.ops.skip is not None:
                out[f"{kind}_mean_skip_activation"] = float(p[:, cell.ops.column(cell.ops.skip)].mean())
            for variant in ("literal", "chain"):  # D7, Theorem 1
                out[f"{kind}_lambda_{variant}"] = convergence_factor(p, cell, variant=variant)
        return out

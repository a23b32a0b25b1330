"""PR-DARTS (Zhou et al., NeurIPS 2020): independent gates, group sparsity, path reward.

Per op a hard-concrete gate with log-odds ``beta`` replaces DARTS's per-edge softmax, so
ops no longer compete locally and skip connections lose the edge Theorem 1 gives them; a
group-sparsity penalty (heavier on skips) restores a global competition, and a reward on
the probability of a parametric chain through the cell keeps cells from going shallow.
Gates are drawn once per step per cell type (shared by all cells of that type), freshly
for the weight step and the architecture step (our choice: PR-DARTS does not say when
gates are sampled).

``order=2`` is DARTS's second-order architecture gradient (:mod:`nasforge_darts.unrolled`)
on PR-DARTS's objective: ``d/dbeta [F_val(w - xi grad_w F_train(w, beta), beta) + R(beta)]``,
each loss with one fixed gate draw (noise and op selection) so that it is a deterministic
function of ``beta`` and the weights; the regulariser ``R`` depends on ``beta`` alone, so
it adds its plain gradient. The paper and its code search first order (the paper does not
state the order; its code and its 0.17 GPU-day cost are first order).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any, ClassVar

import torch
import torch.nn.functional as F

from nasforge.kernel.supernet_topology import OpSet
from nasforge.run.training import LinearSchedule
from nasforge_darts.bilevel_config import BilevelConfig
from nasforge_darts.bilevel_search import Batch, BilevelSearch, StepContext, Weights
from nasforge_darts.convergence import convergence_factor
from nasforge_darts.edge_select import select_edges
from nasforge_darts.gates import HardConcreteGate
from nasforge_darts.prdarts_config import PRDartsConfig, prdarts_config
from nasforge_darts.regularisers import OpGroup, group_penalty, path_reward
from nasforge_darts.supernet_view import SupernetView
from nasforge_darts.unrolled import unrolled_arch_gradient

logger = logging.getLogger("nasforge.darts")

#: One gate draw of a cell type: the uniform noise of its gates and its 0/1 op selection.
Draw = tuple[torch.Tensor, torch.Tensor]


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
    betas: Sequence[torch.Tensor],
    tau: float,
    cfg: PRDartsConfig,
    masks: list[torch.Tensor] | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """``sum_groups lambda_g max(mean_c L_g,c - hinge, 0) - lambda3 mean_c L_path,c``.

    Each group's value is averaged over the cell types first and hinged after, as the
    official code does (``max((S_normal + S_reduce) / 2 - 0.2, 0)``, not the mean of two
    hinged values); with the paper's hinge of 0 the two orders agree. Each cell type's
    groups, node count, parametric ops and chain come from its topology; a group none of
    whose ops a cell has counts 0 there. ``info`` holds each cell type's unhinged value
    (``normal_L_skip``) and each group's averaged, hinged one (``L_skip``).
    """
    gate = HardConcreteGate(cfg.stretch_a, cfg.stretch_b)
    zero = betas[0].sum() * 0.0
    n = len(betas)
    sums: dict[str, torch.Tensor] = {}
    weights: dict[str, float] = {}
    path_sum = zero
    info: dict[str, float] = {}
    for i, (cell, beta) in enumerate(zip(view.cells, betas, strict=True)):
        kind, h = cell.name, cell.num_nodes
        zeta = 1.0 / len(cell.edges) if cfg.zeta == "mean" else 2.0 / (h * (h - 1))
        p = gate.prob_nonzero(beta, tau)
        mask = masks[i] if (masks is not None and cfg.masked) else None
        for g in op_groups(cell.ops, cfg):
            cols = cell.ops.columns(g.ops)
            value = group_penalty(p, cols, zeta=zeta, mask=mask) if cols else zero
            sums[g.name] = sums.get(g.name, zero) + value
            weights[g.name] = g.weight
            info[f"{kind}_L_{g.name}"] = float(value.detach())
        convs = cell.ops.columns(cell.ops.parametric)
        path = path_reward(p, cell.chain, convs, aggregate=cfg.path_aggregate, mask=mask)
        path_sum = path_sum + path
        info[f"{kind}_L_path"] = float(path.detach())
    total = zero
    for name, value_sum in sums.items():
        mean = value_sum / n
        hinged = torch.clamp(mean - cfg.hinge, min=0.0) if cfg.hinge > 0 else mean
        total = total + weights[name] * hinged
        info[f"L_{name}"] = float(hinged.detach())
    path_mean = path_sum / n
    info["L_path"] = float(path_mean.detach())
    return total - cfg.lambda_path * path_mean, info


def selected_weights(gates: torch.Tensor, mask: torch.Tensor, mode: str) -> torch.Tensor:
    """The forward weights of :func:`~nasforge_darts.edge_select.select_edges` for a fixed
    selection ``mask``: the gate itself (``all``), the gate on the selected ops
    (``uniform2``), or exactly 1 there with a straight-through gradient (``topk_st``)."""
    if mode == "all":
        return gates
    if mode == "uniform2":
        return gates * mask
    return mask - gates.detach() + gates


def regulariser_gradient_onset(
    betas: Sequence[torch.Tensor], cfg: PRDartsConfig, epochs: int, *, floor: float = 0.0
) -> int | None:
    """The first epoch whose temperature gives ``d P(g != 0) / d beta > floor`` for some entry
    of ``betas`` in their own dtype (None: never in ``epochs``).

    Every regulariser term is a function of ``P(g != 0) = sigmoid(beta - tau ln(-a/b))``,
    so where that derivative is 0 the regulariser has no gradient. At tau = 10 (the paper's
    start) the argument is about beta + 24, whose sigmoid rounds to exactly 1 in float32.
    """
    gate = HardConcreteGate(cfg.stretch_a, cfg.stretch_b)
    schedule = LinearSchedule(cfg.tau_max, cfg.tau_min, epochs)
    for epoch in range(epochs):
        tau = schedule(epoch)
        for beta in betas:
            b = beta.detach().clone().requires_grad_(True)
            (grad,) = torch.autograd.grad(gate.prob_nonzero(b, tau).sum(), b)
            if bool((grad > floor).any()):
                return epoch
    return None


def saturation_warning(betas: Sequence[torch.Tensor], cfg: PRDartsConfig, epochs: int) -> str | None:
    """A one-line warning when the regulariser has no gradient at the first epoch (the
    paper's tau = 10 start saturates its gate, PR-DARTS §4.1), with the epochs from which it has one and from
    which it reaches 1 % of its largest value (``p (1 - p) >= 0.0025``); None otherwise."""
    nonzero = regulariser_gradient_onset(betas, cfg, epochs)
    if nonzero == 0:
        return None
    dtype = str(betas[0].dtype).removeprefix("torch.")
    schedule = LinearSchedule(cfg.tau_max, cfg.tau_min, epochs)
    useful = regulariser_gradient_onset(betas, cfg, epochs, floor=0.0025)
    head = (
        f"PR-DARTS: at tau_max={cfg.tau_max:g} the regularisers' gradient is exactly 0 in {dtype} "
        "at the start (P(g != 0) rounds to 1): the architecture step follows the validation loss alone"
    )
    if nonzero is None:
        return f"{head} for all {epochs} epochs; lower tau_max (official-code: 1) to regularise"
    tail = (
        f" until the gradient turns non-zero, from epoch {nonzero} of {epochs} (tau {schedule(nonzero):.2f})"
    )
    if useful is not None:
        tail += f" and reaches 1% of its largest value from epoch {useful} (tau {schedule(useful):.2f})"
    return head + tail + "; lower tau_max (official-code: 1) to regularise from the start"


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
        if ctx.epoch == 0:  # once per run
            message = saturation_warning(view.arch_parameters(), self.cfg, ctx.epochs)
            if message is not None:
                logger.warning(message)

    def _draw(self, view: SupernetView, ctx: StepContext) -> list[Draw]:
        """One gate draw per cell type: its noise and which ops run on each edge."""
        draws = []
        gate = self._gate()
        for cell, beta in zip(view.cells, view.arch_parameters(), strict=True):
            exclude = [] if cell.ops.zero is None else [cell.ops.column(cell.ops.zero)]
            u = gate.noise(beta, generator=ctx.generator)
            g = gate.from_noise(beta.detach(), self.tau, u)
            self.exact_zero_sum += float((g == 0).float().mean())
            self.gate_draws += 1
            _, mask = select_edges(
                g,
                mode=self.cfg.edge_select,
                k=self.cfg.ops_per_edge,
                op_dropout=self.cfg.op_dropout,
                exclude=exclude,
                generator=ctx.generator,
            )
            draws.append((u, mask))
        return draws

    def _weights(self, betas: Sequence[torch.Tensor], draws: list[Draw]) -> Weights:
        """The edge weights of ``draws`` as a function of ``betas`` (differentiable)."""
        gate = self._gate()
        return [
            selected_weights(gate.from_noise(beta, self.tau, u), mask, self.cfg.edge_select)
            for beta, (u, mask) in zip(betas, draws, strict=True)
        ]

    def _sample(self, view: SupernetView, ctx: StepContext) -> tuple[Weights, Weights]:
        draws = self._draw(view, ctx)
        return self._weights(view.arch_parameters(), draws), [m for _, m in draws]

    def train_weights(self, view: SupernetView, ctx: StepContext) -> Weights | None:
        with torch.no_grad():
            return self._sample(view, ctx)[0]

    def arch_gradient(
        self, view: SupernetView, train: Batch, val: Batch, ctx: StepContext
    ) -> tuple[list[torch.Tensor], dict[str, float]]:
        betas = view.arch_parameters()
        info: dict[str, float] = {}
        if self.cfg.order == 1:
            weights, masks = self._sample(view, ctx)
            ce = F.cross_entropy(view.forward(val[0], weights), val[1])
            grads_ce: Sequence[torch.Tensor | None] = torch.autograd.grad(
                ce, betas, allow_unused=True, retain_graph=False
            )
            info["arch_ce"] = float(ce.detach())
        else:
            grads_ce, masks = self._unrolled_ce_gradient(view, train, val, ctx)
        reg, reg_info = regulariser(view, betas, self.tau, self.cfg, masks)
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
        info.update(reg_info)
        info.update(
            arch_reg=float(reg.detach()),
            grad_norm_ce=math.sqrt(norm_ce),  # D10: is the regulariser saturated (large tau)?
            grad_norm_reg=math.sqrt(norm_reg),
        )
        return grads, info

    def _unrolled_ce_gradient(
        self, view: SupernetView, train: Batch, val: Batch, ctx: StepContext
    ) -> tuple[list[torch.Tensor], Weights]:
        """Second order: the validation loss after one virtual weight step, differentiated
        in beta through that step; a fresh draw for each of the two losses (our choice), each
        held fixed while the weights move. Returns the gradient and the validation masks."""
        betas = view.arch_parameters()
        weights = view.weight_parameters()
        train_draws = self._draw(view, ctx)
        val_draws = self._draw(view, ctx)

        def loss_on(batch: Batch, draws: list[Draw]) -> torch.Tensor:
            return F.cross_entropy(view.forward(batch[0], self._weights(betas, draws)), batch[1])

        buffers = [ctx.w_optimizer.state.get(p, {}).get("momentum_buffer") for p in weights]
        grads = unrolled_arch_gradient(
            betas,
            weights,
            lambda: loss_on(train, train_draws),
            lambda: loss_on(val, val_draws),
            xi=ctx.w_lr,
            momentum=self.cfg.w_momentum,
            momentum_buffers=buffers,
            weight_decay=self.cfg.w_weight_decay,
            eps_scale=self.cfg.unrolled_eps,
        )
        return grads, [m for _, m in val_draws]

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

"""PR-DARTS pieces against closed forms: gates, regularisers, edge selection, diagnostics."""

from __future__ import annotations

import pytest
import torch

from nasforge.kernel.supernet_topology import OpSet
from nasforge_darts.cell_stats import cell_stats
from nasforge_darts.convergence import convergence_factor
from nasforge_darts.edge_select import select_edges
from nasforge_darts.gates import HardConcreteGate
from nasforge_darts.prdarts_config import prdarts_config
from nasforge_darts.prdarts_strategy import regulariser
from nasforge_darts.primitives import PRIMITIVES
from nasforge_darts.published import DARTS_V1, DARTS_V2, PR_DARTS
from nasforge_darts.space import DartsSpace
from nasforge_darts.supernet_view import SupernetView

GATE = HardConcreteGate()
SPACE = DartsSpace()


@pytest.mark.parametrize(
    ("tau", "beta", "p_nonzero", "p_one"),
    [
        (1.0, -3.0, 0.3539, 0.0045),
        (1.0, 0.0, 0.9167, 0.0833),
        (0.1, -1.0, 0.3186, 0.2245),
        (0.1, 1.0, 0.7755, 0.6814),
    ],
)
def test_gate_closed_forms_and_monte_carlo(tau: float, beta: float, p_nonzero: float, p_one: float) -> None:
    b = torch.tensor(beta, dtype=torch.float64)
    assert float(GATE.prob_nonzero(b, tau)) == pytest.approx(p_nonzero, abs=1e-4)
    assert float(GATE.prob_one(b, tau)) == pytest.approx(p_one, abs=1e-4)
    g = GATE.sample(b.expand(400_000), tau, generator=torch.Generator().manual_seed(0))
    assert float((g != 0).double().mean()) == pytest.approx(p_nonzero, abs=3e-3)
    assert float((g == 1).double().mean()) == pytest.approx(p_one, abs=3e-3)
    assert float(g.min()) >= 0.0 and float(g.max()) <= 1.0


def test_gate_is_differentiable_and_deterministic_gate_is_clipped() -> None:
    beta = torch.zeros(1000, requires_grad=True)
    GATE.sample(beta, 1.0, generator=torch.Generator().manual_seed(0)).sum().backward()
    assert beta.grad is not None and beta.grad.abs().sum() > 0
    det = GATE.deterministic(torch.tensor([-10.0, 0.0, 10.0]))
    assert det.tolist() == pytest.approx([0.0, 0.5, 1.0])
    with pytest.raises(ValueError):
        GATE.sample(beta, 0.0)


def _view() -> SupernetView:
    return SupernetView(SPACE.supernet(C=2, layers=3))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("tau", "skip", "nonskip", "path_mean", "path_sum"),
    [(0.1, 0.5597, 0.5597, 0.0981, 25.12), (10.0, 1.0, 1.0, 1.0, 256.0)],
)
def test_regularisers_at_beta_zero_match_the_research_note(
    tau: float, skip: float, nonskip: float, path_mean: float, path_sum: float
) -> None:
    view = _view()
    betas = [torch.zeros(14, 8), torch.zeros(14, 8)]
    cfg = prdarts_config("paper")
    total, info = regulariser(view, betas, tau, cfg)
    assert info["normal_L_skip"] == pytest.approx(skip, abs=1e-4)
    assert info["normal_L_non_skip"] == pytest.approx(nonskip, abs=1e-4)
    assert info["normal_L_path"] == pytest.approx(path_mean, abs=1e-4)
    expected = 0.01 * skip + 0.005 * nonskip - 0.005 * path_mean
    assert float(total) == pytest.approx(expected, abs=1e-6)
    _, lit = regulariser(view, betas, tau, prdarts_config("paper", path_aggregate="sum"))
    assert lit["reduce_L_path"] == pytest.approx(path_sum, rel=1e-3)
    _, z = regulariser(view, betas, tau, prdarts_config("paper", zeta="paper"))
    assert z["normal_L_skip"] == pytest.approx(skip * 14 / 21, abs=1e-4)  # 2/(7*6) * 14 edges


def test_official_code_regulariser_is_masked_and_hinged() -> None:
    view = _view()
    betas = [torch.zeros(14, 8), torch.full((14, 8), -5.0)]
    masks = [torch.zeros(14, 8), torch.zeros(14, 8)]
    masks[0][:, PRIMITIVES.index("skip_connect")] = 1.0
    total, info = regulariser(view, betas, 0.1, prdarts_config("official-code"), masks)
    assert info["normal_L_skip"] == pytest.approx(0.5597, abs=1e-4)  # per cell: unhinged
    assert info["reduce_L_skip"] == 0.0  # nothing of the group sampled
    assert info["normal_L_pool"] == 0.0
    assert info["L_skip"] == pytest.approx(0.5597 / 2 - 0.2, abs=1e-4)  # averaged, then hinged
    assert info["L_non_skip"] == 0.0 and info["L_pool"] == 0.0
    assert info["normal_L_path"] == 0.0  # no conv sampled on the chain: 0, as the official code
    assert float(total) == pytest.approx(0.01 * (0.5597 / 2 - 0.2), abs=1e-6)


def _beta_for(p: float, tau: float) -> float:
    """The log-odds whose activation probability P(g != 0) at ``tau`` is ``p``."""
    return float(torch.logit(torch.tensor(p, dtype=torch.float64))) + tau * GATE.log_ratio


@pytest.mark.slow
def test_official_code_hinge_follows_the_code_average_then_hinge() -> None:
    """By hand: skip activation 0.06 (normal) and 0.78 (reduce), every op sampled.

    The code: max((0.06 + 0.78) / 2 - 0.2, 0) = 0.22 for the skip group; hinging each cell
    first would give (max(0.06 - 0.2, 0) + max(0.78 - 0.2, 0)) / 2 = 0.29. The other
    ops sit at activation 0.01 (below the hinge, so their groups cost 0), and the path is
    the product over the 4 chain edges of the mean conv activation, 0.01 ** 4, per cell.
    """
    view = _view()
    tau = 0.5
    skip = PRIMITIVES.index("skip_connect")
    betas = [torch.full((14, 8), _beta_for(0.01, tau), dtype=torch.float64) for _ in range(2)]
    betas[0][:, skip] = _beta_for(0.06, tau)
    betas[1][:, skip] = _beta_for(0.78, tau)
    masks = [torch.ones(14, 8, dtype=torch.float64) for _ in range(2)]
    total, info = regulariser(view, betas, tau, prdarts_config("official-code"), masks)
    assert info["normal_L_skip"] == pytest.approx(0.06)
    assert info["reduce_L_skip"] == pytest.approx(0.78)
    assert info["L_skip"] == pytest.approx(0.22)
    assert info["L_non_skip"] == 0.0 and info["L_pool"] == 0.0
    assert float(total) == pytest.approx(0.01 * 0.22 - 0.005 * 0.01**4)
    per_cell_first = (max(0.06 - 0.2, 0) + max(0.78 - 0.2, 0)) / 2
    assert per_cell_first == pytest.approx(0.29)
    assert float(total) != pytest.approx(0.01 * per_cell_first - 0.005 * 0.01**4)
    # the paper preset has no hinge: both orders agree, the plain mean over cell types
    _, paper = regulariser(view, betas, tau, prdarts_config("paper"))
    assert paper["L_skip"] == pytest.approx(0.42)


def test_edge_selection_modes() -> None:
    gen = torch.Generator().manual_seed(0)
    g = torch.rand(14, 8, generator=gen).requires_grad_()
    w, m = select_edges(g, mode="all")
    assert w is g and bool(m.all())
    w, m = select_edges(g, mode="uniform2", exclude=[0], generator=gen)
    assert m.sum(1).tolist() == [2.0] * 14 and m[:, 0].sum() == 0
    assert torch.equal(w, g * m)
    w, m = select_edges(g, mode="topk_st", op_dropout=0.0, generator=gen)
    assert torch.equal(m, torch.zeros_like(g).scatter_(1, g.topk(2, dim=1).indices, 1.0))
    assert torch.allclose(w, m)  # straight-through: forward value is the hard mask
    w.sum().backward()
    assert torch.equal(g.grad, torch.ones_like(g))  # ... and the gradient reaches every gate
    with pytest.raises(ValueError):
        select_edges(g, mode="gdas")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "kind", "skips", "depth", "pdepth"),
    [
        (PR_DARTS, "normal", 1, 4, 4),
        (PR_DARTS, "reduce", 0, 4, 4),
        (DARTS_V2, "normal", 2, 2, 2),
        (DARTS_V2, "reduce", 3, 2, 0),
        (DARTS_V1, "normal", 3, 2, 1),
    ],
)
def test_published_cell_stats(text: str, kind: str, skips: int, depth: int, pdepth: int) -> None:
    stats = _view().stats(SPACE.parse(text))[kind]
    assert (stats.skips, stats.depth, stats.parametric_depth) == (skips, depth, pdepth)


def test_cell_stats_ignores_zero_edges() -> None:
    ops = OpSet(
        ("none", "skip_connect", "nor_conv_3x3"),
        zero="none",
        skip="skip_connect",
        parametric=["nor_conv_3x3"],
    )
    s = cell_stats([("none", 0, 1), ("nor_conv_3x3", 0, 2), ("skip_connect", 2, 3)], inputs=(0,), ops=ops)
    assert (s.edges, s.skips, s.parametric, s.depth, s.parametric_depth) == (2, 1, 1, 2, 1)


def test_convergence_factor_grows_with_skips_on_the_shared_path() -> None:
    view = _view()
    cell = view.cells[0]
    one_hot = view.one_hot(SPACE.parse(PR_DARTS))[0]
    plain = convergence_factor(one_hot, cell)
    # put skips on every edge into nodes 2..4, keep the convs into node 5
    w = one_hot.clone()
    for row, (_, t) in enumerate(cell.edges):
        if t < 5:
            w[row, PRIMITIVES.index("skip_connect")] = 1.0
    assert convergence_factor(w, cell) > plain > 0
    assert convergence_factor(w, cell, variant="chain") > 0
    with pytest.raises(ValueError):
        convergence_factor(w, cell, variant="other")

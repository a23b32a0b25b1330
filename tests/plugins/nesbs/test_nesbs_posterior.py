"""The posterior p_alpha: MC sampling, KL, the relaxation and projection, and the ELBO fit."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from nasforge.kernel.datasets import TensorData
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.supernet import SupernetMixin
from nasforge.kernel.supernet_topology import CellTopology, OneOpPerEdge, OpSet
from nasforge_nesbs.config import NesbsConfig
from nasforge_nesbs.decisions import ArchEncoding
from nasforge_nesbs.estimation import combine, ensemble_scores, prob_scores
from nasforge_nesbs.mixture import project, relaxed_log_prob
from nasforge_nesbs.posterior import ArchPosterior, kl_to_uniform, straight_through_sample
from nasforge_nesbs.posterior_fit import fit_posterior
from nasforge_nesbs.sampling import svgd_ensemble

CELL = CellTopology(
    "cell",
    OpSet(("a", "b", "c", "d")),
    edges=((0, 1), (0, 2), (1, 2)),
    inputs=(0,),
    output=(2,),
    rule=OneOpPerEdge(),
)
#: The op each edge should pick: it alone adds evidence for the true class.
GOOD = (2, 0, 3)


class AdditiveSupernet(SupernetMixin, nn.Module):
    """log-likelihood additive in the decisions: op GOOD[e] on edge e adds +1 to the true class."""

    topology = (CELL,)

    def __init__(self) -> None:
        super().__init__()
        self.alpha = nn.Parameter(torch.zeros(CELL.shape))
        self.bias = nn.Parameter(torch.zeros(2))
        self.bonus = torch.zeros(CELL.shape)
        self.bonus[range(3), list(GOOD)] = 1.0

    def arch_parameters(self):
        return [self.alpha]

    def weight_parameters(self):
        return [self.bias]

    def forward(self, x, weights=None, *, sparse=False):
        (w,) = weights
        s = (w * self.bonus).sum()
        return self.bias + x[:, :2] * s  # x one-hot of the label: evidence for the true class

    def kept_edges(self, g):
        raise NotImplementedError

    def genotype_of(self, kept):
        (cell,) = kept
        return Genotype(space="additive", version="1", choices=tuple(e.op for e in cell))


@pytest.fixture
def encoding():
    return ArchEncoding(AdditiveSupernet())


def test_mc_frequencies_follow_softmax_over_tau(encoding) -> None:
    logits = torch.tensor([[2.0, 0.0, -1.0, 0.5]] * 3)
    for tau in (0.5, 1.0, 4.0):
        post = ArchPosterior(encoding, logits, tau=tau)
        draws = torch.tensor(post.sample(4000, torch.Generator().manual_seed(0)))
        freq = torch.bincount(draws[:, 0], minlength=4).double() / 4000
        p = torch.softmax(logits[0].double() / tau, -1)
        assert torch.all((freq - p).abs() <= 3 * (p * (1 - p) / 4000).sqrt() + 1e-3), (tau, freq, p)


def test_kl_to_uniform_is_zero_at_uniform_and_positive_elsewhere(encoding) -> None:
    assert abs(float(kl_to_uniform(torch.zeros(3, 4), encoding.mask))) < 1e-12
    assert float(kl_to_uniform(torch.randn(3, 4), encoding.mask)) > 0


def test_straight_through_sample_is_one_hot_with_soft_gradient(encoding) -> None:
    logits = torch.zeros(3, 4, requires_grad=True)
    rows = straight_through_sample(logits, encoding.mask, torch.Generator().manual_seed(0))
    assert torch.equal(rows.detach().sum(-1), torch.ones(3)) and set(rows.detach().unique().tolist()) == {
        0.0,
        1.0,
    }
    (rows * torch.arange(4.0)).sum().backward()
    assert logits.grad.abs().sum() > 0


def test_projection_is_the_nearest_one_hot(encoding) -> None:
    post = ArchPosterior(encoding)
    x = torch.randn((6, 3, 4), generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    nearest = (x[:, :, None, :] - torch.eye(4, dtype=torch.float64)).norm(dim=-1).argmin(-1)
    assert project(x, post) == [tuple(r.tolist()) for r in nearest]


def test_relaxed_density_peaks_at_the_likely_one_hot(encoding) -> None:
    logits = torch.tensor([[3.0, 0.0, 0.0, 0.0]] * 3)
    post = ArchPosterior(encoding, logits)
    good = torch.eye(4, dtype=torch.float64)[[0, 0, 0]][None]
    bad = torch.eye(4, dtype=torch.float64)[[1, 1, 1]][None]
    assert float(relaxed_log_prob(good, post)) > float(relaxed_log_prob(bad, post))


@pytest.mark.slow
def test_svgd_delta_minus_one_gives_n_copies_of_the_mode(encoding) -> None:
    logits = torch.tensor([[1.5, 0.0, -0.5, 0.2], [0.0, 2.0, 0.1, 0.0], [0.3, 0.0, 0.0, 1.0]])
    post = ArchPosterior(encoding, logits)
    members = svgd_ensemble(post, 3, torch.Generator().manual_seed(0), delta=-1.0, steps=300)
    assert members == [post.mode()] * 3
    diverse = svgd_ensemble(post, 3, torch.Generator().manual_seed(0), delta=1.0, steps=300)
    assert len(set(diverse)) > 1


def test_fit_recovers_the_best_op_per_decision(encoding) -> None:
    gen = torch.Generator().manual_seed(0)
    y = torch.randint(0, 2, (256,), generator=gen)
    data = TensorData("additive", nn.functional.one_hot(y, 2).float(), y, 2)
    config = NesbsConfig(posterior_epochs=15, batch_size=32, posterior_lr=0.05)
    post = fit_posterior(encoding.supernet, encoding, data, config, gen)
    assert post.mode() == GOOD


def test_ensemble_loss_is_jensen_bounded_and_one_member_is_itself() -> None:
    gen = torch.Generator().manual_seed(0)
    outs = [torch.randn(50, 5, generator=gen) for _ in range(3)]
    y = torch.randint(0, 5, (50,), generator=gen)
    members = [prob_scores(torch.softmax(o.double(), -1), y)["nll"] for o in outs]
    assert ensemble_scores(outs, y)["nll"] <= sum(members) / 3
    assert abs(ensemble_scores([outs[0]] * 3, y)["nll"] - members[0]) < 1e-12
    assert torch.allclose(combine(outs, "mean-logits"), torch.softmax(torch.stack(outs).double().mean(0), -1))

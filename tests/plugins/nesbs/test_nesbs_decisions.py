"""The categorical encoding over the supernet contract, on NAS-Bench-201 and DARTS cells."""

from __future__ import annotations

import math

import pytest
import torch

from nasforge.api import load_space
from nasforge.kernel.seeding import seeded_build
from nasforge_nesbs.decisions import ArchEncoding


@pytest.fixture(scope="module")
def nb201_encoding():
    net = seeded_build(lambda: load_space("nb201").supernet(C=4, N=1, num_classes=3, in_channels=1), 0)
    return ArchEncoding(net)


@pytest.fixture(scope="module")
def darts_encoding():
    net = seeded_build(lambda: load_space("darts").supernet(C=4, layers=3, num_classes=3, in_channels=1), 0)
    return ArchEncoding(net)


def test_nb201_is_six_edges_of_five_ops(nb201_encoding) -> None:
    assert nb201_encoding.sizes == (5,) * 6


@pytest.mark.slow
def test_darts_is_a_pair_and_two_ops_per_node_without_the_zero_op(darts_encoding) -> None:
    """A5/A6: per cell type and node 2..5, one categorical over input pairs (1, 3, 6, 10) and
    two over the 7 non-zero ops."""
    per_cell = (1, 7, 7, 3, 7, 7, 6, 7, 7, 10, 7, 7)
    assert darts_encoding.sizes == per_cell * 2
    assert all("none" not in d.choices for d in darts_encoding.decisions)


@pytest.mark.parametrize("which", ["nb201_encoding", "darts_encoding"])
def test_assignments_round_trip_to_single_path_weights(which, request) -> None:
    """Every assignment is a valid genotype whose one-hot weights are the encoding's own."""
    enc = request.getfixturevalue(which)
    gen = torch.Generator().manual_seed(1)
    for _ in range(20):
        a = enc.uniform(gen)
        g = enc.genotype(a)
        mine = enc.weights_of(a)
        theirs = enc.supernet.one_hot_weights(g)
        assert all(torch.equal(m, t) for m, t in zip(mine, theirs, strict=True))


def test_straight_through_rows_reach_every_chosen_edge_weight(darts_encoding) -> None:
    rows = torch.zeros((len(darts_encoding), darts_encoding.max_size), requires_grad=True)
    w = darts_encoding.edge_weights(rows + darts_encoding.one_hot(darts_encoding.uniform(torch.Generator())))
    sum(t.sum() for t in w).backward()
    assert rows.grad is not None and rows.grad.abs().sum() > 0


def test_uniform_sampling_is_fair(nb201_encoding) -> None:
    """Prop. B.1's premise: every choice of every decision equally often (chi-square, p > 0.001)."""
    gen = torch.Generator().manual_seed(0)
    draws = torch.tensor([nb201_encoding.uniform(gen) for _ in range(5000)])
    for d in range(6):
        counts = torch.bincount(draws[:, d], minlength=5).double()
        chi2 = float(((counts - 1000) ** 2 / 1000).sum())
        assert chi2 < 18.47, (d, counts)  # chi-square, 4 dof, p = 0.001
    assert math.isclose(float(draws.double().mean()), 2.0, abs_tol=0.05)

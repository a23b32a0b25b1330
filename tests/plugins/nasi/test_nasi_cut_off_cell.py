"""NASI-FIX with μ = 1 can put ``none`` on all of node 3's edges in α*: the derived cell is
repaired (with a warning), never returned as a network that outputs a constant."""

from __future__ import annotations

import pytest
import torch

from nasforge.kernel.seeding import seeded_build
from nasforge_nasi.config import NasiConfig
from nasforge_nasi.supernet_relaxation import relaxation_for
from nasforge_nb201.supernet import TOPOLOGY


def _relaxation(nb201):
    supernet = seeded_build(lambda: nb201.supernet(C=4, N=1, num_classes=10), 0)
    return supernet, relaxation_for(supernet, NasiConfig(mode="fix", mu=1.0))


def test_a_cut_off_alpha_star_derives_a_connected_cell(nb201) -> None:
    supernet, relaxation = _relaxation(nb201)
    alpha = torch.zeros(TOPOLOGY.shape)
    alpha[:, TOPOLOGY.ops.column("none")] = 1.0  # node 3 (and every node) all none
    alpha[TOPOLOGY.row(0, 3), TOPOLOGY.ops.column("nor_conv_3x3")] = 0.7
    with pytest.warns(RuntimeWarning, match="outputs a constant"):
        g = relaxation.derive([alpha])
    (kept,) = supernet.kept_edges(g)
    assert TOPOLOGY.cut_off_outputs(kept) == ()
    assert nb201.format(g) == "|none~0|+|none~0|none~1|+|nor_conv_3x3~0|none~1|none~2|"


def test_a_sample_is_journaled_as_it_ran(nb201) -> None:
    supernet, relaxation = _relaxation(nb201)
    sample = torch.zeros(TOPOLOGY.shape)
    sample[:, TOPOLOGY.ops.column("none")] = 1.0
    g = relaxation.sampled_genotype([sample])
    assert nb201.format(g) == "|none~0|+|none~0|none~1|+|none~0|none~1|none~2|"

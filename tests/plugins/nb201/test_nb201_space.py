"""NB201Space: the conformance kit plus the benchmark-specific promises."""

from __future__ import annotations

import random
from collections import Counter

import pytest
import torch

from nasforge.kernel.errors import InvalidGenotypeError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.search_space import BUILD, ENCODE, ENUMERATE, MUTATE, NEIGHBOURS, SAMPLE, SUPERNET
from nasforge.kernel.testing.conformance import SearchSpaceConformance
from nasforge_nb201 import NB201Network, NB201Space, NB201Supernet


class TestNB201SpaceConformance(SearchSpaceConformance):
    @pytest.fixture
    def space(self) -> NB201Space:
        return NB201Space()

    @pytest.fixture
    def build_kwargs(self) -> dict:
        return {"C": 4, "N": 1}


def test_identity(space) -> None:
    assert space.name == "nb201" and space.version == "1"
    assert space.op_names == ("none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3")
    assert {SAMPLE, MUTATE, NEIGHBOURS, ENCODE, ENUMERATE, BUILD, SUPERNET} <= space.capabilities
    assert space.size == 15_625


@pytest.mark.slow
def test_enumerate_follows_benchmark_index_order(space, table_strings) -> None:
    assert [space.format(g) for g in space.enumerate()] == table_strings


@pytest.mark.slow
def test_index_of_is_the_table_row(space, table_strings) -> None:
    for i, text in enumerate(table_strings):
        g = space.parse(text)
        assert space.index_of(g) == i
        assert space.at_index(i) == g


def test_index_of_refuses_invalid(space) -> None:
    with pytest.raises(InvalidGenotypeError):
        space.index_of(Genotype("nb201", "1", ("none",) * 5))


@pytest.mark.slow
def test_neighbours_are_the_24_one_edge_changes(space) -> None:
    rng = random.Random(0)
    for _ in range(20):
        g = space.sample(rng)
        ns = space.neighbours(g)
        assert len(ns) == 24 == len(set(ns))
        for n in ns:
            space.validate(n)
            assert sum(a != b for a, b in zip(n.choices, g.choices, strict=True)) == 1
            assert g in space.neighbours(n)  # the relation is symmetric


def test_neighbours_order_is_edge_major(space) -> None:
    g = space.genotype(["none"] * 6)
    ns = space.neighbours(g)
    assert ns[0].choices == ("skip_connect",) + ("none",) * 5
    assert ns[3].choices == ("avg_pool_3x3",) + ("none",) * 5
    assert ns[-1].choices == ("none",) * 5 + ("avg_pool_3x3",)


def test_mutate_moves_to_a_neighbour(space) -> None:
    rng = random.Random(3)
    g = space.sample(rng)
    for _ in range(50):
        child = space.mutate(g, rng)
        assert child in space.neighbours(g)


def test_sample_is_uniform_per_edge(space) -> None:
    rng = random.Random(0)
    counts = [Counter() for _ in range(6)]
    for _ in range(5000):
        for e, op in enumerate(space.sample(rng).choices):
            counts[e][op] += 1
    for c in counts:
        assert set(c) == set(space.op_names)
        assert all(850 < v < 1150 for v in c.values()), c


@pytest.mark.slow
def test_encode_is_one_hot_and_decodes_back_for_every_cell(space) -> None:
    for g in space.enumerate():
        x = space.encode(g)
        assert x.shape == (30,) and x.dtype == torch.float32
        rows = x.reshape(6, 5)
        assert torch.equal(rows.sum(dim=1), torch.ones(6))
        assert space.decode(x) == g


def test_decode_takes_the_argmax_of_logits(space) -> None:
    logits = torch.full((6, 5), -1.0)
    logits[torch.arange(6), torch.tensor([3, 3, 4, 1, 3, 1])] = 2.0
    g = space.decode(logits)
    assert space.format(g) == (
        "|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|"
    )
    assert space.decode(logits.flatten()) == g


@pytest.mark.parametrize(
    "bad", [torch.zeros(29), torch.zeros(6, 6), torch.full((30,), float("nan")), [0.0] * 30]
)
def test_decode_rejects_bad_encodings(space, bad) -> None:
    with pytest.raises(InvalidGenotypeError):
        space.decode(bad)


def test_build_and_supernet_go_through_the_space(space) -> None:
    g = space.genotype(["nor_conv_1x1"] * 6)
    net = space.build(g, C=4, N=1, num_classes=3, in_channels=1)
    assert isinstance(net, NB201Network) and net.classifier.out_features == 3
    sup = space.supernet(C=4, N=1)
    assert isinstance(sup, NB201Supernet)
    with pytest.raises(InvalidGenotypeError):
        space.build(Genotype("nb201", "1", ("none",) * 5))

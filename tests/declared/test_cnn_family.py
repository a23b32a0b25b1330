"""The example family (examples/cnn_family.py): its size is the number of distinct networks,
its text form round-trips, and the conformance kits pass on it with nothing but a fixture."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from examples.cnn_family import CnnFamily
from nasforge.kernel.declared_reading import weightless
from nasforge.kernel.testing.conformance import SearchSpaceConformance
from nasforge.kernel.testing.supernet_conformance import SupernetConformance
from tests.declared.families import OneStage

#: A family small enough to enumerate: 3 stages of 1-2 blocks whose only choice is the
#: squeeze-and-excitation, so (2 + 4) ** 3 = 216 networks.
SMALL = {"depths": (1, 2), "kernels": (3,), "widths": (4,), "acts": ("relu",)}
#: Small enough for a supernet in a test, with every kind of its choices varying.
TINY = {"depths": (1, 2), "kernels": (3, 5), "widths": (4, 8), "acts": ("relu", "gelu")}


def architecture(net: nn.Module) -> tuple[Any, ...]:
    """A network's module types and parameter shapes, in order."""
    return tuple(
        (type(m).__name__, tuple((n, tuple(p.shape)) for n, p in m.named_parameters(recurse=False)))
        for m in net.modules()
    )


def test_the_example_is_at_most_40_lines() -> None:
    path = Path(__file__).resolve().parents[2] / "examples" / "cnn_family.py"
    assert len(path.read_text().splitlines()) <= 40


@pytest.mark.parametrize("space", [CnnFamily(**SMALL), OneStage()], ids=["cnn-family-small", "one-stage"])
def test_size_is_the_number_of_distinct_networks(space: Any) -> None:
    every = list(space.enumerate())
    assert len(every) == len(set(every)) == space.size
    with weightless():
        shapes = {architecture(space.build(g, in_channels=1)) for g in every}
    assert len(shapes) == space.size
    for g in every:
        assert space.parse(space.format(g)) == g


def test_the_full_family_counts_and_reads() -> None:
    space = CnnFamily()
    per_stage = sum(54**d for d in (1, 2, 3))
    assert space.size == per_stage**3
    g = space.sample(random.Random(3))
    assert space.format(g).startswith("stage1.depth=")
    assert space.parse(space.format(g)) == g


class TestCnnFamilySpace(SearchSpaceConformance):
    @pytest.fixture
    def space(self) -> CnnFamily:
        return CnnFamily()

    @pytest.fixture
    def input_shape(self) -> tuple[int, ...]:
        return (2, 3, 8, 8)


class TestCnnFamilySupernet(SupernetConformance):
    @pytest.fixture
    def space(self) -> CnnFamily:
        return CnnFamily(**TINY)

    @pytest.fixture
    def supernet_options(self) -> dict[str, Any]:
        return {"in_channels": 1, "num_classes": 4}

    @pytest.fixture
    def input_shape(self) -> tuple[int, ...]:
        return (1, 8, 8)


class TestOneStageSupernet(SupernetConformance):
    @pytest.fixture
    def space(self) -> OneStage:
        return OneStage()

    @pytest.fixture
    def supernet_options(self) -> dict[str, Any]:
        return {"num_classes": 3}


@pytest.mark.slow
def test_the_full_family_supernet_under_one_hot_weights_is_the_built_network() -> None:
    torch.manual_seed(0)
    space = CnnFamily()
    supernet = space.supernet(in_channels=1).eval()
    x = torch.randn(2, 1, 8, 8, generator=torch.Generator().manual_seed(0))
    rng = random.Random(0)
    for _ in range(20):
        g = space.sample(rng)
        built = space.build(g, in_channels=1).eval()
        built.load_state_dict(supernet.inherit(g).state_dict())
        with torch.no_grad():
            torch.testing.assert_close(
                built(x), supernet(x, supernet.one_hot_weights(g)), rtol=1e-6, atol=1e-6
            )

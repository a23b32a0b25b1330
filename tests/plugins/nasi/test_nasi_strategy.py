"""The ``nasi`` strategy end to end on NAS-Bench-201 and DARTS, in all three data modes."""

from __future__ import annotations

import pytest
import torch

from nasforge import get_registry
from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.testing.conformance import OneShotStrategyConformance
from nasforge_nasi import Nasi
from nasforge_nasi.batches import ProxyBatches
from nasforge_nasi.config import NasiConfig
from nasforge_nasi.supernet_relaxation import SupernetRelaxation
from tests.plugins.nasi.tiny import TINY


def test_registered_as_a_one_shot_strategy() -> None:
    assert get_registry().get("strategy", "nasi") is Nasi


@pytest.mark.slow
def test_nb201_search_is_valid_and_reproducible(nb201, digits) -> None:
    a = Nasi().fit(nb201, digits, **TINY)
    b = Nasi().fit(nb201, digits, **TINY)
    nb201.validate(a.best)
    assert a.best == b.best
    assert a.produced_by["run"]["alpha_star"] == b.produced_by["run"]["alpha_star"]
    run = a.produced_by["run"]
    assert len(run["proxies"]) == TINY["steps"] and len(run["calibration"]) == TINY["calibration_samples"]
    assert run["nu0"] == pytest.approx(sum(run["calibration"]) / len(run["calibration"]))
    assert a.produced_by["supernet"] == {"C": 4, "N": 1, "num_classes": 10, "in_channels": 1}


@pytest.mark.slow
def test_data_agnostic_search_needs_no_dataset(nb201) -> None:
    out = Nasi().fit(nb201, None, inputs="gaussian", input_shape=(3, 8, 8), num_classes=10, **TINY)
    nb201.validate(out.best)
    assert out.produced_by["data"] is None


def test_agnostic_batches_change_only_what_they_should(digits) -> None:
    def draw(**kw):
        return ProxyBatches(digits, batch_size=32, generator=torch.Generator().manual_seed(0), **kw)()

    x_true, y_true = draw()
    x_rl, y_rl = draw(labels="random")
    assert torch.equal(x_true, x_rl) and not torch.equal(y_true, y_rl)
    x_g, y_g = draw(inputs="gaussian")
    assert x_g.shape == x_true.shape and float(x_g.mean()) == pytest.approx(0.0, abs=0.1)
    assert int(y_g.max()) < 10


def test_bad_options_are_one_line_errors(nb201, digits) -> None:
    with pytest.raises(NasforgeError, match="does not accept"):
        Nasi().fit(nb201, digits, step=3)
    with pytest.raises(NasforgeError, match="bad nasi option"):
        Nasi().fit(nb201, digits, mode="sometimes")


@pytest.mark.slow
def test_darts_search_gives_a_valid_cell(digits) -> None:
    space = get_registry().get("space", "darts")()
    out = Nasi().fit(
        space, digits, steps=2, batch_size=8, calibration_samples=2, supernet={"C": 4, "layers": 3}
    )
    cells = space.cells(out.best)
    for cell in (cells.normal, cells.reduce):
        for k, (_, src) in enumerate(cell):
            assert src < 2 + k // 2


def test_darts_derivation_takes_top_two_ops_and_inputs() -> None:
    space = get_registry().get("space", "darts")()
    torch.manual_seed(0)
    relax = SupernetRelaxation(space.supernet(C=4, layers=3), pairing="rank-pair")
    assert relax.shapes == ((4, 7), (4, 5), (4, 7), (4, 5))  # per node: 7 non-zero ops, 5 sources
    cell_ops = relax.parts[0].cell_ops
    ops = torch.zeros(4, 7)
    ins = torch.zeros(4, 5)
    ops[:, cell_ops.index("sep_conv_3x3")] = 2.0
    ops[:, cell_ops.index("dil_conv_5x5")] = 1.0
    ins[:, 1] = 3.0
    ins[:, 0] = 2.0
    ins[3, 4] = 9.0  # node 5 may read node 4
    ins[0, 4] = 9.0  # node 2 may not: masked by the node's range
    g = relax.derive([ops, ins, ops, ins])
    cell = space.cells(g).normal
    assert cell[0] == ("sep_conv_3x3", 1) and cell[1] == ("dil_conv_5x5", 0)
    assert cell[6] == ("sep_conv_3x3", 4) and cell[7] == ("dil_conv_5x5", 1)
    shared = SupernetRelaxation(space.supernet(C=4, layers=3), pairing="shared-argmax-op")
    assert space.cells(shared.derive([ops, ins, ops, ins])).normal[1] == ("sep_conv_3x3", 0)


def test_config_round_trips_to_json() -> None:
    cfg = NasiConfig(input_shape=[3, 8, 8], supernet={"C": 4})
    assert NasiConfig(**cfg.to_json()) == cfg


class TestNasiConformance(OneShotStrategyConformance):
    @pytest.fixture
    def strategy_cls(self):
        return Nasi

    @pytest.fixture
    def strategy_options(self):
        return {"steps": 3, "batch_size": 8, "calibration_samples": 2, "supernet": {"C": 4, "N": 1}}

    @pytest.fixture
    def space(self, nb201):
        return nb201

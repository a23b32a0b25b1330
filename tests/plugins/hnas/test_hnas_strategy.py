"""The ``hnas`` strategy: conformance kit, an Experiment on NAS-Bench-201, short training."""

from __future__ import annotations

import pytest

from nasforge import api, get_registry
from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.result import Objective
from nasforge.run.conformance import StrategyRunConformance
from nasforge_hnas import Hnas
from nasforge_nb201.space import NB201Space

NB201_OPTS = {
    "steps": 6,
    "pool_size": 24,
    "batch_size": 16,
    "input_shape": [3, 8, 8],
    "build": {"C": 4, "N": 1},
}


@pytest.mark.slow  # HNAS's own tests (loop, search, command) stay fast; each kit check scores a pool
class TestHnasConformance(StrategyRunConformance):
    n_trials = 12

    @pytest.fixture
    def strategy_cls(self):
        return Hnas

    @pytest.fixture
    def strategy_options(self):
        return {
            "steps": 8,
            "pool_size": 30,
            "batch_size": 8,
            "input_shape": [8],
            "num_classes": 3,
            "gp_restarts": 1,
        }


def test_registered() -> None:
    assert get_registry().get("strategy", "hnas") is Hnas


@pytest.mark.slow
def test_experiment_on_the_table_picks_the_best_of_its_proposals(tmp_path) -> None:
    out = api.search(
        "nb201",
        "hnas",
        "nb201-table",
        dataset="cifar10",
        trials=6,
        seed=0,
        strategy_options=NB201_OPTS,
        run_dir=tmp_path / "run",
    )
    accs = [t.result.objectives["valid_accuracy"] for t in out.history]
    assert len(accs) == 6 and len({t.genotype for t in out.history}) == 6
    assert out.best_result.objectives["valid_accuracy"] == max(accs)
    again = api.resume(tmp_path / "run")
    assert again.best == out.best


def test_bad_options_are_nasforge_errors() -> None:
    with pytest.raises(NasforgeError):
        Hnas(NB201Space(), objective=Objective("x"), score="best")
    with pytest.raises(NasforgeError):
        Hnas(NB201Space(), objective=Objective("x"), pool_size=0)


@pytest.mark.slow
def test_short_training_on_digits_is_deterministic() -> None:
    space = NB201Space()
    short_train = get_registry().get("evaluator", "short-train")  # the core's, which HNAS uses
    ev = short_train(space, dataset="digits", epochs=1, build={"C": 4, "N": 1})
    g = space.parse("|nor_conv_3x3~0|+|skip_connect~0|nor_conv_1x1~1|+|avg_pool_3x3~0|none~1|nor_conv_3x3~2|")
    a, b = ev.evaluate(g), ev.evaluate(g)
    assert a.objectives == b.objectives
    assert 10.0 < a.objectives["valid_accuracy"] <= 100.0
    assert ev.describe()["build"] == {"C": 4, "N": 1, "num_classes": 10, "in_channels": 1}

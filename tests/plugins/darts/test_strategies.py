"""DARTS and PR-DARTS as registered one-shot strategies, on the DARTS and NB201 supernets.

Budgets here are smoke-sized (one epoch, two batch pairs); searches that mean something
run in the slow tests and the demo command.
"""

from __future__ import annotations

import pytest
import torch

from nasforge import OneShotStrategy, SearchOutcome, get_registry
from nasforge.kernel.datasets import TensorData
from nasforge.kernel.errors import CapabilityError, OptionError
from nasforge.run.builtin_datasets import load_digits
from nasforge_darts.darts_strategy import DartsConfig, DartsStrategy
from nasforge_darts.prdarts_config import prdarts_config
from nasforge_darts.prdarts_strategy import PRDartsStrategy
from nasforge_darts.space import DartsSpace

TINY = {"epochs": 1, "batch_size": 16, "max_batches": 2, "supernet": {"C": 2}, "darts_layers": 3}


@pytest.fixture(scope="module")
def digits() -> TensorData:
    torch.set_num_threads(1)
    data = load_digits()
    idx = torch.arange(0, len(data), 6)  # 300 samples keep evaluation passes short
    return TensorData("digits-small", data.x[idx], data.y[idx], 10)


def test_registered_as_one_shot_strategies() -> None:
    reg = get_registry(refresh=True)
    assert reg.get("strategy", "darts") is DartsStrategy
    assert reg.get("strategy", "prdarts") is PRDartsStrategy
    assert issubclass(DartsStrategy, OneShotStrategy)


@pytest.mark.slow
@pytest.mark.parametrize("order", [1, 2])
def test_darts_fit_on_digits_is_reproducible(digits: TensorData, order: int) -> None:
    space = DartsSpace()
    repeats = 2 if order == 1 else 1  # second order costs ~3x: reproducibility once is enough
    runs = [
        DartsStrategy(seed=3, order=order, progress=False, **TINY).fit(space, digits) for _ in range(repeats)
    ]
    out = runs[0]
    assert isinstance(out, SearchOutcome) and len(out.history) == 1
    space.validate(out.best)
    assert out.best == runs[-1].best
    assert out.produced_by["arch_parameters"] == runs[-1].produced_by["arch_parameters"]
    metrics = out.best_result.metadata["metrics"]
    assert 0.0 <= metrics["derived_val_accuracy"] <= 1.0 and "normal_lambda_literal" in metrics
    assert out.produced_by["config"]["order"] == order


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["paper", "official-code"])
def test_prdarts_fit_on_digits(digits: TensorData, preset: str) -> None:
    out = PRDartsStrategy(preset=preset, seed=0, progress=False, **TINY).fit(DartsSpace(), digits)
    DartsSpace().validate(out.best)
    metrics = out.best_result.metadata["metrics"]
    assert metrics["tau"] == pytest.approx(0.1)  # one epoch: the schedule ends at tau_min
    assert 0.0 < metrics["exact_zero_gates"] < 1.0  # hard-concrete gates are exactly 0 often
    assert out.produced_by["config"]["preset"] == preset
    assert ("normal_L_pool" in metrics) == (preset == "official-code")


def test_options_override_presets_and_are_validated() -> None:
    s = PRDartsStrategy(preset="official-code", tau_max=2.0)
    assert s.config.tau_max == 2.0 and s.config.edge_select == "topk_st"
    with pytest.raises(ValueError):
        prdarts_config("nope")
    with pytest.raises(ValueError):
        PRDartsStrategy(tau_max=0.05)  # below tau_min
    with pytest.raises(ValueError):
        DartsConfig(order=3)
    with pytest.raises(OptionError, match=r"darts does not accept option\(s\) \['learning_rate'\]"):
        DartsStrategy(learning_rate=0.1)


def test_refuses_a_space_without_a_readable_supernet(digits: TensorData) -> None:
    class Bare(DartsSpace):
        name = "bare"
        capabilities = frozenset({"sample"})

    with pytest.raises(CapabilityError):
        DartsStrategy(progress=False, **TINY).fit(Bare(), digits)


@pytest.mark.parametrize("strategy", [DartsStrategy, PRDartsStrategy])
def test_runs_on_the_nb201_supernet_and_reads_the_table(digits: TensorData, strategy: type) -> None:
    nb201 = get_registry().get("space", "nb201")()
    out = strategy(
        seed=0, progress=False, epochs=1, batch_size=16, max_batches=2, supernet={"C": 4, "N": 1}
    ).fit(nb201, digits)
    nb201.validate(out.best)
    assert len(out.best.choices) == 6
    from nasforge_nb201.table import accuracy

    acc = accuracy(nb201.index_of(out.best), "cifar10")
    assert 0.0 < acc < 100.0
    assert "cell_skip_share" in out.best_result.metadata["metrics"]
    if strategy is PRDartsStrategy:  # research note A20: the zero op is never derived
        assert "none" not in out.best.choices

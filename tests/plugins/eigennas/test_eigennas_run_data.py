"""Eigen-NAS scores on the run's data: the batch, and so the networks' input shape and
classes, are those the evaluator trains on; data-agnostic scoring happens only when asked.

Scoring used to draw 3x32x32 Gaussian inputs whatever the run's data: with ``--dataset
digits`` the trained mlp-res networks read 64 features (1x8x8) and the scored ones 192
(3 channels pooled to 8x8), so the ranking was of other networks than those evaluated.
"""

from __future__ import annotations

import logging

import pytest

from nasforge import api
from nasforge.kernel.errors import OptionError
from nasforge.kernel.registry import get_registry
from nasforge.run.experiment import Experiment
from nasforge_eigennas import EigenNas
from nasforge_eigennas.pool import build_options, scoring_batch

OPTIONS = {"sample_size": 6, "top_k": 2, "batch_size": 8, "build": {"width": 16}}


def _experiment(**strategy_options) -> Experiment:
    spec = api.build_spec(
        "mlp-res",
        "eigennas",
        "short-train",
        train_data="digits",
        trials=2,
        strategy_options={**OPTIONS, **strategy_options},
        evaluator_options={"epochs": 1, "build": {"width": 16}},
    )
    return Experiment.from_spec(spec, progress=False)


def test_candidates_are_scored_on_the_networks_the_run_trains() -> None:
    experiment = _experiment()
    strategy = experiment.strategy
    assert isinstance(strategy, EigenNas)
    assert strategy.settings.data == "digits"
    batch = scoring_batch(strategy.settings, None, strategy.data)
    assert batch.input_shape == (1, 8, 8) and batch.num_classes == 10
    g = strategy.ask()
    space = experiment.space
    scored = space.build(g, **build_options(space, strategy.settings, batch))
    trained = space.build(g, **experiment.evaluator.build_options)  # what short-train trains
    inputs = [
        next(m for m in net.modules() if hasattr(m, "in_features")).in_features for net in (scored, trained)
    ]
    assert inputs == [64, 64]  # 1x8x8 digits, in the scored and in the trained network


def test_a_run_without_training_data_must_ask_for_data_agnostic_scoring(caplog) -> None:
    registry = get_registry()
    space = registry.get("space", "nb201")()
    evaluator = registry.get("evaluator", "nb201-table")(space, dataset="cifar10")
    options = {"sample_size": 4, "top_k": 2, "batch_size": 4, "build": {"C": 4, "N": 1}}
    with pytest.raises(OptionError, match="score_data=gaussian"):
        EigenNas(space, objective=evaluator.objective, **options)
    agnostic = EigenNas(
        space, objective=evaluator.objective, score_data="gaussian", input_shape=(3, 8, 8), **options
    )
    with caplog.at_level(logging.WARNING, logger="nasforge.eigennas"):
        agnostic.ask()
    assert "data-agnostic" in caplog.text and "[3, 8, 8]" in caplog.text

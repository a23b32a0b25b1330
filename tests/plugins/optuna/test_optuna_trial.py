"""A nasforge space inside an Optuna study: suggested on a trial, read back from its params."""

from __future__ import annotations

import pytest

from nasforge.api import load_space
from nasforge.kernel.decisions import decisions_of, values_of
from nasforge.kernel.errors import InvalidGenotypeError
from nasforge_optuna import genotype_from_params, suggest_genotype

optuna = pytest.importorskip("optuna")


@pytest.mark.parametrize("name", ["nb201", "darts", "mlp-res", "act-mlp"])
def test_every_decision_is_a_categorical_parameter_of_the_trial(name: str) -> None:
    space = load_space(name)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    trial = study.ask()
    g = suggest_genotype(trial, space, prefix="arch.")
    space.validate(g)
    assert trial.params == {f"arch.{k}": v for k, v in values_of(space, g).items()}
    assert all(
        isinstance(trial.distributions[f"arch.{d.name}"], optuna.distributions.CategoricalDistribution)
        for d in decisions_of(space)
    )
    params = {**trial.params, "lr": 0.1}  # the pipeline's own parameters beside the architecture
    assert genotype_from_params(space, params, prefix="arch.") == g


def test_a_fixed_trial_builds_the_genotype_it_names() -> None:
    space = load_space("nb201")
    g = space.parse(
        "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_3x3~2|"
    )
    assert suggest_genotype(optuna.trial.FixedTrial(values_of(space, g)), space) == g


def test_params_of_another_space_are_refused_in_one_line() -> None:
    with pytest.raises(InvalidGenotypeError, match="decision") as info:
        genotype_from_params(load_space("nb201"), {"lr": 0.1})
    assert "\n" not in str(info.value)

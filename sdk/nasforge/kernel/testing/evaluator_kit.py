"""The conformance kit of an Evaluator: results of the declared objective, JSON-able, and a
foreign genotype refused."""

from __future__ import annotations

import json
import math

import pytest

from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.result import Objective, Result
from nasforge.kernel.testing.context_checks import require_buildable
from nasforge.kernel.testing.space_kit import samples


class EvaluatorConformance:
    """Provide ``evaluator`` (bound to its space) fixtures."""

    @pytest.fixture
    def evaluator(self) -> Evaluator:
        raise NotImplementedError("provide an `evaluator` fixture")

    def test_identity(self, evaluator: Evaluator) -> None:
        name = getattr(evaluator, "name", None)
        assert isinstance(name, str) and name, f"an evaluator's name must be a non-empty string, got {name!r}"
        objective = evaluator.objective
        assert isinstance(objective, Objective), f"objective must be an Objective, got {objective!r}"
        json.dumps(evaluator.describe())

    def test_builds_from_a_run_context(self, evaluator: Evaluator) -> None:
        """A run builds its evaluator through its hook (``cls(space, dataset=...,
        **options)`` plus the context fields it declares, or its own ``from_context``):
        each field it declares is one a run context holds, and its constructor takes what
        is passed."""
        require_buildable("evaluator", type(evaluator))

    def test_evaluate(self, evaluator: Evaluator) -> None:
        for g in samples(evaluator.space, 4):
            r = evaluator.evaluate(g)
            assert isinstance(r, Result), f"evaluate({g}) returned a {type(r).__name__}, not a Result"
            assert r.cost >= 0, f"evaluate({g}) cost {r.cost} < 0"
            if not r.failed:
                name = evaluator.objective.name
                assert name in r.objectives, (
                    f"evaluate({g}) lacks its objective '{name}': {sorted(r.objectives)}"
                )
                assert not math.isnan(r.objectives[name]), f"evaluate({g}) gives {name} = NaN without failing"
            json.dumps(r.to_json())

    def test_rejects_foreign_genotype(self, evaluator: Evaluator) -> None:
        g = samples(evaluator.space, 1)[0]
        foreign = Genotype(space=g.space + "-other", version=g.version, choices=g.choices)
        with pytest.raises(NasforgeError):
            evaluator.evaluate(foreign)

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
from nasforge.kernel.testing.space_kit import samples


class EvaluatorConformance:
    """Provide ``evaluator`` (bound to its space) fixtures."""

    @pytest.fixture
    def evaluator(self) -> Evaluator:
        raise NotImplementedError("provide an `evaluator` fixture")

    def test_identity(self, evaluator: Evaluator) -> None:
        assert isinstance(evaluator.name, str) and evaluator.name
        assert isinstance(evaluator.objective, Objective)
        json.dumps(evaluator.describe())

    def test_evaluate(self, evaluator: Evaluator) -> None:
        for g in samples(evaluator.space, 4):
            r = evaluator.evaluate(g)
            assert isinstance(r, Result)
            assert r.cost >= 0
            if not r.failed:
                assert evaluator.objective.name in r.objectives
                assert not math.isnan(r.objectives[evaluator.objective.name])
            json.dumps(r.to_json())

    def test_rejects_foreign_genotype(self, evaluator: Evaluator) -> None:
        g = samples(evaluator.space, 1)[0]
        foreign = Genotype(space=g.space + "-other", version=g.version, choices=g.choices)
        with pytest.raises(NasforgeError):
            evaluator.evaluate(foreign)

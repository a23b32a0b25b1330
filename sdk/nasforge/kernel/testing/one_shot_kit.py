"""The conformance kit of a OneShotStrategy: a valid, journalable, seeded outcome, and a
space without a supernet refused when the strategy needs one."""

from __future__ import annotations

import json
from typing import Any

import pytest
import torch

from nasforge.kernel.datasets import TensorData
from nasforge.kernel.errors import CapabilityError
from nasforge.kernel.one_shot import OneShotStrategy
from nasforge.kernel.outcome import SearchOutcome
from nasforge.kernel.result import Trial
from nasforge.kernel.search_space import SUPERNET, SearchSpace
from nasforge.kernel.testing.space_kit import KNOWN_CAPABILITIES
from nasforge.kernel.testing.toy import ToySpace


class OneShotStrategyConformance:
    """Provide ``strategy_cls``, tiny ``strategy_options`` and a ``space`` with a supernet."""

    @pytest.fixture
    def strategy_cls(self) -> type[OneShotStrategy]:
        raise NotImplementedError("provide a `strategy_cls` fixture returning your OneShotStrategy class")

    @pytest.fixture
    def strategy_options(self) -> dict[str, Any]:
        return {}

    @pytest.fixture
    def space(self) -> SearchSpace:
        raise NotImplementedError("provide a `space` fixture (with the 'supernet' capability)")

    @pytest.fixture
    def data(self) -> TensorData:
        gen = torch.Generator().manual_seed(0)  # the built-in 'gaussian' dataset's draw
        x = torch.randn((48, 3, 8, 8), generator=gen)
        return TensorData("gaussian", x, torch.randint(0, 4, (48,), generator=gen), 4)

    def _fit(self, cls, options, space, data, seed: int = 0):
        seen: list[Trial] = []
        outcome = cls(seed=seed, progress=False, **options).fit(space, data, on_trial=seen.append)
        return outcome, seen

    def test_identity(self, strategy_cls) -> None:
        assert isinstance(strategy_cls.name, str) and strategy_cls.name
        assert strategy_cls.requires <= KNOWN_CAPABILITIES

    def test_fit_returns_valid_outcome(self, strategy_cls, strategy_options, space, data) -> None:
        outcome, seen = self._fit(strategy_cls, strategy_options, space, data)
        assert isinstance(outcome, SearchOutcome)
        space.validate(outcome.best)
        assert seen, "on_trial must be called as the search goes"
        for trial in seen:
            space.validate(trial.genotype)
        json.dumps([t.to_json() for t in seen])  # journalable

    def test_deterministic_given_seed(self, strategy_cls, strategy_options, space, data) -> None:
        a, _ = self._fit(strategy_cls, strategy_options, space, data)
        b, _ = self._fit(strategy_cls, strategy_options, space, data)
        assert a.best == b.best
        assert [t.genotype for t in a.history] == [t.genotype for t in b.history]

    def test_refuses_space_without_supernet(self, strategy_cls, strategy_options, data) -> None:
        if SUPERNET not in strategy_cls.requires:
            return  # the strategy does not need one: nothing to refuse
        with pytest.raises(CapabilityError):
            self._fit(strategy_cls, strategy_options, ToySpace(), data)

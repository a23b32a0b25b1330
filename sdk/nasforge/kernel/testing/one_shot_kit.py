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
from nasforge.kernel.run_context import RunContext
from nasforge.kernel.search_space import SUPERNET, SearchSpace
from nasforge.kernel.testing.context_checks import build_as_a_run, require_buildable
from nasforge.kernel.testing.driver import first_difference
from nasforge.kernel.testing.space_kit import KNOWN_CAPABILITIES
from nasforge.kernel.testing.toy import ToySpace


class OneShotStrategyConformance:
    """Provide ``strategy_cls``, tiny ``strategy_options`` and a ``space`` with a supernet.

    Every check builds the strategy as a run does, through its hook
    (:meth:`run_context`: the seed, no progress bar; override it to hand more).
    """

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

    def run_context(self, seed: int = 0) -> RunContext:
        """What the checks' runs hand the strategy."""
        return RunContext(seed=seed, progress=False)

    def _fit(self, cls, options, space, data, seed: int = 0):
        seen: list[Trial] = []
        strategy = build_as_a_run("strategy", cls, self.run_context(seed), **options)
        outcome = strategy.fit(space, data, on_trial=seen.append)
        return outcome, seen

    def test_identity(self, strategy_cls) -> None:
        name = getattr(strategy_cls, "name", None)
        assert isinstance(name, str) and name, f"a strategy's name must be a non-empty string, got {name!r}"
        unknown = set(strategy_cls.requires) - KNOWN_CAPABILITIES
        assert not unknown, (
            f"requires names unknown capabilities {sorted(unknown)} (known: {sorted(KNOWN_CAPABILITIES)})"
        )

    def test_builds_from_a_run_context(self, strategy_cls, strategy_options) -> None:
        """A run builds every strategy through its hook (see the kit's docstring)."""
        require_buildable("strategy", strategy_cls)
        strategy = build_as_a_run("strategy", strategy_cls, self.run_context(3), **strategy_options)
        assert isinstance(strategy, strategy_cls), (
            f"the hook built a {type(strategy).__name__}, not a {strategy_cls.__name__}"
        )

    def test_fit_returns_valid_outcome(self, strategy_cls, strategy_options, space, data) -> None:
        outcome, seen = self._fit(strategy_cls, strategy_options, space, data)
        assert isinstance(outcome, SearchOutcome), (
            f"fit returned a {type(outcome).__name__}, not a SearchOutcome"
        )
        space.validate(outcome.best)
        assert seen, "on_trial must be called as the search goes"
        for trial in seen:
            space.validate(trial.genotype)
        json.dumps([t.to_json() for t in seen])  # journalable

    def test_deterministic_given_seed(self, strategy_cls, strategy_options, space, data) -> None:
        a, _ = self._fit(strategy_cls, strategy_options, space, data)
        b, _ = self._fit(strategy_cls, strategy_options, space, data)
        assert a.best == b.best, f"same seed and data, different best: {a.best} vs {b.best}"
        history_a, history_b = [t.genotype for t in a.history], [t.genotype for t in b.history]
        assert history_a == history_b, (
            f"same seed and data, different histories: {first_difference(history_a, history_b)}"
        )

    def test_refuses_space_without_supernet(self, strategy_cls, strategy_options, data) -> None:
        if SUPERNET not in strategy_cls.requires:
            return  # the strategy does not need one: nothing to refuse
        with pytest.raises(CapabilityError):
            self._fit(strategy_cls, strategy_options, ToySpace(), data)

"""Test suites every SearchSpace, Strategy, Evaluator and Metric plugin must pass.

Usage, in the plugin's own tests (pytest collects the inherited ``test_*`` methods)::

    from nasforge.kernel.testing.conformance import SearchSpaceConformance

    class TestMySpace(SearchSpaceConformance):
        @pytest.fixture
        def space(self):
            return MySpace()

The checks are about the contract the core relies on (validity, determinism, lossless
round trips, resume by replay), not about search quality. Each suite lives in the module of
its contract; this one gathers them.
"""

from nasforge.kernel.testing.evaluator_kit import EvaluatorConformance
from nasforge.kernel.testing.metric_kit import MetricConformance
from nasforge.kernel.testing.one_shot_kit import OneShotStrategyConformance
from nasforge.kernel.testing.space_kit import KNOWN_CAPABILITIES, SearchSpaceConformance
from nasforge.kernel.testing.strategy_kit import MultiObjectiveStrategyConformance, StrategyConformance

__all__ = [
    "KNOWN_CAPABILITIES",
    "EvaluatorConformance",
    "MetricConformance",
    "MultiObjectiveStrategyConformance",
    "OneShotStrategyConformance",
    "SearchSpaceConformance",
    "StrategyConformance",
]

"""The conformance kit of a Metric: a deterministic float that no global generator moves."""

from __future__ import annotations

import pytest
import torch

from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.metric import Metric, MetricContext, MetricInfo
from nasforge.kernel.seeding import seeded_build
from nasforge.kernel.testing.context_checks import require_buildable


class MetricConformance:
    """Provide ``metric``; ``model`` and ``batch`` default to a small conv net and batch."""

    @pytest.fixture
    def metric(self) -> Metric:
        raise NotImplementedError("provide a `metric` fixture")

    @pytest.fixture
    def model_factory(self):  # noqa: ANN201 - returns a callable
        def make() -> torch.nn.Module:
            return seeded_build(
                lambda: torch.nn.Sequential(
                    torch.nn.Conv2d(3, 8, 3, padding=1),
                    torch.nn.BatchNorm2d(8),
                    torch.nn.ReLU(),
                    torch.nn.AdaptiveAvgPool2d(1),
                    torch.nn.Flatten(),
                    torch.nn.Linear(8, 10),
                ),
                0,
            )

        return make

    @pytest.fixture
    def batch(self) -> tuple[torch.Tensor, torch.Tensor]:
        gen = torch.Generator().manual_seed(0)
        return torch.randn(8, 3, 16, 16, generator=gen), torch.randint(0, 10, (8,), generator=gen)

    def test_info(self, metric: Metric) -> None:
        info = metric.info
        assert isinstance(info, MetricInfo), f"info must be a MetricInfo, got {info!r}"
        assert metric.name == info.name, (
            f"metric name {metric.name!r} differs from info.name {info.name!r}: scores are filed under "
            "the one and asked for under the other (set info alone; name follows it)"
        )

    def test_builds_from_a_run_context(self, metric: Metric) -> None:
        """A scorer builds a metric through its hook (``cls()`` plus the context fields it
        declares, or its own ``from_context``): each field it declares is one a run
        context holds, and its constructor takes what is passed."""
        require_buildable("metric", type(metric))

    def test_score_is_float_and_deterministic(self, metric: Metric, model_factory, batch) -> None:
        ctx = MetricContext(num_classes=10, seed=0)
        if metric.info.population:  # only meaningful across many networks: must say so
            with pytest.raises(NasforgeError):
                metric.score(model_factory(), batch, ctx=ctx)
            return
        a = metric.score(model_factory(), batch, ctx=ctx)
        b = metric.score(model_factory(), batch, ctx=ctx)
        assert isinstance(a, float), f"score returned a {type(a).__name__} ({a!r}), not a float"
        assert a == pytest.approx(b, rel=1e-5, nan_ok=True), f"the same network scored {a} then {b}"

    def test_score_ignores_the_global_generator(self, metric: Metric, model_factory, batch) -> None:
        """Random numbers come from ``ctx.seed`` (scorers never seed torch's global
        generator, and other threads share it), so its state must not change a score."""
        if metric.info.population:
            return
        ctx = MetricContext(num_classes=10, seed=0)
        scores = []
        for state in (1, 2):
            torch.manual_seed(state)
            scores.append(metric.score(model_factory(), batch, ctx=ctx))
        assert scores[0] == pytest.approx(scores[1], rel=1e-5, nan_ok=True), (
            f"torch's global generator moved the score: {scores[0]} (state 1) vs {scores[1]} (state 2)"
        )

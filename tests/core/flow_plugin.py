"""A test-only plugin whose components have names no installed plugin uses.

A run given a registry that holds this plugin must find them, where the process-wide
registry (``nasforge.get_registry()``) cannot: that is how the tests see that the
registry a caller passes is the one used all the way down. ``Recorder`` counts the
event hooks a run fires.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, ClassVar

import torch
from torch import nn

from nasforge import hookimpl
from nasforge.kernel.datasets import DatasetSource, TensorData
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.metric import Batch, Metric, MetricContext, MetricInfo
from nasforge.kernel.one_shot import OneShotStrategy
from nasforge.kernel.outcome import SearchOutcome
from nasforge.kernel.registry import Registry, load_registry
from nasforge.kernel.result import Result, Trial
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.strategy import Strategy
from nasforge.kernel.testing.toy import ToyEvaluator, ToySpace

SPACE, STRATEGY, ONE_SHOT, EVALUATOR, DATASET, METRIC = (
    "flow-space",
    "flow-random",
    "flow-oneshot",
    "flow-eval",
    "flow-data",
    "flow-width",
)
#: Input features and classes of the flow dataset: what the toy network's build takes.
FEATURES, CLASSES = 8, 3


class FlowSpace(ToySpace):
    """The toy space under a name of its own."""

    name = SPACE


class FlowEvaluator(ToyEvaluator):
    name = EVALUATOR
    spaces = frozenset({SPACE})


class FlowRandom(Strategy):
    """Uniform sampling; keeps the registry the run handed it."""

    name: ClassVar[str] = STRATEGY
    context_fields = Strategy.context_fields | {"registry"}

    def __init__(
        self, space: SearchSpace, *, objective: Any, seed: int = 0, registry: Registry | None = None
    ):
        super().__init__(space, objective=objective, seed=seed)
        self.registry = registry

    def ask(self) -> Genotype:
        return self.space.sample(self.rng)

    def tell(self, g: Genotype, result: Result) -> None:
        pass


class FlowOneShot(OneShotStrategy):
    """A one-shot strategy that trains nothing: one trial per step, each a seeded sample.

    It keeps the registry and the data the run handed it, so a test can see both.
    """

    name: ClassVar[str] = ONE_SHOT
    context_fields = OneShotStrategy.context_fields | {"progress", "registry"}

    def __init__(
        self, *, seed: int = 0, progress: bool = False, steps: int = 3, registry: Registry | None = None
    ) -> None:
        super().__init__(seed=seed, progress=progress)
        self.steps, self.registry, self.data = steps, registry, None

    def fit(
        self,
        space: SearchSpace,
        data: Any,
        *,
        on_trial: Callable[[Trial], None] | None = None,
        **options: Any,
    ) -> SearchOutcome:
        self.data = data
        rng = random.Random(self.seed)
        trials = []
        for step in range(self.steps):
            g = space.sample(rng)
            trial = Trial(index=step, genotype=g, result=Result(objectives={"step": float(step)}, cost=0.0))
            trials.append(trial)
            if on_trial is not None:
                on_trial(trial)
        return SearchOutcome(best=trials[-1].genotype, best_result=trials[-1].result, history=tuple(trials))


class FlowWidth(Metric):
    """The number of parameters of the last layer: a metric only this plugin has."""

    info: ClassVar[MetricInfo] = MetricInfo(
        name=METRIC, needs_labels=False, needs_data=False, description="test", version="1"
    )

    def score(self, model: nn.Module, batch: Batch, *, ctx: MetricContext) -> float:
        return float(sum(p.numel() for p in list(model.parameters())[-2:]))


def load_flow_data(*, seed: int = 0, n: int = 120) -> TensorData:
    """Seeded Gaussian features with labels the features decide (learnable, so training helps)."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn((n, FEATURES), generator=gen)
    y = (x[:, :CLASSES].argmax(dim=1)).to(torch.int64)
    return TensorData(DATASET, x, y, CLASSES)


class FlowPlugin:
    @hookimpl
    def nasforge_register_search_spaces(self) -> list:
        return [FlowSpace]

    @hookimpl
    def nasforge_register_strategies(self) -> list:
        return [FlowRandom, FlowOneShot]

    @hookimpl
    def nasforge_register_evaluators(self) -> list:
        return [FlowEvaluator]

    @hookimpl
    def nasforge_register_metrics(self) -> list:
        return [FlowWidth]

    @hookimpl
    def nasforge_register_datasets(self) -> list:
        return [DatasetSource(DATASET, "seeded Gaussian features, 3 classes (tests)", load_flow_data)]


class Recorder:
    """Counts the event hooks a run fires, with what they were given."""

    def __init__(self) -> None:
        self.trials: list[tuple[Any, Trial]] = []
        self.ends: list[tuple[Any, SearchOutcome]] = []

    @hookimpl
    def nasforge_trial_end(self, experiment: Any, trial: Trial) -> None:
        self.trials.append((experiment, trial))

    @hookimpl
    def nasforge_search_end(self, experiment: Any, outcome: SearchOutcome) -> None:
        self.ends.append((experiment, outcome))


def flow_registry(*extra: Any) -> Registry:
    """The core's built-ins, the flow plugin and ``extra``: no installed plugin at all."""
    return load_registry(entry_points=False, extra_plugins=[FlowPlugin(), *extra])

"""A tiny, fully featured search space and evaluator for tests, demos and plugin authors.

Four slots, each one of three layer types: 81 architectures, declared in a few lines of
PyTorch (every capability but a supernet derived from the declaration), networks small
enough to build thousands of in a test. ``ToyEvaluator`` scores a
genotype with a fixed, deterministic function that has interactions between slots, so
that search strategies have something non-trivial but instant to optimise.

The module is a plugin too, registered by nobody by default: ``NASFORGE_PLUGINS=
nasforge.kernel.testing.toy nasforge search --space toy --evaluator toy`` searches it.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable

from torch import nn

from nasforge.kernel.declared_chooser import Chooser
from nasforge.kernel.declared_space import DeclaredSpace
from nasforge.kernel.errors import InvalidGenotypeError, UnknownNameError
from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.fidelity import should_stop
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.hookspecs import hookimpl
from nasforge.kernel.result import Objective, Result
from nasforge.kernel.search_space import (
    BUILD,
    DECISIONS,
    ENCODE,
    ENUMERATE,
    MUTATE,
    NEIGHBOURS,
    SAMPLE,
    SearchSpace,
)

TOY_OPS = ("linear", "relu_linear", "skip")
SLOTS = 4


class ToySpace(DeclaredSpace):
    """Four slots x three layer types (81 architectures); canonical form ``linear-skip-...``.

    A declaration (:mod:`nasforge.kernel.declared_space`) that keeps its own text form and
    declares no supernet: the kits use it as the space a one-shot method must refuse.
    """

    name = "toy"
    version = "1"
    capabilities = frozenset({SAMPLE, MUTATE, NEIGHBOURS, ENCODE, ENUMERATE, BUILD, DECISIONS})
    op_names = TOY_OPS

    def declare(
        self, c: Chooser, *, in_features: int = 8, width: int = 16, num_classes: int = 3
    ) -> nn.Module:
        ops: dict[str, Callable[[], nn.Module]] = {
            "linear": lambda: nn.Linear(width, width),
            "relu_linear": lambda: nn.Sequential(nn.ReLU(), nn.Linear(width, width)),
            "skip": nn.Identity,
        }
        slots = [c.layer(f"slot{i}", ops, cell="slots") for i in range(SLOTS)]
        return nn.Sequential(
            nn.Flatten(), nn.Linear(in_features, width), *slots, nn.Linear(width, num_classes)
        )

    def format(self, g: Genotype) -> str:
        return "-".join(str(c) for c in g.choices)

    def parse(self, text: str) -> Genotype:
        parts = text.strip().split("-")
        for p in parts:
            if p not in TOY_OPS:
                raise InvalidGenotypeError(str(UnknownNameError("toy op", p, TOY_OPS)))
        if len(parts) != SLOTS:
            raise InvalidGenotypeError(f"toy genotype '{text}' needs {SLOTS} ops, got {len(parts)}")
        return self.genotype(parts)


_VALUE = {"linear": 1.0, "relu_linear": 2.0, "skip": 0.0}


class ToyEvaluator(Evaluator):
    """A deterministic synthetic objective over the toy space (optimum: 'relu_linear-skip-...').

    Results also carry ``size`` (0 for skip, 1 for linear, 2 for relu_linear, summed;
    smaller is better), which ``score`` rises with: a real trade-off, so multi-objective
    strategies and the conformance kit have a Pareto front to find.
    """

    name = "toy"
    simulated = True
    spaces = frozenset({"toy"})

    @property
    def objective(self) -> Objective:
        return Objective("score", higher_is_better=True)

    @property
    def objectives(self) -> dict[str, Objective]:
        return {"score": self.objective, "size": Objective("size", higher_is_better=False)}

    def evaluate(self, g: Genotype) -> Result:
        self.space.validate(g)
        v = [_VALUE[str(c)] for c in g.choices]
        # rewards alternating depth: a mild interaction so greedy moves are not enough
        score = sum(v) + 1.5 * sum(1 for a, b in itertools.pairwise(v) if (a == 0) != (b == 0))
        return Result(objectives={"score": score, "size": sum(v)}, cost=1.0 + sum(v))


class ToyFidelityEvaluator(ToyEvaluator):
    """:class:`ToyEvaluator` with a fidelity: ``epochs`` of make-believe training.

    At ``f`` of its ``epochs`` a genotype scores a mix of its true score (weight
    ``f/epochs``) and a fixed, genotype-specific distortion, so short evaluations rank
    architectures roughly but not exactly as full ones do: what multi-fidelity strategies
    (successive halving, Hyperband) must cope with. Cost is simulated: one second an epoch.
    """

    name = "toy-epochs"
    fidelity = "epochs"

    def __init__(self, space: SearchSpace, *, dataset: str | None = None, epochs: int = 9) -> None:
        super().__init__(space, dataset=dataset)
        if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
            raise ValueError(f"toy-epochs needs epochs >= 1, got {epochs!r}")
        self.epochs = epochs

    def evaluate(self, g: Genotype) -> Result:
        return self.evaluate_at(g, None)

    def evaluate_at(
        self, g: Genotype, fidelity: int | None, *, stop_below: tuple[float, ...] | None = None
    ) -> Result:
        full = super().evaluate(g)
        epochs = self.epochs if fidelity is None else fidelity
        if not 1 <= epochs <= self.epochs:
            raise ValueError(f"toy-epochs evaluates 1 to {self.epochs} epochs, not {epochs}")
        distortion = random.Random(str(g.choices)).uniform(0.0, 12.0)
        curve: list[float] = []
        for e in range(1, epochs + 1):
            curve.append(self._at(full.objectives["score"], distortion, e))
            if should_stop(stop_below, e, curve[-1], higher_is_better=True):
                break
        stopped = {"stopped_at": len(curve)} if len(curve) < epochs else {}
        return Result(
            objectives={"score": curve[-1], "size": full.objectives["size"]},
            cost=float(len(curve)),
            metadata={"epochs": len(curve), "per_epoch": {"score": curve}, **stopped},
        )

    def _at(self, score: float, distortion: float, epochs: int) -> float:
        w = epochs / self.epochs
        return w * score + (1.0 - w) * distortion

    def describe(self) -> dict[str, object]:
        return {**super().describe(), "epochs": self.epochs}


@hookimpl
def nasforge_register_search_spaces() -> list:
    return [ToySpace]


@hookimpl
def nasforge_register_evaluators() -> list:
    return [ToyEvaluator, ToyFidelityEvaluator]

"""The median stopping rule (Golovin et al., 2017; Optuna's MedianPruner) around any strategy.

A trial whose learning curve falls below the median of the completed trials' curves at
the same epoch is stopped there: the evaluator trains on only while the architecture
keeps up with what earlier ones reached. The thresholds are computed when the trial is
asked, from the results told so far, and travel with the proposal
(:attr:`nasforge.Proposal.stop_below`), so the evaluator stops by itself on any
executor, and a resumed run, told the same results in the same order, asks with the
same thresholds (resume is replay). A stopped trial is journaled as stopped
(``metadata["stopped_at"]``) with the value it reached; it is told to the inner strategy
as it is (a low value), never chosen as the best, and its curve is not part of later
medians (only completed curves are, as in Optuna).

    nasforge search --strategy median -o strategy=rea --evaluator short-train ...
"""

from __future__ import annotations

import statistics
from typing import Any

from nasforge import Genotype, Objective, Proposal, Result, SearchSpace, Strategy
from nasforge.kernel.errors import OptionError
from nasforge.kernel.fidelity import split
from nasforge.kernel.option_types import MAX_COUNT, check_option
from nasforge.kernel.registry import Registry, get_registry
from nasforge.kernel.run_context import RunContext
from nasforge.run.construction import build_component


class MedianPruner(Strategy):
    """Median stopping rule around any strategy: ``strategy`` (with ``strategy_options``)
    proposes, and a trial whose curve falls below the median of completed ones is
    stopped, after ``warmup`` completed trials and never before epoch ``min_epochs``."""

    name = "median"
    requires = frozenset()  # the inner strategy checks its own
    #: The inner strategy comes from the run's registry and learns its full budget.
    context_fields = Strategy.context_fields | {"registry", "max_fidelity"}

    def __init__(
        self,
        space: SearchSpace,
        *,
        objective: Objective,
        seed: int = 0,
        strategy: str = "random",
        strategy_options: dict[str, Any] | None = None,
        warmup: int = 5,
        min_epochs: int = 1,
        max_fidelity: int | None = None,
        registry: Registry | None = None,
    ) -> None:
        super().__init__(space, objective=objective, seed=seed)
        check_option("warmup", warmup, int)
        check_option("min_epochs", min_epochs, int)
        if not 1 <= warmup <= MAX_COUNT or min_epochs < 1:
            raise OptionError(f"median needs 1 <= warmup <= {MAX_COUNT} and min_epochs >= 1")
        if strategy == self.name:
            raise OptionError("median cannot wrap itself; name another strategy")
        registry = registry if registry is not None else get_registry()
        # the inner strategy is built as the run builds one, from what this one was given
        inner = RunContext(seed=seed, registry=registry, max_fidelity=max_fidelity)
        self.inner: Strategy = build_component(
            "strategy",
            registry.get("strategy", strategy),
            inner,
            dict(strategy_options or {}),
            space,
            objective=objective,
            plugin=registry.origin("strategy", strategy),
        )
        self.warmup, self.min_epochs = warmup, min_epochs
        #: Completed (not stopped, not failed) learning curves, in the order told.
        self.curves: list[list[float]] = []
        #: What we asked -> what the inner strategy asked, for telling it back.
        self._pending: list[tuple[Proposal, Genotype | Proposal]] = []

    @property
    def finished(self) -> bool:
        return self.inner.finished

    def ask(self) -> Proposal:
        inner = self.inner.ask()
        g, fidelity = split(inner)
        proposal = Proposal(g, fidelity, stop_below=self._thresholds())
        self._pending.append((proposal, inner))
        return proposal

    def _thresholds(self) -> tuple[float, ...] | None:
        """The median of the completed curves at each epoch (NaN before ``min_epochs``)."""
        if len(self.curves) < self.warmup:
            return None
        longest = max(len(c) for c in self.curves)
        medians = []
        for epoch in range(longest):
            values = [c[epoch] for c in self.curves if len(c) > epoch]
            medians.append(statistics.median(values) if epoch + 1 >= self.min_epochs else float("nan"))
        # in the objective's units: pruning is on a higher-is-better curve (accuracy)
        return tuple(medians) if self.goal.objectives[0].higher_is_better else None

    def tell(self, g: Genotype | Proposal, result: Result) -> None:
        inner: Genotype | Proposal = g
        for k, (proposal, asked) in enumerate(self._pending):
            if proposal == g:
                inner = asked
                del self._pending[k]
                break
        curve = result.metadata.get("per_epoch", {}).get(self.goal.objectives[0].name)
        if not result.failed and result.metadata.get("stopped_at") is None and curve:
            self.curves.append([float(v) for v in curve])
        self.inner.tell(inner, result)

"""The Evaluator interface: turn a genotype into a :class:`~nasforge.kernel.result.Result`."""

from __future__ import annotations

import abc
import inspect
from typing import Any, ClassVar

from nasforge.kernel.errors import CapabilityError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.result import Objective, Result
from nasforge.kernel.search_space import SearchSpace

#: Where an evaluator that can (``per_example``) puts, when asked, each validation
#: example's class probabilities in ``Result.metadata``: a list of ``[C]`` lists, in the
#: order of its validation labels. An ensemble's error and NLL need them: they cannot be
#: computed from its members' accuracies (:func:`nasforge.kernel.ensemble.ensemble_scores_of_results`).
PREDICTIONS_KEY = "valid_probabilities"


class Evaluator(abc.ABC):
    """Trains, looks up, scores or otherwise measures architectures.

    Subclasses set ``name`` and ``objective``; ``simulated`` says whether ``Result.cost``
    is a simulated clock (tabular benchmarks) rather than wall time.
    A run builds it as ``cls(space, dataset=..., **options)`` plus the run-context fields
    it declares in ``context_fields`` (:mod:`nasforge.kernel.run_context`): ``seed`` (so
    ``--seed`` reaches it), ``device`` (``--device``), ``registry``, ``build_options`` and,
    for an evaluator that ``trains``, the loaded training ``data`` (a
    :class:`~nasforge.kernel.datasets.TensorData`).

    ``dataset`` means one of two things, which the class declares with ``trains``: the
    dataset of a benchmark the evaluator reports on (nb201-table's table column, chosen
    with ``--benchmark-dataset``), or, when ``trains`` is true, the registered dataset it
    trains networks on (short-train's, chosen with ``--train-data``).

    What an evaluator needs of a space is declared (``spaces``, ``requires``,
    ``build_options``) and checked before a run starts (:meth:`preflight`), so a pairing
    that cannot work is refused with a message instead of failing every trial.
    """

    name: ClassVar[str]
    simulated: ClassVar[bool] = False
    #: True when ``dataset`` names registered data this evaluator trains networks on
    #: (the run's training data), False when it names a benchmark's dataset.
    trains: ClassVar[bool] = False
    #: The space names this evaluator works on; empty means any space.
    spaces: ClassVar[frozenset[str]] = frozenset()
    #: Space capabilities this evaluator needs (e.g. ``build``), as a strategy's ``requires``.
    requires: ClassVar[frozenset[str]] = frozenset()
    #: The keyword options this evaluator passes to ``space.build`` (``None``: it builds no
    #: networks); :meth:`preflight` checks that the space's ``build`` takes them.
    build_options: dict[str, Any] | None = None
    #: One sample's shape for the networks this evaluator builds, when it trains on data
    #: (``None``: it builds none, or for no particular input); an export of its run's best
    #: is built for this shape with :attr:`build_options`, as the networks it evaluated were.
    input_shape: tuple[int, ...] | None = None
    #: The budget option this evaluator can vary per call (``"epochs"`` for short-train),
    #: ``None`` when it has none. Its full value is the option's configured value; a
    #: multi-fidelity strategy asks for less through :meth:`evaluate_at`
    #: (:mod:`nasforge.kernel.fidelity`).
    fidelity: ClassVar[str | None] = None
    #: Whether it can return per-example predictions (:data:`PREDICTIONS_KEY`) when asked
    #: (short-train's ``predictions`` option); off by default, so journals stay small.
    per_example: ClassVar[bool] = False
    #: The run-context fields it is built with (:mod:`nasforge.kernel.run_context`).
    context_fields: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, space: SearchSpace, *, dataset: str | None = None) -> None:
        self._check_declared(space)
        self.space = space
        self.dataset = dataset

    def _check_declared(self, space: SearchSpace) -> None:
        if self.spaces and space.name not in self.spaces:
            raise CapabilityError(
                f"evaluator '{self.name}' works on spaces {sorted(self.spaces)}, not '{space.name}'"
            )
        space.require(self.requires, by=f"evaluator '{self.name}'")

    def preflight(self) -> None:
        """Refuse, before any trial, a space this evaluator cannot serve.

        Runs call it once before they start (options such as ``build_options`` are only
        known once a subclass's constructor has run, after ``Evaluator.__init__``).
        Raises :class:`~nasforge.kernel.errors.CapabilityError`.
        """
        space = getattr(self, "space", None)  # a subclass that skipped Evaluator.__init__
        if space is None:
            return
        self._check_declared(space)
        if self.build_options:
            unaccepted = _unaccepted_keywords(space.build, self.build_options)
            if unaccepted:
                passed = ", ".join(f"{k}={self.build_options[k]!r}" for k in unaccepted)
                takes = ", ".join(_keywords(space.build)) or "no options"
                raise CapabilityError(
                    f"evaluator '{self.name}' builds networks with {passed}, which space "
                    f"'{space.name}' does not take (its build takes: {takes})"
                )

    @property
    @abc.abstractmethod
    def objective(self) -> Objective:
        """The objective a strategy observes and optimises (its fitness)."""

    @property
    def objectives(self) -> dict[str, Objective]:
        """Every objective this evaluator's Results carry, by name, with its direction.

        A multi-objective run, or a user's ``--objective NAME:max|min``, finds here which
        way each recorded number is better (``onnx_latency_ms``: lower). By default only
        :attr:`objective`; an evaluator that records more declares them.
        """
        return {self.objective.name: self.objective}

    @property
    def reported(self) -> str:
        """The objective a run reports for the architecture it chose.

        The benchmark protocol observes one number (validation accuracy) and reports
        another (the chosen cell's test accuracy); an evaluator that follows it names the
        reported objective here. By default it is the optimised objective itself.
        """
        return self.objective.name

    @abc.abstractmethod
    def evaluate(self, g: Genotype) -> Result:
        """Measure one genotype.

        A genotype of another space raises :class:`~nasforge.kernel.errors.InvalidGenotypeError`
        (a caller bug); failures while measuring a valid one (divergence, out of memory)
        are the architecture's and become ``Result(failed=True)``, so a search goes on.
        """

    def evaluate_at(
        self, g: Genotype, fidelity: int | None, *, stop_below: tuple[float, ...] | None = None
    ) -> Result:
        """Measure ``g`` at budget ``fidelity`` (``None``: the full one, as :meth:`evaluate`).

        An evaluator that declares :attr:`fidelity` overrides this, reports its objective
        after each unit of it (``metadata["per_epoch"]``) and stops after unit k when the
        value is worse than ``stop_below[k - 1]`` (``metadata["stopped_at"] = k``, the
        objective as reached then; :func:`nasforge.kernel.fidelity.should_stop`). Any other
        evaluator refuses a budget, so a multi-fidelity strategy paired with it fails
        before a trial is wasted.
        """
        if fidelity is None:
            return self.evaluate(g)
        raise CapabilityError(
            f"evaluator '{self.name}' has no fidelity to vary (it declares none), so it cannot "
            f"evaluate at budget {fidelity}; use an evaluator that declares one (short-train: epochs)"
        )

    def describe(self) -> dict[str, Any]:
        """Facts for the journal header: dataset, benchmark hashes, settings."""
        return {"evaluator": self.name, "dataset": self.dataset}


def _parameters(fn: Any) -> list[inspect.Parameter]:
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # no introspectable signature: assume it takes anything
        return [inspect.Parameter("cfg", inspect.Parameter.VAR_KEYWORD)]


def _keywords(fn: Any) -> list[str]:
    """Option names ``fn`` (a space's ``build``) accepts by keyword, besides the genotype."""
    params = _parameters(fn)
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    genotype = positional[0].name if positional else None
    return [
        p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != genotype
    ]


def _unaccepted_keywords(fn: Any, options: dict[str, Any]) -> list[str]:
    if any(p.kind is p.VAR_KEYWORD for p in _parameters(fn)):
        return []
    accepted = set(_keywords(fn))
    return [k for k in options if k not in accepted]

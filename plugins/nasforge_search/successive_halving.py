"""Successive halving (Jamieson & Talwalkar, 2016; the synchronous form Hyperband uses).

A bracket evaluates ``n`` random architectures at a small fidelity (few epochs), keeps
the best ``1/eta`` of them, evaluates those at ``eta`` times the fidelity, and so on up
to the evaluator's full budget: most of the search is spent on short trainings, and only
the survivors are trained fully. :class:`SuccessiveHalving` runs such brackets one after
another; :class:`~nasforge_search.hyperband.Hyperband` varies ``n`` and the starting
fidelity from bracket to bracket.

Fidelities are asked for as :class:`~nasforge.Proposal` (``fidelity`` = epochs for
short-train); the run offers the evaluator's full budget as ``max_fidelity``. Everything
is a function of the seed, the options and the results told in order (a rung is promoted
once all its results are in, ties by the order told), so resume is replay: a run killed
mid-bracket resumes into the same bracket, the same promotions and the same trials.

When a run evaluates several trials at once and the current rung still waits for
results, the next bracket starts early, so workers never idle; with one worker the
brackets run strictly one after another.
"""

from __future__ import annotations

import collections
import math

from nasforge import Genotype, Objective, Proposal, Result, SearchSpace, Strategy
from nasforge.kernel.errors import OptionError
from nasforge.kernel.option_types import MAX_COUNT, check_option

#: Fresh draws per wanted architecture before a bracket accepts a repeat (tiny spaces).
_DISTINCT_TRIES = 50


def rung_fidelities(min_fidelity: int, max_fidelity: int, eta: int) -> list[int]:
    """The fidelities of a full bracket, smallest first, ending at ``max_fidelity``:
    ``max * eta**-k`` for k = s..0, where s is the most halvings that stay >= ``min``."""
    s = 0
    while max_fidelity / eta ** (s + 1) >= min_fidelity * (1 - 1e-9):
        s += 1
    return [max(min_fidelity, round(max_fidelity / eta ** (s - i))) for i in range(s + 1)]


class Bracket:
    """One successive-halving bracket: ``sizes[i]`` architectures at ``fidelities[i]``.

    Rung 0 holds ``configs``; once every result of a rung is told, its best
    ``sizes[i + 1]`` (by the strategy's rank, earliest told first on ties) move up.
    """

    def __init__(self, configs: list[Genotype], sizes: list[int], fidelities: list[int], rank) -> None:
        self.sizes, self.fidelities, self._rank = sizes, fidelities, rank
        self.rung = 0
        self.queue: collections.deque[Genotype] = collections.deque(configs)
        self.pending: collections.Counter[Genotype] = collections.Counter()
        self.told: list[tuple[tuple[float, ...], int, Genotype]] = []

    @property
    def done(self) -> bool:
        return self.rung >= len(self.sizes)

    @property
    def fidelity(self) -> int:
        return self.fidelities[self.rung]

    def next_ask(self) -> Proposal | None:
        if self.done or not self.queue:
            return None
        g = self.queue.popleft()
        self.pending[g] += 1
        return Proposal(g, self.fidelity)

    def takes(self, proposal: Proposal) -> bool:
        return not self.done and proposal.fidelity == self.fidelity and self.pending[proposal.genotype] > 0

    def tell(self, g: Genotype, result: Result) -> None:
        self.pending[g] -= 1
        self.told.append((self._rank(result), -len(self.told), g))
        if self.queue or self.pending.total() > 0:
            return
        self.rung += 1
        if self.done:
            return
        keep = sorted(self.told, reverse=True)[: self.sizes[self.rung]]
        self.queue = collections.deque(g for _, _, g in keep)
        self.told = []


class BracketStrategy(Strategy):
    """What successive halving and Hyperband share: brackets asked in turn, results
    routed back to the bracket that asked, ``brackets`` of them at most."""

    #: The evaluator's full budget comes from the run (unless the user sets max_fidelity).
    context_fields = Strategy.context_fields | {"max_fidelity"}

    def __init__(
        self,
        space: SearchSpace,
        *,
        objective: Objective,
        seed: int = 0,
        max_fidelity: int | None = None,
        min_fidelity: int = 1,
        eta: int = 3,
        brackets: int | None = None,
    ) -> None:
        super().__init__(space, objective=objective, seed=seed)
        for option, value in (("min_fidelity", min_fidelity), ("eta", eta)):
            check_option(option, value, int)
        if max_fidelity is None:
            raise OptionError(
                f"strategy '{self.name}' needs an evaluator with a fidelity (short-train: epochs) "
                "or the option max_fidelity"
            )
        check_option("max_fidelity", max_fidelity, int)
        if brackets is not None:
            check_option("brackets", brackets, int)
        if not 1 <= min_fidelity <= max_fidelity or eta < 2 or (brackets is not None and brackets < 1):
            raise OptionError(
                f"{self.name} needs 1 <= min_fidelity <= max_fidelity, eta >= 2 and brackets >= 1, got "
                f"min_fidelity={min_fidelity}, max_fidelity={max_fidelity}, eta={eta}, brackets={brackets}"
            )
        self.min_fidelity, self.max_fidelity, self.eta = min_fidelity, max_fidelity, eta
        self.max_brackets = brackets
        self.fidelities = rung_fidelities(min_fidelity, max_fidelity, eta)
        self.active: list[Bracket] = []
        self.started = 0

    def bracket_shape(self, k: int) -> tuple[list[int], list[int]]:
        """(sizes, fidelities) of the k-th bracket (0-based)."""
        raise NotImplementedError

    @property
    def finished(self) -> bool:
        return (
            self.max_brackets is not None
            and self.started >= self.max_brackets
            and all(b.done for b in self.active)
        )

    def ask(self) -> Proposal:
        for bracket in self.active:
            proposal = bracket.next_ask()
            if proposal is not None:
                return proposal
        if self.max_brackets is not None and self.started >= self.max_brackets:
            # Only while several trials run at once: an extra cheap draw keeps a worker
            # busy; no bracket waits for it.
            return Proposal(self.space.sample(self.rng), self.fidelities[0])
        sizes, fidelities = self.bracket_shape(self.started)
        self.started += 1
        bracket = Bracket(self._draw(sizes[0]), sizes, fidelities, self.rank)
        self.active = [b for b in self.active if not b.done] + [bracket]
        proposal = bracket.next_ask()
        assert proposal is not None
        return proposal

    def tell(self, g: Genotype | Proposal, result: Result) -> None:
        if not isinstance(g, Proposal):  # told a bare genotype: read as the full budget
            g = Proposal(g, self.max_fidelity)
        for bracket in self.active:
            if bracket.takes(g):
                bracket.tell(g.genotype, result)
                return

    def _draw(self, n: int) -> list[Genotype]:
        """``n`` random architectures, distinct where the space allows."""
        chosen: list[Genotype] = []
        seen: set[Genotype] = set()
        for _ in range(n):
            g = self.space.sample(self.rng)
            for _ in range(_DISTINCT_TRIES):
                if g not in seen:
                    break
                g = self.space.sample(self.rng)
            seen.add(g)
            chosen.append(g)
        return chosen


class SuccessiveHalving(BracketStrategy):
    """Successive halving: brackets of ``n`` architectures from ``min_fidelity`` up,
    keeping the best 1/``eta`` at each rung; repeated (``brackets`` times, or until the
    budget ends)."""

    name = "sh"

    def __init__(
        self,
        space: SearchSpace,
        *,
        objective: Objective,
        seed: int = 0,
        max_fidelity: int | None = None,
        min_fidelity: int = 1,
        eta: int = 3,
        n: int | None = None,
        brackets: int | None = None,
    ) -> None:
        super().__init__(
            space,
            objective=objective,
            seed=seed,
            max_fidelity=max_fidelity,
            min_fidelity=min_fidelity,
            eta=eta,
            brackets=brackets,
        )
        rungs = len(self.fidelities)
        if n is None:
            n = eta ** (rungs - 1)  # one survivor reaches the full budget
        check_option("n", n, int)
        if not 1 <= n <= MAX_COUNT:
            raise OptionError(f"sh needs 1 <= n <= {MAX_COUNT}, got {n}")
        self.n = n
        self.sizes = [max(1, n // eta**i) for i in range(rungs)]

    def bracket_shape(self, k: int) -> tuple[list[int], list[int]]:
        return self.sizes, self.fidelities


def hyperband_brackets(fidelities: list[int], eta: int) -> list[tuple[list[int], list[int]]]:
    """Hyperband's brackets (Li et al., 2018), most aggressive first: bracket s starts
    ``ceil((s_max+1)/(s+1) * eta**s)`` architectures at the (s_max - s)-th fidelity."""
    s_max = len(fidelities) - 1
    shapes = []
    for s in range(s_max, -1, -1):
        n = math.ceil((s_max + 1) / (s + 1) * eta**s)
        sizes = [max(1, n // eta**i) for i in range(s + 1)]
        shapes.append((sizes, fidelities[s_max - s :]))
    return shapes

"""Asking a strategy for the next trials: validated, at a budget the evaluator can give,
and without repeating what the run has already evaluated.

With duplicate detection (the spec's ``dedup``, on by default) a repeat of the same
genotype at the same fidelity is told its earlier result at once and asked again, so a
strategy that keeps proposing the same cell costs nothing. A strategy that does nothing
else ends the run: after :data:`MAX_DUPLICATE_ASKS` repeats in a row, or as soon as every
architecture of a finite space has been evaluated at the full budget.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console

from nasforge.kernel.errors import CapabilityError, InvalidGenotypeError
from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.fidelity import Ask, max_fidelity, split
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.result import Result
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.strategy import Strategy

#: Consecutive already-seen asks after which a dedup'd search is declared exhausted.
MAX_DUPLICATE_ASKS = 10_000


class Asker:
    """The strategy's asks as the run takes them (see the module's docstring)."""

    def __init__(
        self, strategy: Strategy, space: SearchSpace, evaluator: Evaluator, *, dedup: bool, console: Console
    ) -> None:
        self.strategy, self.space, self.evaluator = strategy, space, evaluator
        self.dedup, self.console = dedup, console
        #: Every (genotype, fidelity) told so far and its result.
        self.seen: dict[tuple[Genotype, int | None], Result] = {}
        self.duplicates = 0
        #: An ask came back empty while the strategy was not finished: it only repeats
        #: itself (or the whole space has been seen), so the run asks no more.
        self.exhausted = False
        self._said_finished = False
        #: Why the strategy stopped proposing before the budget was spent, in words (its
        #: journal's end record keeps it); None while it proposes.
        self.ended: str | None = None
        self._size = space.size if dedup else None
        self._full = max_fidelity(evaluator)
        self._seen_at_full: set[Genotype] = set()

    @property
    def finished(self) -> bool:
        """The strategy's own "nothing more to propose" (a duck-typed strategy may lack it)."""
        return bool(getattr(self.strategy, "finished", False))

    def note_finished(self, done: int) -> None:
        if not self._said_finished:
            self._said_finished = True
            self.ended = f"strategy '{self.strategy.name}' had nothing more to propose after {done} trials"
            self.console.print(
                f"strategy '{self.strategy.name}' has nothing more to propose: finished after {done} trials"
            )

    def _checked(self, asked: Any) -> Genotype:
        """The genotype of ``asked``, once the space accepts it; else a one-line error that
        blames the strategy (its bug, not the user's input)."""
        name = getattr(self.strategy, "name", type(self.strategy).__name__)
        try:
            g, _ = split(asked)
            if not isinstance(g, Genotype):
                raise InvalidGenotypeError(f"got {type(g).__name__}, not a Genotype or Proposal")
            self.space.validate(g)
        except InvalidGenotypeError as exc:
            raise InvalidGenotypeError(
                f"strategy '{name}' asked for an invalid genotype of space '{self.space.name}' "
                f"(a bug in the strategy): {exc}"
            ) from exc
        return g

    def told(self, g: Genotype, fidelity: int | None, result: Result) -> None:
        """Remember a told trial (what later repeats are answered with)."""
        self.seen[g, fidelity] = result
        if fidelity is None or fidelity == self._full:
            self._seen_at_full.add(g)

    def ask(self, want: int) -> list[Ask]:
        """Up to ``want`` new genotypes (or proposals at a fidelity). Empty when the strategy
        is finished, or only repeats itself: the run is then :attr:`exhausted` (said once)."""
        asks: list[Ask] = []
        covered = False
        while len(asks) < want and not self.finished:
            asked = self.strategy.ask()
            g = self._checked(asked)  # a strategy bug surfaces here, named, not in a model
            fidelity = split(asked)[1]
            self._check_fidelity(fidelity, getattr(asked, "stop_below", None) is not None)
            if self.dedup and (g, fidelity) in self.seen:
                self.strategy.tell(asked, self.seen[g, fidelity])
                self.duplicates += 1
                covered = self._size is not None and len(self._seen_at_full) >= self._size
                if self.duplicates >= MAX_DUPLICATE_ASKS or covered:
                    break
                continue
            self.duplicates = 0
            asks.append(asked)
        if not asks and not self.finished and not self.exhausted:
            self.exhausted = True
            seen = len(self._seen_at_full)
            of = f" of the {self._size:,}" if self._size is not None else ""
            self.ended = (
                f"search space exhausted: every one of the {self._size:,} architectures of "
                f"'{self.space.name}' has been evaluated"
                if covered
                else f"the strategy only repeated itself: its last {self.duplicates:,} asks were "
                f"architectures already evaluated ({seen:,}{of} of '{self.space.name}' seen)"
            )
            self.console.print(f"[yellow]{self.ended}[/]")
        return asks

    def _check_fidelity(self, fidelity: int | None, stops: bool) -> None:
        """A budget the evaluator cannot vary (or stop early), or above its full one, is a
        pairing error."""
        if fidelity is None and not stops:
            return
        full = self._full
        if full is None:
            what = "at a fidelity" if fidelity is not None else "that stop early"
            raise CapabilityError(
                f"strategy '{self.strategy.name}' asks for evaluations {what}, but evaluator "
                f"'{self.evaluator.name}' declares no fidelity it can vary (short-train varies epochs)"
            )
        if fidelity is not None and fidelity > full:
            raise CapabilityError(
                f"strategy '{self.strategy.name}' asked for {self.evaluator.fidelity}={fidelity}, above "
                f"evaluator '{self.evaluator.name}''s full {self.evaluator.fidelity}={full}"
            )

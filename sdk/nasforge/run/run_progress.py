"""A run's progress: a rich bar on a terminal, log records where nobody watches one.

Where no bar is live on a terminal (a pipeline's log, CI), the run logs its progress
through :class:`~nasforge.kernel.progress_log.ProgressLog` instead.
"""

from __future__ import annotations

import logging
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from nasforge.kernel.progress_log import ProgressLog, bar_is_live

_logger = logging.getLogger("nasforge.experiment")


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class RunProgress:
    """Trials done out of the budget's, and the best value so far (``best {name} {value}``).

    A run says up front what it will do (``intro``: how many trials, what one costs) and,
    once its first new trial has taken a second or more, about how long the rest will
    take (corrected after the second), so a user sees at once whether a command is a
    minute or an hour.
    """

    def __init__(
        self,
        what: str,
        total: int | None,
        objective: str,
        *,
        show: bool,
        console: Console,
        intro: str | None = None,
        workers: int = 1,
    ) -> None:
        self.objective, self.what, self.total, self.workers = objective, what, total, max(1, workers)
        self.log = ProgressLog("nasforge.experiment", what, total, silent=bar_is_live(show, console))
        self._walls: list[float] = []  # of this session's first two trials
        if intro:
            _logger.info("%s: %s", what, intro)
        self.bar: Progress | None = None
        if show:
            columns = [
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("best {task.fields[best]}"),
            ]
            self.bar = Progress(*columns, console=console, transient=False)
            self.task = self.bar.add_task(what, total=total, best="-")

    def __enter__(self) -> RunProgress:
        if self.bar is not None:
            self.bar.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.bar is not None:
            self.bar.__exit__(kind, exc, tb)

    def advance(self, done: int, best: float, *, wall: float | None = None) -> None:
        """``done`` trials so far; ``wall``: the seconds of the trial just finished, when it
        ran in this session (a replayed one has none)."""
        if wall is not None and len(self._walls) < 2:
            self._estimate(done, wall)
        self.log.update(done, f"best {self.objective} {best:.4g}")
        if self.bar is not None:
            self.bar.update(self.task, advance=1, best=f"{best:.4g}")

    def _estimate(self, done: int, wall: float) -> None:
        """After the first new trial, about how long the rest take; after the second, a
        corrected figure where it differs by more than a quarter (the first trial also pays
        one-time costs, such as torch's lazy imports). A trial of under a second says
        nothing worth a line; trials differ, so either is a rough figure."""
        self._walls.append(wall)
        if self.total is None or done >= self.total or max(self._walls) < 1.0:
            return
        left = self.total - done
        if len(self._walls) == 1:
            _logger.info(
                "%s: the first trial took %s; the other %d take about %s more",
                self.what,
                _duration(wall),
                left,
                _duration(wall * left / self.workers),
            )
        elif abs(wall - self._walls[0]) > 0.25 * self._walls[0]:
            _logger.info(
                "%s: at about %s a trial, the other %d take about %s more",
                self.what,
                _duration(wall),
                left,
                _duration(wall * left / self.workers),
            )

    def finish(self, done: int, best: float) -> None:
        self.log.finish(done, f"best {self.objective} {best:.4g}")

"""A run's progress: a rich bar on a terminal, log records where nobody watches one.

Where no bar is live on a terminal (a pipeline's log, CI), the run logs its progress
through :class:`~nasforge.kernel.progress_log.ProgressLog` instead.
"""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from nasforge.kernel.progress_log import ProgressLog, bar_is_live


class RunProgress:
    """Trials done out of the budget's, and the best value so far (``best {name} {value}``)."""

    def __init__(self, what: str, total: int | None, objective: str, *, show: bool, console: Console) -> None:
        self.objective = objective
        self.log = ProgressLog("nasforge.experiment", what, total, silent=bar_is_live(show, console))
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

    def advance(self, done: int, best: float) -> None:
        self.log.update(done, f"best {self.objective} {best:.4g}")
        if self.bar is not None:
            self.bar.update(self.task, advance=1, best=f"{best:.4g}")

    def finish(self, done: int, best: float) -> None:
        self.log.finish(done, f"best {self.objective} {best:.4g}")

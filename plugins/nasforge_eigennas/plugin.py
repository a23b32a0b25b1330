"""pluggy entry point (``eigennas = "nasforge_eigennas.plugin"``): the space, the scores, the strategy.

Registration only names classes, imported inside the hooks: the command line loads this
module to find the plugins' commands, and must not pay for torch to print ``--help``.
When an ``eigennas`` run ends, every candidate's score goes to
``RUN_DIR/eigennas_candidates.jsonl`` and the top-k (with what the evaluator said of
each) to the ``nasforge.eigennas`` log, which the command line prints.
"""

from __future__ import annotations

import io
import json
import logging
from typing import Any

from rich.console import Console

from nasforge import hookimpl
from nasforge.kernel.files import atomic_write_text

logger = logging.getLogger("nasforge.eigennas")
CANDIDATES_FILE = "eigennas_candidates.jsonl"


@hookimpl
def nasforge_register_search_spaces() -> list[type]:
    from nasforge_eigennas.space import MLPResSpace

    return [MLPResSpace]


@hookimpl
def nasforge_register_metrics() -> list[type]:
    from nasforge_eigennas.metrics import EigenNasOutputTrace, EigenNasTrace, InfiniteWidthTrace

    return [EigenNasTrace, EigenNasOutputTrace, InfiniteWidthTrace]


@hookimpl
def nasforge_register_strategies() -> list[type]:
    from nasforge_eigennas.strategy import EigenNas

    return [EigenNas]


@hookimpl
def nasforge_search_end(experiment: Any, outcome: Any) -> None:
    """An eigennas run's candidate table: logged (top-k) and written beside its journal (all)."""
    from nasforge_eigennas.strategy import EigenNas

    strategy = getattr(experiment, "strategy", None)
    if not isinstance(strategy, EigenNas) or strategy.ranked is None:
        return
    text = io.StringIO()
    Console(file=text, width=120, color_system=None).print(strategy.table())
    logger.info("%s", text.getvalue().rstrip())
    run_dir = getattr(experiment, "run_dir", None)
    if run_dir is None:
        return
    lines = "".join(json.dumps(row) + "\n" for row in strategy.rows())
    try:
        atomic_write_text(run_dir / CANDIDATES_FILE, lines)
    except OSError as exc:  # the search itself succeeded; a read-only run dir only loses the table
        logger.warning("eigennas: candidate table not written to %s (%s)", run_dir, exc)

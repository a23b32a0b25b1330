"""Command-line options several commands share, declared once so they read the same."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]
Device = Annotated[str, typer.Option(help="cpu or cuda.")]
BuildOptions = Annotated[
    list[str] | None, typer.Option("--build-option", help="Network option key=value, e.g. C=8.")
]
CacheDir = Annotated[
    Path | None, typer.Option(help="Score cache directory (default: ~/.cache/nasforge/scores).")
]
NoCache = Annotated[bool, typer.Option("--no-cache", help="Do not read or write the score cache.")]

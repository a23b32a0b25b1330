"""Plot files: the format check every plotting command makes first, and the atomic save.

Shared by the correlation scatter, the Pareto front and the benchmarks' plots, so each
refuses a bad path the same way (one line, before any work) and no plot file ever
appears half written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.files import atomic_path
from nasforge.kernel.optional import require


def plot_format(path: str | os.PathLike[str], *, feature: str = "plots") -> str:
    """The image format ``path``'s suffix names (png when none); a path no plot can go to is refused.

    Cheap and free of side effects, so a command can call it before hours of work: a typo
    in the suffix (``.pgn``), a missing matplotlib or a directory given for a file should
    cost one line, not the work done before the plot. ``feature`` names what needs
    matplotlib in the message when it is missing.
    """
    require("matplotlib", extra="plot", feature=feature)
    from matplotlib.backend_bases import FigureCanvasBase

    out = Path(path)
    suffix = out.suffix.lstrip(".").lower() or "png"
    supported = FigureCanvasBase.get_supported_filetypes()
    if suffix not in supported:
        raise NasforgeError(f"cannot write a plot as '.{suffix}' (supported: {', '.join(sorted(supported))})")
    if out.is_dir():
        raise NasforgeError(f"cannot write the plot {out}: it is a directory")
    return suffix


def save_figure(fig: Any, path: str | os.PathLike[str], image_format: str, *, dpi: int = 120) -> Path:
    """Write ``fig`` to ``path`` under a temporary name, renamed when complete.

    The temporary name ends in ``.part``, so the format is given, not guessed from it. A
    filesystem error becomes one :class:`NasforgeError` line naming the file.
    """
    out = Path(path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(out) as tmp:
            fig.savefig(tmp, dpi=dpi, format=image_format)
    except OSError as exc:
        raise NasforgeError(f"cannot write the plot {out}: {exc.strerror or exc}") from exc
    return out

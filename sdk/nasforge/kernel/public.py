"""What plugins and embedders may import: the kernel, and a few named entry points above it.

The kernel (every module of :mod:`nasforge.kernel`) holds the contracts and the values
that cross them. Above it, a plugin may use only the modules named here, each for what
it gives; everything else in :mod:`nasforge.run` and :mod:`nasforge.tools` is internal
and may change without notice (the layering test holds first-party plugins to this).
"""

from __future__ import annotations

import pkgutil
from pathlib import Path

#: Modules of the layers above the kernel that plugins may import, and why.
ENTRY_POINTS = {
    "nasforge.api": "the Python face of the main tasks (search, resume, load a space)",
    "nasforge.run.defaults": "the components and data a user gets by naming none",
    "nasforge.run.training": "training loops, optimisers and schedules, for methods that train",
    "nasforge.run.ensemble_training": "an ensemble's members trained from scratch and evaluated",
    "nasforge.run.builtin_datasets": "the built-in datasets' loaders",
    "nasforge.run.conformance": "the strategy kits run through the core's journaled run loop",
    "nasforge.run.spec": "a run's description, for a command that builds its own run",
    "nasforge.run.construction": "a component built as a run builds it, for one that builds another",
    "nasforge.run.experiment": "the ask/tell run, for a command that runs its own",
    "nasforge.run.budget": "a run's budget, for a command that builds its own run",
    "nasforge.tools.backends": "per-sample gradients and empirical NTKs, for metrics",
    "nasforge.tools.scoring": "shared passes for metrics; sweeps and score caches for pools",
    "nasforge.tools.export": "genotype and ONNX files of what a command found",
    "nasforge.tools.plot_files": "plot files saved whole, in a format checked first",
    "nasforge.tools.pages": "the skeleton of a static HTML page, figures embedded",
    "nasforge.tools.cli.common_options": "options a plugin's command shares with the core's",
    "nasforge.tools.cli.options": "key=value options parsed as the core's commands parse them",
    "nasforge.tools.cli.output": "console and --json output as the core's commands print it",
}


def _kernel_modules() -> tuple[str, ...]:
    here = Path(__file__).parent
    found = [m.name for m in pkgutil.walk_packages([str(here)], prefix="nasforge.kernel.")]
    return ("nasforge.kernel", *sorted(found))


#: Every module a plugin may import.
PUBLIC_MODULES = (*_kernel_modules(), *ENTRY_POINTS)

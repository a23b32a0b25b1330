"""The Python face of the main CLI tasks: one call per command, same defaults.

Searching is defined in :mod:`nasforge.run.api`, scoring and correlating in
:mod:`nasforge.tools.scoring.api`, exporting in :mod:`nasforge.tools.export.api`; this is
the name to import them by. Each makes every check its command makes, with one message.
"""

from nasforge.run.api import DEFAULT_TRIALS, build_spec, load_space, resume, search
from nasforge.tools.export.api import GenotypeExport, RunEnsembleExport, export
from nasforge.tools.scoring.api import Scores, correlate, score

__all__ = [
    "DEFAULT_TRIALS",
    "GenotypeExport",
    "RunEnsembleExport",
    "Scores",
    "build_spec",
    "correlate",
    "export",
    "load_space",
    "resume",
    "score",
    "search",
]

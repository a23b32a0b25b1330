"""The Python face of the main CLI tasks: one call per command, same defaults.

Defined in :mod:`nasforge.run.api`; this is the name to import them by.
"""

from nasforge.run.api import DEFAULT_TRIALS, build_spec, load_space, resume, search

__all__ = ["DEFAULT_TRIALS", "build_spec", "load_space", "resume", "search"]

"""Old module paths, kept importable while code that names them moves to the new ones.

The core is three packages (``nasforge.kernel``, ``nasforge.run``, ``nasforge.tools``); a
module that used to sit directly under ``nasforge`` (``nasforge.strategy``) is found here
and answered with the module at its new place (``nasforge.kernel.strategy``), the very
same module object, so classes compare equal whichever path imported them. Importing an
old path warns once with a :class:`DeprecationWarning` naming the new one.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

_LAYERS = {
    "kernel": "errors genotype search_space network_factory supernet supernet_topology supernet_discretise "
    "strategy evaluator metric result ensemble objectives pareto fidelity registry hookspecs option_types "
    "datasets seeding optional plugin_command progress_log testing",
    "run": "experiment journal run_lock environment budget stopping spec executors one_shot_run training "
    "defaults",
    "tools": "scoring backends export report cli pareto_plot plot_files anytime latency_objective "
    "latency_cache short_train builtin_plugin",
}
#: Old top-level module -> its new place (submodules follow their package).
MOVED = {f"nasforge.{n}": f"nasforge.{layer}.{n}" for layer, names in _LAYERS.items() for n in names.split()}
MOVED["nasforge.atomic_files"] = "nasforge.kernel.files"


def new_name(old: str) -> str | None:
    """Where module ``old`` lives now, or None when it never moved."""
    head, dot, rest = old, "", ""
    while head not in MOVED:
        head, dot, tail = head.rpartition(".")
        if not dot:
            return None
        rest = f"{tail}.{rest}" if rest else tail
    return MOVED[head] + (f".{rest}" if rest else "")


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers an old path with the module at the new one (see the module's docstring)."""

    def find_spec(
        self, fullname: str, path: object, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("nasforge.") or new_name(fullname) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        target = new_name(module.__name__)
        assert target is not None
        warnings.warn(
            f"{module.__name__} is now {target}; import it from there", DeprecationWarning, stacklevel=2
        )
        sys.modules[module.__name__] = importlib.import_module(target)


def install() -> None:
    """Put the alias finder on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.insert(0, _Alias())  # before the path finder: a package alias must not load twice

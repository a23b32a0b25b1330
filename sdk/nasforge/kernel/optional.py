"""Import optional extras only when a feature is used, with an actionable message."""

from __future__ import annotations

import importlib
from types import ModuleType

from nasforge.kernel.errors import MissingDependencyError


def require(module: str, *, extra: str, feature: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependencyError` naming the extra."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(module.split(".")[0], extra, feature) from exc

"""A package whose names load on first use, so importing one light submodule of it does not
import every heavy one.

``nasforge.tools.export.input_shape`` holds constants the command line needs to declare
its options, and a plugin's ``plugin`` module is what the command line loads to find the
plugin's commands; if the package's ``__init__`` imported its ONNX, training or network
modules eagerly, the command line would pay torch's import (seconds) to print ``--help``.
A package that uses this keeps its public names as they were; type checkers see them
through imports under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Mapping
from typing import Any


class LazyPackage(types.ModuleType):
    """A package module whose public names are looked up in ``_lazy_where`` when first asked
    for (and kept), and whose other missing attributes are tried as submodules."""

    _lazy_where: Mapping[str, str]

    def __getattr__(self, name: str) -> Any:
        package = self.__name__
        module = self._lazy_where.get(name)
        if module is not None:
            value = getattr(importlib.import_module(module), name)
        else:
            try:
                value = importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        super().__setattr__(name, value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        # Loading a submodule binds it on its package under its own name; where a public
        # name is spelt like its submodule (``supernet`` in ``supernet.py``), the name keeps
        # meaning the public object, as it did when the package imported it eagerly.
        if (
            isinstance(value, types.ModuleType)
            and value.__name__ == f"{self.__name__}.{name}"
            and self._lazy_where.get(name) == value.__name__
        ):
            return
        super().__setattr__(name, value)

    def __dir__(self) -> list[str]:
        return sorted({*vars(self), *self._lazy_where})


def lazy_package(package: str, where: Mapping[str, str]) -> None:
    """Make the (already imported) package ``package`` lazy: public name ``n`` comes from
    module ``where[n]`` (a full dotted name) when first asked for."""
    module = sys.modules[package]
    module.__class__ = LazyPackage
    types.ModuleType.__setattr__(module, "_lazy_where", dict(where))

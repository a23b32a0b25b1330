"""Packages whose names load on first use: the names and where they load from are read from
the imports a type checker sees, so every public name loads, from where mypy says it is."""

from __future__ import annotations

import importlib
import textwrap
from pathlib import Path

import pytest

from nasforge.kernel.lazy_package import LazyPackage, typed_imports

LAZY = [
    "nasforge.tools.export",
    "nasforge.run.training",
    "nasforge_nb201",
    "nasforge_nesbs",
    "nasforge_eigennas",
    "nasforge_nasi",
    "nasforge_hnas",
    "nasforge_search",
]


@pytest.mark.parametrize("name", LAZY)
def test_every_public_name_of_a_lazy_package_loads_from_its_typed_import(name: str) -> None:
    package = importlib.import_module(name)
    assert isinstance(package, LazyPackage)
    where = typed_imports(Path(str(package.__file__)))
    assert sorted(where) == sorted(package.__all__)
    for public, module in where.items():
        assert getattr(package, public) is getattr(importlib.import_module(module), public)


def test_typed_imports_reads_only_the_type_checking_block(tmp_path: Path) -> None:
    source = tmp_path / "__init__.py"
    source.write_text(
        textwrap.dedent(
            """\
            from typing import TYPE_CHECKING
            from os import sep
            if TYPE_CHECKING:
                from pkg.one import A, B as Bee
                from pkg.two import (
                    c,
                )
                from . import relative
            """
        ),
        encoding="utf-8",
    )
    assert typed_imports(source) == {"A": "pkg.one", "Bee": "pkg.one", "c": "pkg.two"}

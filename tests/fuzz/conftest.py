"""Fixtures of the fuzzing suite: the templates, built once, and a private cache home."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from fuzz.templates import Templates, build_templates


@pytest.fixture(scope="session")
def templates(tmp_path_factory: pytest.TempPathFactory) -> Templates:
    return build_templates(tmp_path_factory.mktemp("fuzz-templates"))


@pytest.fixture(scope="session", autouse=True)
def _private_cache_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The default score cache goes to a scratch directory, not the user's home."""
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old

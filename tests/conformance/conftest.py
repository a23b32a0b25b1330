"""The example third-party plugin, installed once per test session (see ``example_plugin``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance.example_plugin import install_example


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The private target directory the example was installed into."""
    return install_example(tmp_path_factory.mktemp("site"))

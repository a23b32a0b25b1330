"""The first-party supernets follow the core's supernet contract (the kit every space runs)."""

from __future__ import annotations

import attrs
import pytest

from nasforge.api import load_space
from nasforge.kernel.testing.supernet_conformance import SupernetConformance


class TestNB201Supernet(SupernetConformance):
    @pytest.fixture
    def space(self):
        return load_space("nb201")

    @pytest.fixture
    def supernet_options(self):
        return {"C": 4, "N": 1, "num_classes": 4}


class TestDartsSupernet(SupernetConformance):
    @pytest.fixture
    def space(self):
        return load_space("darts")

    @pytest.fixture
    def supernet_options(self):
        return {"C": 2, "layers": 3, "num_classes": 4}


def test_darts_space_declares_exactly_its_supernet_options() -> None:
    """One-shot strategies pass data-derived options only where declared: keep it true."""
    from nasforge_darts.search_network import SupernetConfig

    assert load_space("darts").supernet_options == {a.name for a in attrs.fields(SupernetConfig)}

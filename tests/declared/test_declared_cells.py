"""A declared cell: input choices (which earlier outputs a node reads) and layer choices
sharing one cell of the supernet, through the conformance kits alone."""

from __future__ import annotations

from typing import Any

import pytest

from nasforge.kernel.testing.conformance import SearchSpaceConformance
from nasforge.kernel.testing.supernet_conformance import SupernetConformance
from tests.declared.families import Cell


class TestCellSpace(SearchSpaceConformance):
    @pytest.fixture
    def space(self) -> Cell:
        return Cell()

    @pytest.fixture
    def input_shape(self) -> tuple[int, ...]:
        return (2, 3, 8, 8)


class TestCellSupernet(SupernetConformance):
    @pytest.fixture
    def space(self) -> Cell:
        return Cell()

    @pytest.fixture
    def supernet_options(self) -> dict[str, Any]:
        return {"num_classes": 3}


def test_choices_of_one_cell_name_share_an_architecture_tensor() -> None:
    supernet = Cell().supernet()
    names = {cell.name: cell.shape for cell in supernet.topology}
    assert names == {"node0_in": (1, 1), "node1_in": (1, 2), "node2_in": (1, 3), "op": (3, 2)}
    assert Cell().size == 1 * 2 * 3 * 2**3
    assert "node2_in=0+2" in Cell().format(
        Cell().parse("node0_in=0 node1_in=1 node2_in=0+2 node0_op=conv node1_op=conv node2_op=pool")
    )

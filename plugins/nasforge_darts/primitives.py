"""Names and fixed shape of the DARTS cell: the eight ops and the 14 supernet edges.

Ops are always addressed by name (the DARTS evaluation code, the DARTS search code and the
PR-DARTS code each order them differently), so indices only exist inside one tensor whose
column order is :data:`PRIMITIVES`.
"""

from __future__ import annotations

#: The eight DARTS ops, in the DARTS evaluation code's order (columns of every alpha).
PRIMITIVES: tuple[str, ...] = (
    "none",
    "max_pool_3x3",
    "avg_pool_3x3",
    "skip_connect",
    "sep_conv_3x3",
    "sep_conv_5x5",
    "dil_conv_3x3",
    "dil_conv_5x5",
)
#: Ops a derived (discrete) cell may hold: the zero op only exists in the supernet.
CELL_OPS: tuple[str, ...] = tuple(p for p in PRIMITIVES if p != "none")
#: Ops with weights: the only ones that deepen a cell (PR-DARTS's path regulariser).
PARAMETRIC_OPS: tuple[str, ...] = ("sep_conv_3x3", "sep_conv_5x5", "dil_conv_3x3", "dil_conv_5x5")
POOL_OPS: tuple[str, ...] = ("max_pool_3x3", "avg_pool_3x3")
SKIP = "skip_connect"
NONE = "none"

STEPS = 4  # intermediate nodes per cell
INPUTS = 2  # input nodes (outputs of the two previous cells)
CONCAT: tuple[int, ...] = tuple(range(INPUTS, INPUTS + STEPS))  # nodes 2..5
EDGES_PER_NODE = 2  # kept incoming edges per intermediate node in a derived cell
CELL_TYPES: tuple[str, ...] = ("normal", "reduce")


def edge_list(steps: int = STEPS) -> tuple[tuple[int, int], ...]:
    """Every supernet edge as (source, target) node, in alpha row order.

    Node ``INPUTS + i`` receives edges from all earlier nodes, so rows run node by node:
    (0,2), (1,2), (0,3), (1,3), (2,3), ... -- 14 rows for 4 steps.
    """
    return tuple((s, INPUTS + i) for i in range(steps) for s in range(INPUTS + i))


def edge_index(source: int, target: int) -> int:
    """Row of the supernet edge ``source -> target`` in an alpha tensor."""
    i = target - INPUTS
    if not (i >= 0 and 0 <= source < target):
        raise ValueError(f"no supernet edge {source}->{target}")
    return sum(INPUTS + m for m in range(i)) + source


NUM_EDGES = len(edge_list())

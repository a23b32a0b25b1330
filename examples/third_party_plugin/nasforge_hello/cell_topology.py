"""The hello cell as the supernet contract describes it (all a one-shot method sees of it).

One input node (0) and three computed nodes (1, 2, 3), each able to read every earlier
node; three candidate ops and no zero op; each computed node keeps its single strongest
input (``TopKInputs(k=1)``); the cell's output is the sum of nodes 1..3.
"""

from __future__ import annotations

from nasforge import CellTopology, OpSet, TopKInputs

OP_NAMES: tuple[str, ...] = ("conv3x3", "skip", "avg_pool")
NODES = (1, 2, 3)  # computed nodes; node 0 is the cell's input

TOPOLOGY = CellTopology(
    name="cell",
    ops=OpSet(OP_NAMES, skip="skip", parametric=("conv3x3",), pools=("avg_pool",)),
    edges=tuple((src, node) for node in NODES for src in range(node)),
    inputs=(0,),
    output=NODES,
    rule=TopKInputs(k=1),
)

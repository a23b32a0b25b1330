"""The ``act-mlp`` network as the supernet contract describes it (all a one-shot method sees).

Node ``l`` is the input of hidden layer ``l`` (node 0 the network's input features), and
the edge ``(l, l + 1)`` is that layer: its shared linear map followed by the activation
the edge picks, so the architecture tensor has one row per layer and one column per
candidate activation. Every edge keeps one op (:class:`~nasforge.OneOpPerEdge`), and no
op has a role: none outputs zeros, none is the identity of the edge's input (even the
``identity`` activation follows the layer's linear map), and the linear map is shared by
all of them, so none is "parametric" in the sense of deepening the network more than
another.
"""

from __future__ import annotations

from nasforge import CellTopology, OneOpPerEdge, OpSet

#: The cell name one-shot methods report metrics under.
CELL_NAME = "layers"


def act_mlp_topology(layers: int, ops: tuple[str, ...]) -> CellTopology:
    """The chain ``0 -> 1 -> ... -> layers`` with ``ops`` on every edge."""
    if layers < 1:
        raise ValueError(f"an act-mlp has at least one hidden layer, got {layers}")
    return CellTopology(
        name=CELL_NAME,
        ops=OpSet(tuple(ops)),
        edges=tuple((layer, layer + 1) for layer in range(layers)),
        inputs=(0,),
        output=(layers,),
        rule=OneOpPerEdge(),
    )

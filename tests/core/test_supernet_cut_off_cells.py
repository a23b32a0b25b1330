"""A derived cell whose output no input reaches is repaired, with a warning, in every derivation.

NAS-Bench-201's one-op-per-edge rule can keep ``none`` on node 3's three edges: that cell
outputs a constant and its network guesses (10 % on CIFAR-10). The repair keeps, on an
edge into the cut-off output from a reached node, that edge's best other op (the highest
such score). A cell whose edges only add to nodes another cell computes (``dataflow``
False: the MLP skip bits, every cell of a declared space) is never "cut off".
"""

from __future__ import annotations

import pytest
import torch

from nasforge.kernel.supernet_discretise import discretise
from nasforge.kernel.supernet_topology import CellTopology, KeptEdge, OneOpPerEdge, OpSet
from nasforge_eigennas import MLPResSpace
from nasforge_nb201.supernet import TOPOLOGY as NB201

NONE = NB201.ops.column("none")


def _scores(**best: str) -> torch.Tensor:
    """NB201 scores with ``none`` strongest on every edge except those named ``e<src><dst>``."""
    s = torch.zeros(NB201.shape)
    s[:, NONE] = 1.0
    for name, op in best.items():
        s[NB201.row(int(name[1]), int(name[2])), NB201.ops.column(op)] = 2.0
    return s


def test_a_cell_with_node_3_all_none_is_repaired_with_a_warning() -> None:
    s = _scores(e01="nor_conv_3x3", e12="nor_conv_3x3")
    s[NB201.row(1, 3), NB201.ops.column("skip_connect")] = 0.9  # the best non-zero score into node 3
    s[NB201.row(0, 3), NB201.ops.column("nor_conv_1x1")] = 0.5
    with pytest.warns(RuntimeWarning, match=r"cuts output node\(s\) \(3,\) off.*skip_connect on edge 1->3"):
        kept = discretise(NB201, s)
    assert NB201.cut_off_outputs(kept) == ()
    assert KeptEdge("skip_connect", 1, 3) in kept
    changed = [e for e in kept if e.op != "none"]
    assert sorted(changed) == sorted(
        [KeptEdge("nor_conv_3x3", 0, 1), KeptEdge("nor_conv_3x3", 1, 2), KeptEdge("skip_connect", 1, 3)]
    )


def test_the_repair_starts_from_a_reached_node_only() -> None:
    s = _scores()  # every edge none: only node 0 is reached
    s[NB201.row(2, 3), NB201.ops.column("nor_conv_3x3")] = 0.9  # node 2 is not reached: no use
    s[NB201.row(0, 3), NB201.ops.column("avg_pool_3x3")] = 0.4
    with pytest.warns(RuntimeWarning):
        kept = discretise(NB201, s)
    assert KeptEdge("avg_pool_3x3", 0, 3) in kept
    assert KeptEdge("none", 2, 3) in kept


def test_an_excluded_op_is_not_the_repair() -> None:
    s = _scores()
    s[NB201.row(0, 3), NB201.ops.column("skip_connect")] = 0.9
    s[NB201.row(0, 3), NB201.ops.column("nor_conv_1x1")] = 0.1
    with pytest.warns(RuntimeWarning):
        kept = discretise(NB201, s, exclude={"skip_connect"})
    assert KeptEdge("nor_conv_1x1", 0, 3) in kept


def test_a_connected_cell_is_left_alone(recwarn: pytest.WarningsRecorder) -> None:
    kept = discretise(NB201, _scores(e03="nor_conv_3x3"))
    assert [e for e in kept if e.op != "none"] == [KeptEdge("nor_conv_3x3", 0, 3)]
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_skip_bits_are_not_a_dataflow_graph(recwarn: pytest.WarningsRecorder) -> None:
    _, skip = MLPResSpace(depth=5).supernet(width=4).topology
    assert (skip.name, skip.ops.zero, skip.ops.skip) == ("skip", "0", "1")
    scores = torch.tensor([[1.0, 0.0]] * len(skip.edges))  # no skip anywhere: a plain MLP
    kept = discretise(skip, scores)
    assert all(e.op == skip.ops.zero for e in kept) and skip.cut_off_outputs(kept) == ()
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_the_graph_reads_paths_not_single_edges() -> None:
    chain = CellTopology(
        name="chain",
        ops=OpSet(("none", "conv"), zero="none"),
        edges=((0, 1), (1, 2)),
        inputs=(0,),
        output=(2,),
        rule=OneOpPerEdge(),
    )
    assert chain.cut_off_outputs([KeptEdge("conv", 0, 1), KeptEdge("none", 1, 2)]) == (2,)
    assert chain.cut_off_outputs([KeptEdge("none", 0, 1), KeptEdge("conv", 1, 2)]) == (2,)
    assert chain.cut_off_outputs([KeptEdge("conv", 0, 1), KeptEdge("conv", 1, 2)]) == ()
    with pytest.warns(RuntimeWarning):
        kept = discretise(chain, torch.tensor([[1.0, 0.0], [1.0, 0.0]]))
    assert chain.cut_off_outputs(kept) == () and all(e.op == "conv" for e in kept)

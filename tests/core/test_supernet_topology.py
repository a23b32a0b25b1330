"""The supernet contract's data: cell topologies, their rules, and derivation by those rules."""

from __future__ import annotations

import pytest
import torch

from nasforge import CellTopology, KeptEdge, OneOpPerEdge, OpSet, TopKInputs
from nasforge.kernel.supernet_discretise import discretise, one_hot_weights

OPS = OpSet(("none", "skip", "conv", "pool"), zero="none", skip="skip", parametric=("conv",), pools=("pool",))
#: NAS-Bench-201's shape: one input, nodes 1..3 each reading every earlier node, output node 3.
EDGE_CELL = CellTopology(
    name="cell",
    ops=OPS,
    edges=((0, 1), (0, 2), (1, 2), (0, 3), (1, 3), (2, 3)),
    inputs=(0,),
    output=(3,),
    rule=OneOpPerEdge(),
)
#: DARTS's shape: inputs 0, 1; nodes 2..5; output the concatenation of 2..5; top-2 inputs.
NODE_CELL = CellTopology(
    name="normal",
    ops=OPS,
    edges=tuple((s, t) for t in range(2, 6) for s in range(t)),
    inputs=(0, 1),
    output=(2, 3, 4, 5),
    rule=TopKInputs(k=2),
)


def test_structure_methods_read_off_the_topology() -> None:
    assert EDGE_CELL.shape == (6, 4) and NODE_CELL.shape == (14, 4)
    assert EDGE_CELL.num_nodes == 4  # the output is node 3 itself
    assert NODE_CELL.num_nodes == 7  # six nodes plus the concatenated output
    assert [EDGE_CELL.edges[r] for r in EDGE_CELL.chain] == [(0, 1), (1, 2), (2, 3)]
    assert [NODE_CELL.edges[r] for r in NODE_CELL.chain] == [(1, 2), (2, 3), (3, 4), (4, 5)]
    assert NODE_CELL.computed == (2, 3, 4, 5) and NODE_CELL.sources_of(4) == (0, 1, 2, 3)
    assert OPS.nonzero == ("skip", "conv", "pool") and OPS.columns(["pool", "skip", "absent"]) == [1, 3]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"edges": ((1, 0),)}, "low -> high"),
        ({"edges": ((0, 1), (0, 1))}, "twice"),
        ({"inputs": (1,)}, "no edge enters"),
        ({"output": (9,)}, "output"),
        ({"rule": TopKInputs(k=3)}, "fewer than k=3"),
    ],
)
def test_malformed_topologies_are_refused(change: dict, message: str) -> None:
    fields = {
        "name": "c",
        "ops": OPS,
        "edges": ((0, 1), (0, 2), (1, 2)),
        "inputs": (0,),
        "output": (2,),
        "rule": OneOpPerEdge(),
        **change,
    }
    with pytest.raises(ValueError, match=message):
        CellTopology(**fields)


def test_op_roles_must_name_candidates_once() -> None:
    with pytest.raises(ValueError, match="not candidates"):
        OpSet(("a", "b"), skip="c")
    with pytest.raises(ValueError, match="at most one role"):
        OpSet(("a", "b"), skip="a", pools=("a",))


def test_one_op_per_edge_takes_each_rows_first_maximum_and_honours_exclude() -> None:
    scores = torch.zeros(6, 4)
    scores[:, 0] = 1.0  # the zero op leads on every edge but 0->3: a legitimate choice there
    scores[3, 3] = 2.0  # (all six "none" would cut the output off: test_supernet_cut_off_cells)
    scores[2, 2] = 1.0  # a tie: the lower column wins
    kept = discretise(EDGE_CELL, scores)
    assert [e.op for e in kept] == ["none", "none", "none", "pool", "none", "none"]
    assert kept[2] == KeptEdge("none", 1, 2)
    scores[3, 3] = 0.0
    scores[1, 3] = 0.5
    excluded = discretise(EDGE_CELL, scores, exclude=["none"])
    assert [e.op for e in excluded] == ["skip", "pool", "conv", "skip", "skip", "skip"]
    with pytest.raises(ValueError, match="every op"):
        discretise(EDGE_CELL, scores, exclude=OPS.names)


def test_top_k_keeps_the_strongest_inputs_never_the_zero_op() -> None:
    scores = torch.zeros(14, 4)
    row = NODE_CELL.row
    scores[row(0, 2), OPS.column("none")] = 9.0  # never kept, however strong
    scores[row(1, 2), OPS.column("conv")] = 0.5
    scores[row(2, 3), OPS.column("conv")] = 0.8
    scores[row(2, 3), OPS.column("pool")] = 0.7  # same source, second best op
    kept = discretise(NODE_CELL, scores)
    assert kept[:2] == (KeptEdge("conv", 1, 2), KeptEdge("skip", 0, 2))  # tie at 0: lower column
    assert kept[2] == KeptEdge("conv", 2, 3) and kept[3].source != 2  # distinct sources
    literal = discretise(NODE_CELL, scores, distinct_sources=False)
    assert literal[2:4] == (KeptEdge("conv", 2, 3), KeptEdge("pool", 2, 3))  # one source twice
    assert all(e.op != "none" for e in kept + literal)


def test_one_hot_weights_count_a_repeated_edge_twice() -> None:
    kept = [KeptEdge("conv", 0, 2), KeptEdge("conv", 0, 2)]
    kept += [KeptEdge("skip", s, t) for t in (3, 4, 5) for s in (0, 1)]
    w = one_hot_weights(NODE_CELL, kept, like=torch.zeros((), dtype=torch.float64))
    assert w.dtype == torch.float64 and w[NODE_CELL.row(0, 2), OPS.column("conv")] == 2.0
    assert float(w.sum()) == len(kept)


def test_check_kept_enforces_the_rule() -> None:
    with pytest.raises(ValueError, match="one op on each"):
        EDGE_CELL.check_kept([KeptEdge("conv", 0, 1)])
    zero = [KeptEdge("none", 0, 2), KeptEdge("skip", 1, 2)]
    zero += [KeptEdge("skip", s, t) for t in (3, 4, 5) for s in (0, 1)]
    with pytest.raises(ValueError, match="zero op"):
        NODE_CELL.check_kept(zero)
    with pytest.raises(ValueError, match="no edge"):
        NODE_CELL.check_kept([KeptEdge("skip", 3, 2)])


def test_as_supernet_names_what_a_module_lacks() -> None:
    from torch import nn

    from nasforge import CapabilityError, as_supernet

    with pytest.raises(CapabilityError, match=r"lacks \['topology', 'arch_parameters'"):
        as_supernet(nn.Linear(2, 2), by="strategy 'darts'")

    class WrongShape(nn.Linear):
        topology = (EDGE_CELL,)

        def arch_parameters(self) -> list[nn.Parameter]:
            return [nn.Parameter(torch.zeros(2, 2))]

        weight_parameters = forward = kept_edges = genotype_of = derive = one_hot_weights = None

    with pytest.raises(CapabilityError, match=r"do not match the topology's \[\(6, 4\)\]"):
        as_supernet(WrongShape(2, 2), by="strategy 'nasi'")

"""A layer choice may name its zero op and its skip: the supernet's cell carries the roles
one-shot methods reason about, and never runs the zero op."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from nasforge import Chooser, DeclarationError, DeclaredSpace
from nasforge.kernel.supernet_discretise import discretise


class Zero(nn.Module):
    """Outputs zeros, counting its calls."""

    calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        Zero.calls += 1
        return torch.zeros_like(x)


class Edges(DeclaredSpace):
    """Two edges, each none, skip or a linear map."""

    def declare(self, c: Chooser, *, in_features: int = 4, num_classes: int = 3) -> nn.Module:
        ops = {"none": Zero, "skip": nn.Identity, "linear": lambda: nn.Linear(4, 4)}
        edges = [c.layer(f"edge{i}", ops, cell="edge", zero="none", skip="skip") for i in range(2)]
        return nn.Sequential(nn.Linear(in_features, 4), *edges, nn.Linear(4, num_classes))


def test_the_cell_carries_the_roles_and_a_kept_zero_op_cuts_nothing_off() -> None:
    (cell,) = Edges().supernet().topology
    assert (cell.ops.names, cell.ops.zero, cell.ops.skip, cell.dataflow) == (
        ("none", "skip", "linear"),
        "none",
        "skip",
        False,
    )
    kept = discretise(cell, torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]))
    assert [e.op for e in kept] == ["none", "linear"] and cell.cut_off_outputs(kept) == ()


def test_the_supernet_never_runs_the_zero_op() -> None:
    supernet = Edges().supernet()
    x = torch.randn(2, 4)
    supernet(x)  # the first forward probes every candidate's output shape
    before = Zero.calls
    out = supernet(x)
    out.sum().backward()
    assert Zero.calls == before and torch.isfinite(out).all()


@pytest.mark.parametrize(
    ("roles", "match"),
    [
        ({"zero": "nothing"}, r"layer choice 'op': zero='nothing' names no candidate \(candidates: a, b\)"),
        ({"skip": True}, "skip=True names no candidate"),
        ({"zero": "a", "skip": "a"}, "candidate 'a' cannot be both zero and skip"),
    ],
)
def test_roles_that_name_no_candidate_are_refused_in_one_line(roles: dict[str, object], match: str) -> None:
    class Bad(DeclaredSpace):
        def declare(self, c: Chooser) -> nn.Module:
            return c.layer("op", {"a": nn.ReLU, "b": nn.Tanh}, **roles)  # type: ignore[arg-type]

    with pytest.raises(DeclarationError, match=match) as info:
        Bad().declaration  # noqa: B018 - reading it is the check
    assert "\n" not in str(info.value)

"""forwards_replaced: the swap and the exact restore the per-sample norms and the pooling
backward rely on."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from nasforge.tools.backends.forward_patch import forwards_replaced


def test_the_class_forward_returns_and_an_instance_forward_is_kept() -> None:
    plain, own = nn.ReLU(), nn.ReLU()
    own.forward = lambda x: x + 1  # type: ignore[method-assign]
    kept = own.__dict__["forward"]
    x = torch.tensor([-1.0, 2.0])
    with forwards_replaced({plain: lambda t: t * 0, own: lambda t: t * 2}):
        assert plain(x).tolist() == [0.0, 0.0] and own(x).tolist() == [-2.0, 4.0]
    assert "forward" not in plain.__dict__ and plain(x).tolist() == [0.0, 2.0]
    assert own.__dict__["forward"] is kept and own(x).tolist() == [0.0, 3.0]


def test_restored_when_the_block_raises() -> None:
    m = nn.ReLU()
    with pytest.raises(RuntimeError, match="inside"), forwards_replaced({m: lambda t: t}):
        raise RuntimeError("inside")
    assert "forward" not in m.__dict__

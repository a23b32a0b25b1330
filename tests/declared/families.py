"""Small declared families the declared-space tests share."""

from __future__ import annotations

from torch import nn

from nasforge import Chooser, DeclaredSpace


def conv_block(c: Chooser, cin: int) -> tuple[nn.Module, int]:
    k = c.choice("kernel", [3, 5])
    w = c.width("width", [4, 8])
    return nn.Sequential(nn.Conv2d(cin, w, k, padding=k // 2), nn.BatchNorm2d(w), nn.ReLU()), w


class OneStage(DeclaredSpace):
    """One stage of 1-2 blocks of a chosen kernel and width, then a chosen activation: 60 networks."""

    def declare(self, c: Chooser, *, in_channels: int = 3, num_classes: int = 10) -> nn.Module:
        blocks, width = c.repeat("stage", [1, 2], conv_block, in_channels)
        act = c.layer("act", {"relu": nn.ReLU, "tanh": nn.Tanh, "id": nn.Identity})
        return nn.Sequential(
            blocks, act, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(width, num_classes)
        )


class Cell(DeclaredSpace):
    """Three nodes, each reading a chosen earlier output (the last a chosen pair) through a chosen op."""

    name = "tiny-cell"

    def declare(self, c: Chooser, *, in_channels: int = 3, num_classes: int = 10) -> nn.Module:
        return CellNet(c, in_channels, num_classes)


class CellNet(nn.Module):
    def __init__(self, c: Chooser, in_channels: int, num_classes: int) -> None:
        super().__init__()
        self.stem = nn.Conv2d(in_channels, 4, 3, padding=1)
        ops = {"conv": lambda: nn.Conv2d(4, 4, 3, padding=1), "pool": lambda: nn.AvgPool2d(3, 1, 1)}
        self.reads = nn.ModuleList(c.inputs(f"node{n}_in", n + 1, 1 if n < 2 else 2) for n in range(3))
        self.ops = nn.ModuleList(c.layer(f"node{n}_op", ops, cell="op") for n in range(3))
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, num_classes))

    def forward(self, x):
        states = [self.stem(x)]
        for read, op in zip(self.reads, self.ops, strict=True):
            states.append(op(read(states)))
        return self.head(states[-1])

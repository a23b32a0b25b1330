"""A family of small CNNs for small images, declared in PyTorch: 3 stages of 1-3 blocks, each
block with its own kernel size, width, activation and optional squeeze-and-excitation."""

from torch import nn

from nasforge import Chooser, DeclaredSpace

ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU, "hardswish": nn.Hardswish}


class SqueezeExcite(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        squeeze = [nn.AdaptiveAvgPool2d(1), nn.Conv2d(channels, 8, 1), nn.ReLU(), nn.Conv2d(8, channels, 1)]
        self.gate = nn.Sequential(*squeeze, nn.Sigmoid())

    def forward(self, x):
        return x * self.gate(x)


class CnnFamily(DeclaredSpace):
    def __init__(self, depths=(1, 2, 3), kernels=(3, 5, 7), widths=(16, 32, 64), acts=tuple(ACTIVATIONS)):
        self.depths, self.kernels, self.widths, self.acts = depths, kernels, widths, acts

    def block(self, c: Chooser, cin: int) -> tuple[nn.Module, int]:
        k, w = c.choice("kernel", self.kernels), c.width("width", self.widths)
        act = ACTIVATIONS[c.choice("act", self.acts)]
        se = [SqueezeExcite(w)] if c.choice("se", [False, True]) else []
        return nn.Sequential(nn.Conv2d(cin, w, k, padding=k // 2), nn.BatchNorm2d(w), act(), *se), w

    def declare(self, c: Chooser, *, in_channels: int = 3, num_classes: int = 10) -> nn.Module:
        layers, width = [], in_channels
        for stage in (1, 2, 3):
            blocks, width = c.repeat(f"stage{stage}", self.depths, self.block, width)
            layers += [blocks, nn.MaxPool2d(2, ceil_mode=True)]
        return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(width, num_classes))

"""A test-only plugin: a space whose networks fail to build for a third of its genotypes.

``fragile`` is the toy space's 81 genotypes over digits' 1x8x8 images; every genotype
whose first slot is ``skip`` raises in ``build`` (27 of 81), as a space with an
unfinished operation does. Searches and sweeps over it must go on past those, and say
how many failed, which first, and why.
"""

from __future__ import annotations

from torch import nn

from nasforge import hookimpl
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.testing.toy import ToySpace

SPACE = "fragile"
BROKEN = "skip"


class FragileSpace(ToySpace):
    """The toy space on 8x8 images; no network whose first slot is ``skip`` builds."""

    name = SPACE

    def build(  # type: ignore[override]
        self, g: Genotype, *, in_channels: int = 1, num_classes: int = 10, width: int = 8
    ) -> nn.Module:
        self.validate(g)
        if g.choices[0] == BROKEN:
            raise RuntimeError(f"no network for {self.format(g)}: its first slot cannot be skip")
        net = super().build(g, in_features=64 * in_channels, width=width, num_classes=num_classes)
        assert isinstance(net, nn.Sequential)
        return net


@hookimpl
def nasforge_register_search_spaces() -> list[type]:
    return [FragileSpace]

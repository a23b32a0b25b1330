"""``hello-cell``: a small cell space of a third party, searchable by every one-shot method.

A genotype is, for each computed node 1, 2, 3, the op it applies and the earlier node
it reads: ``("conv3x3", 0, "skip", 1, "avg_pool", 0)``, written ``conv3x3~0|skip~1|avg_pool~0``.
That is 3 x 6 x 9 = 162 cells. Its ``supernet()`` follows the core's supernet contract,
which is how ``nasforge search --strategy darts|prdarts|nasi`` runs on it unchanged.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from typing import ClassVar

from torch import nn

from nasforge import Genotype, InvalidGenotypeError, KeptEdge, SearchSpace
from nasforge.kernel.search_space import BUILD, ENUMERATE, MUTATE, NEIGHBOURS, SAMPLE, SUPERNET
from nasforge_hello.cell_topology import NODES, OP_NAMES


class HelloCellSpace(SearchSpace):
    name: ClassVar[str] = "hello-cell"
    version: ClassVar[str] = "1"
    capabilities: ClassVar[frozenset[str]] = frozenset(
        {SAMPLE, MUTATE, NEIGHBOURS, ENUMERATE, BUILD, SUPERNET}
    )
    op_names: ClassVar[tuple[str, ...]] = OP_NAMES

    def _validate_choices(self, choices: tuple[str | int, ...]) -> None:
        if len(choices) != 2 * len(NODES):
            raise InvalidGenotypeError(f"a hello cell has {2 * len(NODES)} choices (op, input per node)")
        for node, op, src in zip(NODES, choices[::2], choices[1::2], strict=True):
            if op not in OP_NAMES:
                raise InvalidGenotypeError(f"node {node}: unknown op {op!r}; expected one of {OP_NAMES}")
            if isinstance(src, bool) or not isinstance(src, int) or not 0 <= src < node:
                raise InvalidGenotypeError(f"node {node}: input must be an int in [0, {node}), got {src!r}")

    def format(self, g: Genotype) -> str:
        self.validate(g)
        return "|".join(f"{op}~{src}" for op, src in zip(g.choices[::2], g.choices[1::2], strict=True))

    def parse(self, text: str) -> Genotype:
        parts = text.strip().split("|") if isinstance(text, str) else []
        if len(parts) != len(NODES) or not all(p.count("~") == 1 for p in parts):
            raise InvalidGenotypeError(f"a hello cell reads 'op~input|op~input|op~input', got {text!r}")
        choices: list[str | int] = []
        for part in parts:
            op, src = part.split("~")
            if not src.isdigit():
                raise InvalidGenotypeError(f"input of {part!r} must be a node number")
            choices += [op, int(src)]
        return self.genotype(choices)

    def sample(self, rng: random.Random) -> Genotype:
        choices: list[str | int] = []
        for node in NODES:
            choices += [rng.choice(OP_NAMES), rng.randrange(node)]
        return self.genotype(choices)

    def neighbours(self, g: Genotype) -> list[Genotype]:
        """Change one node's op, or the node it reads."""
        self.validate(g)
        out = []
        for i, node in enumerate(NODES):
            for op in OP_NAMES:
                if op != g.choices[2 * i]:
                    out.append(self._with(g, 2 * i, op))
            for src in range(node):
                if src != g.choices[2 * i + 1]:
                    out.append(self._with(g, 2 * i + 1, src))
        return out

    def _with(self, g: Genotype, index: int, value: str | int) -> Genotype:
        choices = list(g.choices)
        choices[index] = value
        return self.genotype(choices)

    @property
    def size(self) -> int:
        total = 1
        for node in NODES:
            total *= len(OP_NAMES) * node
        return total

    def enumerate(self) -> Iterator[Genotype]:
        per_node = [list(itertools.product(OP_NAMES, range(node))) for node in NODES]
        for combo in itertools.product(*per_node):
            yield self.genotype([x for pair in combo for x in pair])

    def build(
        self, g: Genotype, *, C: int = 4, cells: int = 1, num_classes: int = 10, in_channels: int = 3
    ) -> nn.Module:
        """The stand-alone network of ``g``."""
        from nasforge_hello.cell_network import CellNetwork

        self.validate(g)
        kept = [
            KeptEdge(str(op), int(src), node)
            for node, op, src in zip(NODES, g.choices[::2], g.choices[1::2], strict=True)
        ]
        return CellNetwork(kept, C=C, cells=cells, num_classes=num_classes, in_channels=in_channels)

    def supernet(
        self, *, C: int = 4, cells: int = 1, num_classes: int = 10, in_channels: int = 3
    ) -> nn.Module:
        """The weight-sharing network (the core's supernet contract)."""
        from nasforge_hello.cell_supernet import HelloSupernet

        return HelloSupernet(C=C, cells=cells, num_classes=num_classes, in_channels=in_channels)

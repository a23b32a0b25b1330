"""The DARTS cell search space as a nasforge :class:`~nasforge.SearchSpace`.

A genotype keeps, per intermediate node, two (op, input) edges in each of a normal and a
reduction cell. The space is about 10^18 ordered genotypes, so it offers ``size`` but not
``enumerate``; strategies move through it by sampling, single-edge mutations and an
one-hot encoding.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

import torch
from torch import nn

from nasforge.kernel.decisions import Decision
from nasforge.kernel.errors import InvalidGenotypeError, OptionError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.option_types import check_options, first_line
from nasforge.kernel.search_space import (
    BUILD,
    DECISIONS,
    ENCODE,
    MUTATE,
    NEIGHBOURS,
    SAMPLE,
    SUPERNET,
    SearchSpace,
)
from nasforge_darts.cell_genotype import CellGenotype, Edge
from nasforge_darts.genotype_text import format_cells, parse_cells
from nasforge_darts.primitives import (
    CELL_OPS,
    CELL_TYPES,
    EDGES_PER_NODE,
    INPUTS,
    PRIMITIVES,
    STEPS,
)

_MAX_SOURCES = INPUTS + STEPS - 1  # node 5 reads one of nodes 0..4
_EDGE_WIDTH = len(CELL_OPS) + _MAX_SOURCES


class DartsSpace(SearchSpace):
    """Normal + reduction cells, 2 inputs, 4 intermediate nodes, the 8 DARTS ops."""

    name: ClassVar[str] = "darts"
    version: ClassVar[str] = "1"
    capabilities: ClassVar[frozenset[str]] = frozenset(
        {SAMPLE, MUTATE, NEIGHBOURS, ENCODE, BUILD, SUPERNET, DECISIONS}
    )
    op_names: ClassVar[tuple[str, ...]] = PRIMITIVES
    #: What ``supernet(**cfg)`` takes (the fields of ``search_network.SupernetConfig``).
    supernet_options: ClassVar[frozenset[str]] = frozenset(
        {"C", "layers", "num_classes", "in_channels", "stem_multiplier", "arch_init_std"}
    )

    # --- structure ------------------------------------------------------------------
    def _validate_choices(self, choices: tuple[str | int, ...]) -> None:
        CellGenotype.from_choices(choices)

    def cells(self, g: Genotype) -> CellGenotype:
        """The structured (normal, reduce) view of a validated genotype."""
        self.validate(g)
        return CellGenotype.from_choices(g.choices)

    def from_cells(self, cells: CellGenotype) -> Genotype:
        return self.genotype(cells.to_choices())

    def format(self, g: Genotype) -> str:
        return format_cells(self.cells(g))

    def parse(self, text: str) -> Genotype:
        return self.from_cells(parse_cells(text))

    # --- sampling and moves ---------------------------------------------------------
    def sample(self, rng: random.Random) -> Genotype:
        """Uniform ops; each node's two inputs distinct, as a DARTS-derived cell has them."""
        cells = []
        for _ in CELL_TYPES:
            edges: list[Edge] = []
            for i in range(STEPS):
                sources = rng.sample(range(INPUTS + i), EDGES_PER_NODE)
                edges.extend((rng.choice(CELL_OPS), s) for s in sources)
            cells.append(edges)
        return self.from_cells(CellGenotype(normal=cells[0], reduce=cells[1]))

    def neighbours(self, g: Genotype) -> list[Genotype]:
        """Change one edge's op, or rewire one edge to a source its node does not yet read."""
        choices = list(self.cells(g).to_choices())
        out: list[Genotype] = []
        for k in range(0, len(choices), 2):
            op, src = choices[k], choices[k + 1]
            for other in CELL_OPS:
                if other != op:
                    out.append(self._with(choices, k, other))
            edge = (k // 2) % (EDGES_PER_NODE * STEPS)
            node = INPUTS + edge // EDGES_PER_NODE
            partner = k + 3 if edge % 2 == 0 else k - 1  # the input slot of the node's other edge
            for s in range(node):
                if s not in (src, choices[partner]):
                    out.append(self._with(choices, k + 1, s))
        return out

    def _with(self, choices: list[str | int], index: int, value: str | int) -> Genotype:
        changed = list(choices)
        changed[index] = value
        return self.genotype(changed)

    # --- numeric views --------------------------------------------------------------
    def encode(self, g: Genotype) -> torch.Tensor:
        """Per edge: one-hot op (7) then one-hot input (5); 16 edges, 192 floats."""
        x = torch.zeros(2 * EDGES_PER_NODE * STEPS, _EDGE_WIDTH)
        cells = self.cells(g)
        for e, (op, src) in enumerate((*cells.normal, *cells.reduce)):
            x[e, CELL_OPS.index(op)] = 1.0
            x[e, len(CELL_OPS) + src] = 1.0
        return x.flatten()

    def decode(self, x: torch.Tensor) -> Genotype:
        """Arg-max per block, restricting each edge's input to the nodes before it."""
        n_edges = 2 * EDGES_PER_NODE * STEPS
        if x.numel() != n_edges * _EDGE_WIDTH:
            raise InvalidGenotypeError(
                f"a DARTS encoding has {n_edges * _EDGE_WIDTH} entries, got {x.numel()}"
            )
        blocks = x.detach().reshape(n_edges, _EDGE_WIDTH).float()
        choices: list[str | int] = []
        for e in range(n_edges):
            node = INPUTS + (e % (EDGES_PER_NODE * STEPS)) // EDGES_PER_NODE
            op = CELL_OPS[int(blocks[e, : len(CELL_OPS)].argmax())]
            src = int(blocks[e, len(CELL_OPS) : len(CELL_OPS) + node].argmax())
            choices += [op, src]
        return self.genotype(choices)

    def decisions(self) -> tuple[Decision, ...]:
        """Each edge's op and input node (``normal.3.op``, ``normal.3.input``: the cell's 4th
        edge), in the genotype's order; a node's two edges may read the same input."""
        out = []
        for cell in CELL_TYPES:
            for k in range(EDGES_PER_NODE * STEPS):
                node = INPUTS + k // EDGES_PER_NODE
                out += [Decision(f"{cell}.{k}.op", CELL_OPS), Decision(f"{cell}.{k}.input", range(node))]
        return tuple(out)

    @property
    def size(self) -> int:
        """Ordered genotypes: per node, (7 ops x its inputs) squared; squared again for 2 cells.

        Swapping a node's two edges gives a different genotype tuple for the same network,
        so this counts genotypes, not distinct networks.
        """
        per_cell = 1
        for i in range(STEPS):
            per_cell *= (len(CELL_OPS) * (INPUTS + i)) ** EDGES_PER_NODE
        return per_cell**2

    # --- networks -------------------------------------------------------------------
    def build(self, g: Genotype, **cfg: Any) -> nn.Module:
        """The evaluation network: ``dataset='cifar'`` (default) or ``'imagenet'``.

        See :func:`nasforge_darts.eval_network.build_network` for the options
        (``C``, ``layers``, ``num_classes``, ``auxiliary``, ``drop_path``, ``in_channels``);
        they are user input (``--build-option``), so a bad one is a one-line OptionError.
        """
        from nasforge_darts.eval_network import EvalNetwork

        cells = self.cells(g)
        return EvalNetwork(cells, network_config(cfg))

    def supernet(self, **cfg: Any) -> nn.Module:
        """The DARTS search network with explicit ``alphas_normal`` / ``alphas_reduce``."""
        from nasforge_darts.search_network import SearchNetwork

        return SearchNetwork(supernet_config(cfg))


#: Most weights a network may have (about 4 GB of float32): past this a typo in C or
#: layers allocates until the machine gives up instead of failing.
MAX_PARAMETERS = 10**9


def network_config(options: dict[str, Any]) -> Any:
    """The evaluation network's config from user options, or a one-line OptionError."""
    from nasforge_darts.eval_config import EvalNetConfig

    config = _checked("darts network", EvalNetConfig, options, EvalNetConfig.create)
    # per cell: 8 edges of at most a sep_conv_5x5 (2c^2 + 50c) and two 1x1 preprocessors
    # (up to 8c^2); a third of the cells at each of C, 2C, 4C -> 168 L C^2 in all
    _check_size(
        "darts network", config, 168 * config.layers * config.C**2 + 16 * config.C * config.num_classes
    )
    return config


def supernet_config(options: dict[str, Any]) -> Any:
    """The search network's config from user options, or a one-line OptionError."""
    from nasforge_darts.search_network import SupernetConfig

    config = _checked("darts supernet", SupernetConfig, options, SupernetConfig)
    # per cell: 14 edges holding every op (about 6c^2) and the preprocessors -> 644 L C^2
    _check_size(
        "darts supernet", config, 644 * config.layers * config.C**2 + 16 * config.C * config.num_classes
    )
    return config


def _checked(owner: str, config_class: type, options: dict[str, Any], make: Any) -> Any:
    given = {k: v for k, v in options.items() if v is not None}  # None keeps the default
    check_options(owner, config_class, given)
    try:
        return make(**options)
    except OptionError:
        raise
    except (TypeError, ValueError) as exc:  # the config's own range checks
        raise OptionError(f"{owner}: {first_line(exc)}") from exc


def _check_size(owner: str, config: Any, parameters: int) -> None:
    if parameters > MAX_PARAMETERS:
        raise OptionError(
            f"{owner} with C={config.C}, layers={config.layers} would have about "
            f"{parameters:.2g} parameters (at most {MAX_PARAMETERS:.0g})"
        )

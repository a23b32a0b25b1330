"""The NAS-Bench-201 search space: 15,625 cells, one op on each of 6 edges.

A genotype's ``choices`` are the six op names in the benchmark string's edge order
(1<-0, 2<-0, 2<-1, 3<-0, 3<-1, 3<-2), so the canonical string form is the benchmark's own
and any tool that speaks NAS-Bench-201 can read our journals. Enumeration follows the
benchmark's index order (the rows of the bundled table), so "architecture 13714" means
the same cell here as in every paper that quotes an index.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import ClassVar

import torch

from nasforge.kernel.decisions import Decision
from nasforge.kernel.errors import InvalidGenotypeError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.option_types import check_options
from nasforge.kernel.search_space import (
    BUILD,
    DECISIONS,
    ENCODE,
    ENUMERATE,
    MUTATE,
    NEIGHBOURS,
    SAMPLE,
    STACK,
    SUPERNET,
    SearchSpace,
)
from nasforge_nb201 import arch
from nasforge_nb201.factory import NB201NetworkFactory
from nasforge_nb201.macro import MacroConfig
from nasforge_nb201.network import NB201Network, build
from nasforge_nb201.stack import NB201Stack
from nasforge_nb201.supernet import NB201Supernet, supernet
from nasforge_nb201.table import load_table

#: What ``build`` takes besides the genotype.
BUILD_OPTIONS = ("C", "N", "num_classes", "in_channels")


class NB201Space(SearchSpace):
    """NAS-Bench-201 (NATS-Bench topology) cells with benchmark string and index forms."""

    name: ClassVar[str] = arch.SPACE_NAME
    version: ClassVar[str] = arch.SPACE_VERSION
    capabilities: ClassVar[frozenset[str]] = frozenset(
        {SAMPLE, MUTATE, NEIGHBOURS, ENCODE, ENUMERATE, BUILD, SUPERNET, DECISIONS, STACK}
    )
    op_names: ClassVar[tuple[str, ...]] = arch.OP_NAMES

    # --- identity -------------------------------------------------------------------
    def _validate_choices(self, choices: tuple[str | int, ...]) -> None:
        arch.check_ops(choices)

    def format(self, g: Genotype) -> str:
        self.validate(g)
        return arch.to_string(g.choices)  # type: ignore[arg-type]

    def parse(self, text: str) -> Genotype:
        return self._make(arch.from_string(text))

    def _make(self, ops: tuple[str, ...]) -> Genotype:
        """A genotype from ops already known to be valid (skips re-validation)."""
        return Genotype(space=self.name, version=self.version, choices=ops)

    # --- benchmark index ---------------------------------------------------------------
    def index_of(self, g: Genotype) -> int:
        """The benchmark index (row of the bundled table) of ``g``."""
        self.validate(g)
        return load_table().index_of_code(arch.to_code(g.choices))  # type: ignore[arg-type]

    def at_index(self, index: int) -> Genotype:
        """The genotype at benchmark ``index`` (inverse of :meth:`index_of`)."""
        return self._make(arch.from_code(load_table().code_of(index)))

    # --- sampling and moves ---------------------------------------------------------
    def sample(self, rng: random.Random) -> Genotype:
        """Uniform over the 15,625 cells: each edge's op drawn independently."""
        return self._make(tuple(rng.choice(self.op_names) for _ in arch.EDGES))

    def neighbours(self, g: Genotype) -> list[Genotype]:
        """The 24 cells that differ from ``g`` on exactly one edge (edge-major order)."""
        self.validate(g)
        ops = tuple(g.choices)
        out = []
        for e in range(arch.NUM_EDGES):
            for op in self.op_names:
                if op != ops[e]:
                    out.append(self._make((*ops[:e], op, *ops[e + 1 :])))  # type: ignore[arg-type]
        return out

    # --- numeric views --------------------------------------------------------------
    def encode(self, g: Genotype) -> torch.Tensor:
        """Flattened (6 x 5) one-hot float32 tensor, edge-major, ops in ``op_names`` order."""
        self.validate(g)
        x = torch.zeros(arch.NUM_EDGES, arch.NUM_OPS)
        for e, op in enumerate(g.choices):
            x[e, arch.op_index(op)] = 1.0  # type: ignore[arg-type]
        return x.flatten()

    def decode(self, x: torch.Tensor) -> Genotype:
        """The per-edge argmax of a 30-value (or 6 x 5) encoding; ties go to the first op."""
        if not isinstance(x, torch.Tensor) or x.numel() != arch.NUM_EDGES * arch.NUM_OPS:
            got = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise InvalidGenotypeError(
                f"an nb201 encoding has {arch.NUM_EDGES}x{arch.NUM_OPS}=30 values, got {got}"
            )
        if not torch.isfinite(x).all():
            raise InvalidGenotypeError("an nb201 encoding must be finite")
        idx = x.detach().reshape(arch.NUM_EDGES, arch.NUM_OPS).argmax(dim=1).tolist()
        return self._make(tuple(self.op_names[k] for k in idx))

    def decisions(self) -> tuple[Decision, ...]:
        """Each edge's op, named as the edge (``2<-1``: into node 2 from node 1)."""
        return tuple(Decision(f"{dst}<-{src}", self.op_names) for dst, src in arch.EDGES)

    @property
    def size(self) -> int:
        return arch.SPACE_SIZE

    def enumerate(self) -> Iterator[Genotype]:
        """All cells in benchmark index order (row ``i`` of the table is yielded ``i``-th)."""
        for code in load_table().codes.tolist():
            yield self._make(arch.from_code(code))

    # --- networks -------------------------------------------------------------------
    def build(self, g: Genotype, **cfg: object) -> NB201Network:
        """Stand-alone network; ``cfg``: ``C``, ``N``, ``num_classes``, ``in_channels``.

        ``cfg`` is user input (``--build-option``): names and types are checked here and
        sizes by :class:`~nasforge_nb201.macro.MacroConfig`, each as one-line OptionError.
        """
        self.validate(g)
        check_options("nb201 network", build, cfg, accepted=BUILD_OPTIONS)
        return build(g, **cfg)  # type: ignore[arg-type]

    def network_factory(self, **cfg: object) -> NB201NetworkFactory:
        """Networks for sweeps: modules reused between genotypes, weights re-drawn (the
        same networks as :meth:`build` under a seed, ~10x faster); ``cfg`` as for build."""
        check_options("nb201 network", build, cfg, accepted=BUILD_OPTIONS)
        return NB201NetworkFactory(MacroConfig(**cfg))  # type: ignore[arg-type]

    def network_stack(self, cells: int, *, dtype: torch.dtype = torch.float32, **cfg: object) -> NB201Stack:
        """``cells`` networks as one module of grouped convolutions, for batched scoring
        (the same networks as :meth:`build` gives, weights copied in from them); ``cfg``
        as for build."""
        check_options("nb201 network", build, cfg, accepted=BUILD_OPTIONS)
        return NB201Stack(cells, MacroConfig(**cfg), dtype)  # type: ignore[arg-type]

    def supernet(self, **cfg: object) -> NB201Supernet:
        """Weight-sharing network with ``alphas`` of shape (6, 5); same ``cfg`` as build."""
        check_options("nb201 supernet", supernet, cfg)
        return supernet(**cfg)  # type: ignore[arg-type]

"""What ``nasforge insight`` is asked about: genotypes, read from text by whichever space can.

A genotype's text names no space, and the command should not need one: each registered
space that can ``build`` is asked to parse it, and the one that accepts it owns it (two
that both accept it are refused with a hint to name ``--space``). A published cell's
name (``DARTS_V2``, ``NASNet``, ...) stands for its authors' text. Text no space can hold
but that is a cell in its authors' ``Genotype(normal=..., ...)`` form (the NASNet-space
cells, with five intermediate nodes) still gets the cell diagnostics, without a network.
A space that builds such cells without a supernet (``nasnet-cells``) is read through that
text form: its cells for the diagnostics, its variants drawn on the text cells exactly as
the authors drew them, then parsed back by the space.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from nasforge.kernel.errors import InvalidGenotypeError, NasforgeError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.option_types import first_line
from nasforge.kernel.search_space import BUILD, SUPERNET, SearchSpace
from nasforge_insight.cell_graph import CellGraph
from nasforge_insight.cell_text import format_cells, parse_cells
from nasforge_insight.published_cells import PUBLISHED
from nasforge_insight.space_cells import cell_graphs
from nasforge_insight.variants import connection_variants, operation_variant, reop, rewire


@attrs.frozen
class Subject:
    """One genotype of the report; ``space`` and ``genotype`` are None for a text-only cell."""

    label: str
    text: str
    cells: tuple[CellGraph, ...]
    space: SearchSpace | None = attrs.field(default=None, eq=False)
    genotype: Genotype | None = None

    @property
    def space_name(self) -> str:
        return self.space.name if self.space is not None else "(cell text only)"

    @property
    def shape_label(self) -> str:
        return " / ".join(c.shape().label() for c in self.cells)


#: Other spellings of the published cells' names (the authors' code: ``DARTS = DARTS_V2``).
ALIASES = {"DARTS": "DARTS_V2", "SNAS": "SNAS_MILD", "AMOEBA": "AmoebaNet"}


def published_name(text: str) -> str | None:
    """The published cell ``text`` names (any case, ``-`` or ``_``), or None."""
    key = text.strip().upper().replace("-", "_")
    key = ALIASES.get(key, key)
    return next((name for name in PUBLISHED if name.upper() == key.upper()), None)


def _cells(space: SearchSpace, g: Genotype) -> tuple[CellGraph, ...]:
    if SUPERNET not in space.capabilities:
        try:  # a space of cells in their authors' text form, built without a supernet
            return parse_cells(space.format(g))
        except InvalidGenotypeError:
            return ()
    try:
        return cell_graphs(space, g)
    except NasforgeError:
        return ()  # a space without a cell graph: the network diagnostics still apply


def resolve(text: str, registry: Any, *, space: str | None = None, label: str | None = None) -> Subject:
    """The subject ``text`` names (module docstring); a one-line error when nothing reads it."""
    name = published_name(text)
    if name is not None:
        text, label = PUBLISHED[name], label or name
    if space is not None:
        s = registry.space(space)
        g = s.parse(text)
        return Subject(label or s.name, s.format(g), _cells(s, g), s, g)
    accepted: list[tuple[SearchSpace, Genotype]] = []
    for candidate in registry.names("space"):
        s = registry.space(candidate)
        if BUILD not in s.capabilities:
            continue
        try:
            accepted.append((s, s.parse(text)))
        except (NasforgeError, ValueError, TypeError, SyntaxError):
            continue
    if len(accepted) > 1:
        names = ", ".join(s.name for s, _ in accepted)
        raise NasforgeError(
            f"genotype {_short(text)} parses in several spaces ({names}): name one with --space"
        )
    if accepted:
        s, g = accepted[0]
        return Subject(label or s.name, s.format(g), _cells(s, g), s, g)
    try:
        cells = parse_cells(text)
    except InvalidGenotypeError as exc:
        raise NasforgeError(
            f"genotype {_short(text)} is no space's genotype and no Genotype(...) cell text "
            f"({first_line(exc)}); name its space with --space to see why"
        ) from None
    return Subject(label or "cell text", text, cells)


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[:limit] + "...")


def with_variants(subject: Subject, count: int) -> list[Subject]:
    """The thesis's connection variants 1..count of ``subject`` (CONN1.., as the authors seed them)."""
    if count <= 0:
        return []
    if subject.space is None or subject.genotype is None:
        raise NasforgeError(f"'{subject.label}' is cell text only: variants need a space to build them")
    if _text_form(subject):
        seeds = range(1, count + 1)
        return [
            _from_text(subject.space, subject, f"CONN{seed}", rewire(subject.cells, seed)) for seed in seeds
        ]
    out = []
    for seed, g in enumerate(
        connection_variants(subject.space, subject.genotype, range(1, count + 1)), start=1
    ):
        cells = cell_graphs(subject.space, g)
        out.append(Subject(f"{subject.label} CONN{seed}", subject.space.format(g), cells, subject.space, g))
    return out


def _text_form(subject: Subject) -> bool:
    """True for a space's subject whose cells come from its text (no supernet view)."""
    return subject.space is not None and SUPERNET not in subject.space.capabilities and bool(subject.cells)


def _from_text(space: SearchSpace, subject: Subject, tag: str, cells: tuple[CellGraph, ...]) -> Subject:
    """A variant drawn on the text cells, read back by the subject's space (which checks it)."""
    g = space.parse(format_cells(cells))
    return Subject(f"{subject.label} {tag}", space.format(g), _cells(space, g), space, g)


def with_op_variants(subject: Subject, count: int) -> list[Subject]:
    """The thesis's operation variants 1..count of ``subject`` (OPS1..: every present edge's op
    redrawn, the topology kept), as the authors seed them."""
    if count <= 0:
        return []
    if subject.space is None or subject.genotype is None:
        raise NasforgeError(f"'{subject.label}' is cell text only: variants need a space to build them")
    if _text_form(subject):
        seeds = range(1, count + 1)
        return [_from_text(subject.space, subject, f"OPS{seed}", reop(subject.cells, seed)) for seed in seeds]
    out = []
    for seed in range(1, count + 1):
        g = operation_variant(subject.space, subject.genotype, seed)
        cells = cell_graphs(subject.space, g)
        out.append(Subject(f"{subject.label} OPS{seed}", subject.space.format(g), cells, subject.space, g))
    return out


def labelled(texts: Sequence[str], labels: Sequence[str]) -> list[tuple[str, str | None]]:
    if len(labels) > len(texts):
        raise NasforgeError(f"{len(labels)} labels for {len(texts)} genotypes")
    return [(t, labels[i] if i < len(labels) else None) for i, t in enumerate(texts)]


def extreme_variants(subject: Subject, count: int) -> list[Subject]:
    """Of connection variants 1..count, the widest-shallowest and the narrowest-deepest by
    the first cell (the normal cell: the chapter analyses those), labelled as such."""
    pool = with_variants(subject, count)
    if len(pool) < 2:
        raise NasforgeError("extreme variants need at least 2 variants to choose from")

    def key(s: Subject) -> tuple[float, int]:
        shape = s.cells[0].shape()
        return (shape.width, -shape.depth)

    widest = max(pool, key=key)
    deepest = max(pool, key=lambda s: (s.cells[0].shape().depth, -s.cells[0].shape().width))
    return [
        attrs.evolve(widest, label=f"{widest.label} (widest, shallowest)"),
        attrs.evolve(deepest, label=f"{deepest.label} (narrowest, deepest)"),
    ]

"""The NAS-Bench-201 cell as plain data: op vocabulary, edge order, string and integer forms.

Everything else in the plugin (space, table, networks, cost model) agrees on these few
facts, so they live in one dependency-free module that none of the others can disagree
with. The benchmark string is the lingua franca of NAS-Bench-201 tools and must round-trip
exactly; the integer code (the 6 op indices read as a base-5 number, first edge most
significant) is what lets the table map architectures to rows with two small arrays
instead of a dict of 15,625 strings.
"""

from __future__ import annotations

import difflib
import operator
from collections.abc import Sequence

from nasforge.kernel.errors import InvalidGenotypeError

SPACE_NAME = "nb201"
SPACE_VERSION = "1"

#: The benchmark's five candidate operations, in the order used by encodings and alphas.
OP_NAMES: tuple[str, ...] = (
    "none",
    "skip_connect",
    "nor_conv_1x1",
    "nor_conv_3x3",
    "avg_pool_3x3",
)
NUM_OPS = len(OP_NAMES)

#: (target node, source node) for each edge, in the benchmark string's order.
EDGES: tuple[tuple[int, int], ...] = ((1, 0), (2, 0), (2, 1), (3, 0), (3, 1), (3, 2))
NUM_EDGES = len(EDGES)
NUM_NODES = 4

#: Number of architectures in the space: 5 ops on each of 6 edges.
SPACE_SIZE = NUM_OPS**NUM_EDGES

_OP_INDEX = {name: i for i, name in enumerate(OP_NAMES)}
_MAX_SHOWN = 120


def op_index(name: str) -> int:
    """Index of ``name`` in :data:`OP_NAMES`; unknown names raise with a suggestion."""
    try:
        return _OP_INDEX[name]
    except (KeyError, TypeError):
        raise InvalidGenotypeError(_unknown_op(name)) from None


def _unknown_op(name: object) -> str:
    close = difflib.get_close_matches(str(name), OP_NAMES, n=1, cutoff=0.4)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return f"unknown op {name!r}{hint} (known: {', '.join(OP_NAMES)})"


def check_ops(ops: Sequence[object]) -> None:
    """Raise :class:`InvalidGenotypeError` unless ``ops`` is 6 known op names."""
    if len(ops) != NUM_EDGES:
        raise InvalidGenotypeError(
            f"an nb201 cell has {NUM_EDGES} edges (one op each), got {len(ops)} choices"
        )
    for (dst, src), op in zip(EDGES, ops, strict=True):
        if not isinstance(op, str) or op not in _OP_INDEX:
            raise InvalidGenotypeError(f"edge {dst}<-{src}: {_unknown_op(op)}")


def to_string(ops: Sequence[str]) -> str:
    """The benchmark string ``|op~0|+|op~0|op~1|+|op~0|op~1|op~2|`` of 6 op names."""
    check_ops(ops)
    nodes = []
    for dst in range(1, NUM_NODES):
        edges = [f"{ops[e]}~{src}" for e, (d, src) in enumerate(EDGES) if d == dst]
        nodes.append("|" + "|".join(edges) + "|")
    return "+".join(nodes)


def from_string(text: str) -> tuple[str, ...]:
    """Inverse of :func:`to_string`: the 6 op names of a benchmark string.

    Strict on purpose: only the canonical form (inputs listed 0, 1, ... in order) is
    accepted, so that one architecture never has two spellings in a journal.
    """
    if not isinstance(text, str):
        raise InvalidGenotypeError(f"an nb201 string must be str, got {type(text).__name__}")
    stripped = text.strip()
    nodes = stripped.split("+")
    if len(nodes) != NUM_NODES - 1:
        _bad(text, f"expected {NUM_NODES - 1} nodes separated by '+', got {len(nodes)}")
    ops: list[str] = []
    for dst, node in enumerate(nodes, start=1):
        if len(node) < 2 or not (node.startswith("|") and node.endswith("|")):
            _bad(text, f"node {dst} must be written as '|op~i|...|', got {node!r}")
        edges = node[1:-1].split("|")
        if len(edges) != dst:
            _bad(text, f"node {dst} must have {dst} incoming edge(s), got {len(edges)}")
        for src, edge in enumerate(edges):
            op, sep, index = edge.partition("~")
            if not sep:
                _bad(text, f"edge {edge!r} of node {dst} must be 'op~{src}'")
            if index != str(src):
                _bad(text, f"edge {edge!r} of node {dst} must read from input {src}, got {index!r}")
            if op not in _OP_INDEX:
                _bad(text, f"edge {dst}<-{src}: {_unknown_op(op)}")
            ops.append(op)
    return tuple(ops)


def _bad(text: str, reason: str) -> None:
    shown = text if len(text) <= _MAX_SHOWN else text[:_MAX_SHOWN] + "..."
    raise InvalidGenotypeError(f"invalid NAS-Bench-201 string {shown!r}: {reason}")


def to_code(ops: Sequence[str]) -> int:
    """The integer code in [0, 15625) of 6 op names (base 5, first edge most significant)."""
    check_ops(ops)
    code = 0
    for op in ops:
        code = code * NUM_OPS + _OP_INDEX[op]
    return code


def from_code(code: int) -> tuple[str, ...]:
    """Inverse of :func:`to_code`."""
    try:
        value = -1 if isinstance(code, bool) else operator.index(code)
    except TypeError:
        value = -1
    if not 0 <= value < SPACE_SIZE:
        raise InvalidGenotypeError(f"nb201 code must be an int in [0, {SPACE_SIZE}), got {code!r}")
    code = value
    digits = []
    for _ in range(NUM_EDGES):
        code, digit = divmod(code, NUM_OPS)
        digits.append(OP_NAMES[digit])
    return tuple(reversed(digits))

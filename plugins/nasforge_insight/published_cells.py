"""The five published cells of Shu's thesis, ch. 4 (Fig. 4.1), as their authors released them.

Text from the authors' repository (shuyao95/Understanding-NAS, ``genotypes.py``), which
trains exactly these for the chapter; SNAS is its "mild" cell, DARTS its second-order
cell. ``THESIS_NORMAL`` is Fig. 4.1's width and depth of each normal cell, the
reproduction target of the calculator (:mod:`nasforge_insight.cell_graph`).
"""

from __future__ import annotations

NASNET = (
    "Genotype(normal=[('sep_conv_5x5', 1), ('sep_conv_3x3', 0), ('sep_conv_5x5', 0), ('sep_conv_3x3', 0), "
    "('avg_pool_3x3', 1), ('skip_connect', 0), ('avg_pool_3x3', 0), ('avg_pool_3x3', 0), "
    "('sep_conv_3x3', 1), ('skip_connect', 1)], normal_concat=[2, 3, 4, 5, 6], "
    "reduce=[('sep_conv_5x5', 1), ('sep_conv_7x7', 0), ('max_pool_3x3', 1), ('sep_conv_7x7', 0), "
    "('avg_pool_3x3', 1), ('sep_conv_5x5', 0), ('skip_connect', 3), ('avg_pool_3x3', 2), "
    "('sep_conv_3x3', 2), ('max_pool_3x3', 1)], reduce_concat=[4, 5, 6])"
)

AMOEBANET = (
    "Genotype(normal=[('avg_pool_3x3', 0), ('max_pool_3x3', 1), ('sep_conv_3x3', 0), ('sep_conv_5x5', 2), "
    "('sep_conv_3x3', 0), ('avg_pool_3x3', 3), ('sep_conv_3x3', 1), ('skip_connect', 1), "
    "('skip_connect', 0), ('avg_pool_3x3', 1)], normal_concat=[4, 5, 6], "
    "reduce=[('avg_pool_3x3', 0), ('sep_conv_3x3', 1), ('max_pool_3x3', 0), ('sep_conv_7x7', 2), "
    "('sep_conv_7x7', 0), ('avg_pool_3x3', 1), ('max_pool_3x3', 0), ('max_pool_3x3', 1), "
    "('conv_7x1_1x7', 0), ('sep_conv_3x3', 5)], reduce_concat=[3, 4, 6])"
)

ENAS = (
    "Genotype(normal=[('sep_conv_3x3', 1), ('skip_connect', 1), ('sep_conv_5x5', 1), ('skip_connect', 0), "
    "('avg_pool_3x3', 0), ('sep_conv_3x3', 1), ('sep_conv_3x3', 0), ('avg_pool_3x3', 1), "
    "('sep_conv_5x5', 1), ('avg_pool_3x3', 0)], normal_concat=[2, 3, 4, 5, 6], "
    "reduce=[('sep_conv_5x5', 0), ('avg_pool_3x3', 1), ('sep_conv_3x3', 1), ('avg_pool_3x3', 1), "
    "('sep_conv_3x3', 1), ('avg_pool_3x3', 1), ('sep_conv_5x5', 4), ('avg_pool_3x3', 1), "
    "('sep_conv_3x3', 5), ('sep_conv_5x5', 0)], reduce_concat=[2, 3, 6])"
)

DARTS_V2 = (
    "Genotype(normal=[('sep_conv_3x3', 0), ('sep_conv_3x3', 1), ('sep_conv_3x3', 0), ('sep_conv_3x3', 1), "
    "('sep_conv_3x3', 1), ('skip_connect', 0), ('skip_connect', 0), ('dil_conv_3x3', 2)], "
    "normal_concat=[2, 3, 4, 5], reduce=[('max_pool_3x3', 0), ('max_pool_3x3', 1), ('skip_connect', 2), "
    "('max_pool_3x3', 1), ('max_pool_3x3', 0), ('skip_connect', 2), ('skip_connect', 2), "
    "('max_pool_3x3', 1)], reduce_concat=[2, 3, 4, 5])"
)

SNAS_MILD = (
    "Genotype(normal=[('sep_conv_3x3', 0), ('sep_conv_3x3', 1), ('skip_connect', 0), ('dil_conv_3x3', 1), "
    "('skip_connect', 0), ('skip_connect', 1), ('skip_connect', 0), ('sep_conv_3x3', 1)], "
    "normal_concat=[2, 3, 4, 5], reduce=[('max_pool_3x3', 0), ('max_pool_3x3', 1), ('skip_connect', 2), "
    "('max_pool_3x3', 1), ('max_pool_3x3', 1), ('skip_connect', 2), ('dil_conv_5x5', 2), "
    "('max_pool_3x3', 0)], reduce_concat=[2, 3, 4, 5])"
)

#: Name -> authors' text, in Fig. 4.1's order.
PUBLISHED: dict[str, str] = {
    "NASNet": NASNET,
    "AmoebaNet": AMOEBANET,
    "ENAS": ENAS,
    "DARTS_V2": DARTS_V2,
    "SNAS_MILD": SNAS_MILD,
}

#: Fig. 4.1: (width in units of c, depth) of each published normal cell.
THESIS_NORMAL: dict[str, tuple[float, int]] = {
    "NASNet": (5.0, 2),
    "AmoebaNet": (4.0, 4),
    "ENAS": (5.0, 2),
    "DARTS_V2": (3.5, 3),
    "SNAS_MILD": (4.0, 2),
}

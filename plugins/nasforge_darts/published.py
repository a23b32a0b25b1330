"""Published DARTS-space cells, as their authors released them.

Kept as text in the canonical form so they double as parser fixtures and as the
reproduction targets for parameter and mult-add counts.
"""

from __future__ import annotations

#: DARTS first order (Liu et al., 2019; quark0/darts genotypes.py).
DARTS_V1 = (
    "Genotype(normal=[('sep_conv_3x3', 1), ('sep_conv_3x3', 0), ('skip_connect', 0), "
    "('sep_conv_3x3', 1), ('skip_connect', 0), ('sep_conv_3x3', 1), ('sep_conv_3x3', 0), "
    "('skip_connect', 2)], normal_concat=[2, 3, 4, 5], reduce=[('max_pool_3x3', 0), "
    "('max_pool_3x3', 1), ('skip_connect', 2), ('max_pool_3x3', 0), ('max_pool_3x3', 0), "
    "('skip_connect', 2), ('skip_connect', 2), ('avg_pool_3x3', 0)], reduce_concat=[2, 3, 4, 5])"
)

#: DARTS second order, the cell behind the 2.76 % / 3.3M CIFAR-10 result.
DARTS_V2 = (
    "Genotype(normal=[('sep_conv_3x3', 0), ('sep_conv_3x3', 1), ('sep_conv_3x3', 0), "
    "('sep_conv_3x3', 1), ('sep_conv_3x3', 1), ('skip_connect', 0), ('skip_connect', 0), "
    "('dil_conv_3x3', 2)], normal_concat=[2, 3, 4, 5], reduce=[('max_pool_3x3', 0), "
    "('max_pool_3x3', 1), ('skip_connect', 2), ('max_pool_3x3', 1), ('max_pool_3x3', 0), "
    "('skip_connect', 2), ('skip_connect', 2), ('max_pool_3x3', 1)], reduce_concat=[2, 3, 4, 5])"
)

#: PR-DARTS (Zhou et al., NeurIPS 2020; salesforce/PR-DARTS, entry ``PRDARTS``).
PR_DARTS = (
    "Genotype(normal=[('skip_connect', 0), ('sep_conv_3x3', 1), ('dil_conv_3x3', 2), "
    "('sep_conv_3x3', 0), ('dil_conv_3x3', 3), ('sep_conv_3x3', 1), ('dil_conv_3x3', 4), "
    "('dil_conv_3x3', 1)], normal_concat=[2, 3, 4, 5], reduce=[('avg_pool_3x3', 0), "
    "('dil_conv_5x5', 1), ('sep_conv_3x3', 0), ('dil_conv_5x5', 2), ('sep_conv_5x5', 1), "
    "('dil_conv_3x3', 3), ('dil_conv_5x5', 4), ('dil_conv_5x5', 1)], reduce_concat=[2, 3, 4, 5])"
)

PUBLISHED: dict[str, str] = {"DARTS_V1": DARTS_V1, "DARTS_V2": DARTS_V2, "PR_DARTS": PR_DARTS}

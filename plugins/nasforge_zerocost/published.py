"""Published NAS-Bench-201 CIFAR-10 rank correlations, for side-by-side reports.

Sources (the published tables, transcribed by hand):
"zc" = Abdelfattah et al. 2021 notebook, all 15,625 cells, one CIFAR-10 batch of 64,
|Spearman| vs test accuracy; "vkdnw" = VKDNW (CVPR 2025) Table 1 re-run, Spearman;
"thesis" = Shu's thesis, the HNAS chapter, Tables 7.5/7.12 ("realizable" = the raw
metric), Spearman. The published ensemble figure is a pairwise agreement, not a Spearman,
so it lives apart (:data:`PUBLISHED_VOTE_C10`).
"""

from __future__ import annotations

PUBLISHED_SPEARMAN_C10: dict[str, dict[str, float]] = {
    "params": {},
    "flops": {"vkdnw": 0.799},
    "grad_norm": {"zc": 0.594, "vkdnw": 0.438, "thesis": 0.637},
    "snip": {"zc": 0.596, "vkdnw": 0.591, "thesis": 0.639},
    "grasp": {"zc": 0.514, "vkdnw": 0.505, "thesis": 0.566},
    "fisher": {"zc": 0.360, "thesis": 0.39},
    "fisher_channel": {},
    "synflow": {"zc": 0.737, "vkdnw": 0.758, "thesis": 0.78},
    "jacob_cov": {"zc": 0.731, "vkdnw": 0.800},
    "naswot": {"vkdnw": 0.762, "thesis": 0.09},
    "ntk_trace": {"thesis": 0.538},
    "ntk_trace_per_sample": {},
    "ntk_cond": {},
    "ntk_cond_per_sample": {},
    "ntk_lambda_min": {},
    "knas": {"thesis": 0.53},
    "nasi_proxy": {},
    "ensemble": {},
    "ensemble_vote": {},
}

#: Published pairwise "vote" agreements (not Spearman; ``ensemble.vote_agreement``):
#: the share of NAS-Bench-201 pairs the majority of synflow, jacob_cov and snip orders
#: right, all 15,625 cells, CIFAR-10 test accuracy (zero-cost notebook).
PUBLISHED_VOTE_C10: dict[str, float] = {"zc": 0.817}

#: Notes printed next to a published figure where the comparison is not like for like.
CAVEATS: dict[str, str] = {
    "ensemble": "zc 'vote' 0.817 is a pairwise agreement, not rho: see the vote line",
    "ensemble_vote": "zc 'vote' 0.817 is the vote's pairwise agreement, not rho: see the vote line",
    "fisher_channel": "not the published form (that is fisher)",
    "ntk_cond": "TE-NAS reports search results only, no correlation",
    "ntk_cond_per_sample": "not TE-NAS's kernel",
    "ntk_trace_per_sample": "not the HNAS code's kernel",
    "ntk_lambda_min": "the quantity of Eigen-NAS's theory, not its score; no correlation published",
    "knas": "thesis 0.53 is M_KNAS = sqrt(|1ᵀΘ1|)/m on the NTK (knas variant 'thesis'), not the MGM",
    "nasi_proxy": "NASI reports search results only (Pearson with the exact trace, Table 7)",
    "naswot": "thesis 0.09 is its (different) NASWOT implementation",
    "params": "AZ-NAS reports Kendall 0.578 (C10), no Spearman",
}

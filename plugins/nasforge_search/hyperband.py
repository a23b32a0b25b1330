"""Hyperband (Li et al., 2018): successive halving hedged over how aggressive to be.

Successive halving must choose between many architectures at a tiny fidelity (cheap,
but a short training may misjudge them) and few at a larger one. Hyperband cycles
through every choice: its first bracket starts ``eta**s_max`` architectures at the
smallest fidelity, its last trains a few at the full budget only (random search with
full training). With ``max_fidelity=9, min_fidelity=1, eta=3`` the brackets are
9 at 1 epoch -> 3 at 3 -> 1 at 9; 5 at 3 -> 1 at 9; 3 at 9.

Resume is replay, as for :mod:`nasforge_search.successive_halving`.
"""

from __future__ import annotations

from nasforge_search.successive_halving import BracketStrategy, hyperband_brackets


class Hyperband(BracketStrategy):
    """Hyperband: successive-halving brackets from the most to the least aggressive,
    cycled (``brackets`` of them in all, or until the budget ends)."""

    name = "hyperband"

    def bracket_shape(self, k: int) -> tuple[list[int], list[int]]:
        shapes = hyperband_brackets(self.fidelities, self.eta)
        return shapes[k % len(shapes)]

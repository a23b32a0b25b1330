"""NASI: neural architecture search at initialisation (Shu et al., ICLR 2022).

NASI never trains: it scores sampled architectures of a supernet by the NTK trace-norm
proxy at initialisation, penalises proxies above a trainability constraint, and reads
the architecture off one closed-form step of the architecture logits. The pieces are
public so that each can be tested against its equation in the paper:

- :func:`trace_proxy` (eq. 12) and :func:`penalised_objective` (eq. 13),
- :func:`straight_through_gumbel` (App. B.3), :class:`NormalisedSum` (eq. 18),
- :class:`FixedConstraint` / :class:`AdaptiveConstraint` (eqs. 40 and 41),
- :func:`run_nasi` (Algorithm 1) and the ``nasi`` one-shot strategy :class:`Nasi`.
"""

from typing import TYPE_CHECKING

from nasforge.kernel.lazy_package import lazy_package

if TYPE_CHECKING:  # the names with their types; at run time each loads on first use
    from nasforge_nasi.config import NasiConfig
    from nasforge_nasi.constraint import AdaptiveConstraint, FixedConstraint
    from nasforge_nasi.gumbel import straight_through_gumbel
    from nasforge_nasi.normalised_sum import NormalisedSum
    from nasforge_nasi.penalty import penalised_objective
    from nasforge_nasi.proxy import trace_proxy
    from nasforge_nasi.run import NasiRun
    from nasforge_nasi.search import run_nasi
    from nasforge_nasi.strategy import Nasi
else:
    lazy_package(__name__)

__all__ = [
    "AdaptiveConstraint",
    "FixedConstraint",
    "Nasi",
    "NasiConfig",
    "NasiRun",
    "NormalisedSum",
    "penalised_objective",
    "run_nasi",
    "straight_through_gumbel",
    "trace_proxy",
]

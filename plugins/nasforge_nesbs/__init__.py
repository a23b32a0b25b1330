"""NESBS: neural ensemble search via Bayesian sampling (Shu, Chen, Dai and Low, UAI 2022; thesis ch. 5).

NESBS searches an ensemble of different architectures, not one: it trains a supernet on
uniformly sampled paths, fits a post-training categorical posterior over architectures
with the straight-through Gumbel-softmax, samples candidate ensembles from it by Monte
Carlo or by SVGD with regularised diversity (the delta term), and keeps the candidate
whose averaged supernet predictions have the lowest loss. The pieces are public so that
each can be tested against the thesis:

- :func:`svgd_rd`, :func:`rbf_direction`, :func:`generic_direction` (Prop. 5.1) and the
  Fig. 5.2 toy (:func:`toy_particles`, :func:`spread`);
- :class:`ArchEncoding` (decisions of any supernet-contract space), :class:`ArchPosterior`,
  :func:`fit_posterior`, :func:`train_uniform`, :class:`SupernetPredictor`;
- :func:`run_nesbs` (Algorithm 5.1) and the ``nesbs`` one-shot strategy :class:`Nesbs`.
"""

from typing import TYPE_CHECKING

from nasforge.kernel.lazy_package import lazy_package

if TYPE_CHECKING:  # the names with their types; at run time each loads on first use
    from nasforge_nesbs.config import NesbsConfig
    from nasforge_nesbs.decisions import ArchEncoding, Decision
    from nasforge_nesbs.estimation import SupernetPredictor, combine, ensemble_scores
    from nasforge_nesbs.posterior import ArchPosterior
    from nasforge_nesbs.posterior_fit import fit_posterior
    from nasforge_nesbs.search import NesbsRun, run_nesbs
    from nasforge_nesbs.strategy import Nesbs
    from nasforge_nesbs.supernet_training import train_uniform
    from nasforge_nesbs.svgd import generic_direction, rbf_direction, svgd_rd
    from nasforge_nesbs.toy import spread, toy_particles
else:
    lazy_package(__name__)

__all__ = [
    "ArchEncoding",
    "ArchPosterior",
    "Decision",
    "Nesbs",
    "NesbsConfig",
    "NesbsRun",
    "SupernetPredictor",
    "combine",
    "ensemble_scores",
    "fit_posterior",
    "generic_direction",
    "rbf_direction",
    "run_nesbs",
    "spread",
    "svgd_rd",
    "toy_particles",
    "train_uniform",
]

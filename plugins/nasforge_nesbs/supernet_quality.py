"""Does the supernet rank architectures? The check behind the thesis's Table 5.6 (n = 1).

NESBS trusts the supernet twice: the posterior is fitted to its losses and the candidate
ensembles are selected by them. If the supernet's loss of an architecture says little
about how that architecture does when trained alone, the posterior learns noise and the
selection picks at random, whatever the sampler. The thesis checks this on ten
architectures trained for 100 epochs (Spearman 0.65 between estimated and true single
performance). This module does the same at the scale a run can afford: ``count``
distinct uniform architectures, each trained from scratch on the supernet's training
split for ``epochs``, scored on the selection split (never on test data), and ranked
against their supernet NLL on that split. The trained predictions are kept, so a caller
can reuse the pool (the NES-RS baseline selects ensembles from exactly such a pool).
"""

from __future__ import annotations

import inspect
import logging
import math
from typing import Any

import attrs
import torch

from nasforge.kernel.datasets import TensorData
from nasforge.kernel.search_space import SearchSpace
from nasforge.run.ensemble_training import MemberRecipe, train_network
from nasforge.tools.scoring import spearman
from nasforge_nesbs.decisions import ArchEncoding, Assignment
from nasforge_nesbs.estimation import SupernetPredictor, prob_scores
from nasforge_nesbs.member_training import predict_logits

log = logging.getLogger("nasforge.nesbs")

#: Below this Spearman the supernet barely ranks architectures (warned about).
WEAK_RANKING = 0.3
#: The thesis's Table 5.6 figure at n = 1 (DARTS space, CIFAR-10, 10 architectures).
THESIS_SPEARMAN = 0.65


@attrs.frozen(eq=False)
class SupernetQuality:
    """Architectures, their supernet scores and their trained-from-scratch scores (selection split)."""

    members: tuple[Assignment, ...]
    supernet_nll: tuple[float, ...]
    trained_error: tuple[float, ...]
    trained_nll: tuple[float, ...]
    epochs: int
    #: Each architecture's trained logits on the selection split (not serialised).
    logits: tuple[torch.Tensor, ...] = attrs.field(repr=False)

    @property
    def spearman(self) -> float:
        """Rank correlation of supernet NLL with trained error (higher: the supernet ranks)."""
        return spearman(list(self.supernet_nll), list(self.trained_error))

    @property
    def spearman_nll(self) -> float:
        """Rank correlation of supernet NLL with trained NLL."""
        return spearman(list(self.supernet_nll), list(self.trained_nll))

    def to_json(self) -> dict[str, Any]:
        return {
            "members": [list(a) for a in self.members],
            "supernet_nll": list(self.supernet_nll),
            "trained_error": list(self.trained_error),
            "trained_nll": list(self.trained_nll),
            "epochs": self.epochs,
            "spearman": self.spearman,
            "spearman_nll": self.spearman_nll,
        }


def build_options_for(space: SearchSpace, supernet_options: dict[str, Any]) -> dict[str, Any]:
    """The supernet's options that ``space.build`` also takes (NB201's C and N, ...), so a
    stand-alone network is the supernet's path at the same width."""
    params = inspect.signature(space.build).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return dict(supernet_options)
    return {k: v for k, v in supernet_options.items() if k in params}


def check_supernet(
    space: SearchSpace,
    encoding: ArchEncoding,
    predictor: SupernetPredictor,
    train: TensorData,
    *,
    count: int,
    epochs: int,
    seed: int,
    build_options: dict[str, Any] | None = None,
    device: str = "cpu",
) -> SupernetQuality:
    """``count`` distinct uniform architectures (drawn from their own generator, so the
    search's draws do not depend on the check) trained on ``train`` and compared with the
    supernet on ``predictor``'s data (the selection split)."""
    generator = torch.Generator().manual_seed(seed + 104_729)
    members: list[Assignment] = []
    for _ in range(100 * count):
        if len(members) == count:
            break
        a = encoding.uniform(generator)
        if a not in members:
            members.append(a)
    recipe = MemberRecipe(epochs=epochs)
    held = predictor.data
    logits, errors, nlls = [], [], []
    for i, a in enumerate(members):
        model = train_network(
            space,
            encoding.genotype(a),
            train,
            seed=seed * 1000 + i,
            recipe=recipe,
            build_options=build_options,
            device=device,
        )
        out = predict_logits(model, held.x)
        scores = prob_scores(torch.softmax(out.double(), -1), held.y)
        logits.append(out)
        errors.append(scores["error"])
        nlls.append(scores["nll"])
    quality = SupernetQuality(
        members=tuple(members),
        supernet_nll=tuple(predictor.member_scores(a)["nll"] for a in members),
        trained_error=tuple(errors),
        trained_nll=tuple(nlls),
        epochs=epochs,
        logits=tuple(logits),
    )
    report(quality)
    return quality


def report(quality: SupernetQuality) -> None:
    """Log the check, with a warning when the supernet barely ranks the architectures."""
    rho = quality.spearman
    log.info(
        "NESBS supernet check: Spearman %.2f between supernet NLL and the error of %d architectures "
        "trained %d epochs from scratch (selection split; thesis Table 5.6: %.2f)",
        rho,
        len(quality.members),
        quality.epochs,
        THESIS_SPEARMAN,
    )
    if not math.isfinite(rho) or rho < WEAK_RANKING:
        log.warning(
            "the NESBS supernet barely ranks architectures (Spearman %.2f < %.2f with their trained "
            "error): its posterior and its selection follow noise; train it longer (supernet_epochs "
            "or supernet_steps) or wider (supernet={'C': ...})",
            rho,
            WEAK_RANKING,
        )

"""Algorithm 5.1 of NESBS on a built supernet: train, fit the posterior, sample T ensembles, keep the best.

``run_nesbs`` is the whole search as a function of a supernet, its encoding and data, so
the strategy, the benchmark and the tests share it. Every random draw comes from the one
generator seeded by the caller, in a fixed order (split, supernet paths, posterior
samples, candidates), so a seed gives the same ensemble.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import attrs
import torch
from torch import nn

from nasforge.kernel.datasets import TensorData
from nasforge_nesbs.config import NesbsConfig
from nasforge_nesbs.decisions import ArchEncoding, Assignment
from nasforge_nesbs.estimation import SupernetPredictor
from nasforge_nesbs.posterior import ArchPosterior
from nasforge_nesbs.posterior_fit import fit_posterior, near_uniform
from nasforge_nesbs.sampling import mc_ensemble, svgd_ensemble, uniform_ensemble
from nasforge_nesbs.supernet_training import train_uniform

log = logging.getLogger("nasforge.nesbs")

#: Called as the search goes: (stage, assignment, objectives, metadata).
StageCallback = Callable[[str, Assignment, dict[str, float], dict[str, Any]], None]


@attrs.frozen
class Candidate:
    """One sampled ensemble, its estimated loss on the selection split, and the delta it was
    sampled at (None for MC sampling)."""

    members: tuple[Assignment, ...]
    scores: dict[str, float]
    delta: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"members": [list(a) for a in self.members], "scores": dict(self.scores), "delta": self.delta}


@attrs.frozen
class NesbsRun:
    """What one NESBS search produced (the strategy turns it into a SearchOutcome)."""

    members: tuple[Assignment, ...]
    member_scores: tuple[dict[str, float], ...]
    ensemble_scores: dict[str, float]
    candidates: tuple[Candidate, ...]
    best_index: int
    posterior: ArchPosterior = attrs.field(eq=False)
    supernet_log: tuple[dict[str, float], ...]
    seconds: dict[str, float]
    #: The trained supernet's cached predictions on the selection split (to score more architectures).
    predictor: SupernetPredictor | None = attrs.field(default=None, eq=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "members": [list(a) for a in self.members],
            "member_scores": [dict(s) for s in self.member_scores],
            "ensemble_scores": dict(self.ensemble_scores),
            "candidates": [c.to_json() for c in self.candidates],
            "best_candidate": self.best_index,
            "delta": self.candidates[self.best_index].delta,
            "posterior_logits": self.posterior.logits.tolist(),
            "posterior_entropy": self.posterior.entropy(),
            "posterior_prior_entropy": near_uniform(self.posterior)[1],
            "supernet_log": [dict(e) for e in self.supernet_log],
            "seconds": dict(self.seconds),
        }


def sample_candidate(
    posterior: ArchPosterior, config: NesbsConfig, generator: torch.Generator, *, delta: float = 0.0
) -> list[Assignment]:
    """One candidate ensemble of ``config.ensemble_size`` by the configured sampler."""
    n = config.ensemble_size
    if config.sampler == "mc":
        members = mc_ensemble(posterior, n, generator)
    elif config.sampler == "uniform":
        members = uniform_ensemble(posterior, n, generator)
    else:
        members = svgd_ensemble(
            posterior,
            n,
            generator,
            delta=delta,
            steps=config.svgd_steps,
            lr=config.svgd_lr,
            momentum=config.svgd_momentum,
            bandwidth=config.bandwidth,
        )
    if config.unique:
        members = _unique(members, posterior, generator)
    return members


def _unique(
    members: list[Assignment], posterior: ArchPosterior, generator: torch.Generator, tries: int = 100
) -> list[Assignment]:
    """Duplicates redrawn from p_alpha (the ``unique`` option); kept if p_alpha has too few distinct draws."""
    out: list[Assignment] = []
    for a in members:
        for _ in range(tries):
            if a not in out:
                break
            (a,) = posterior.sample(1, generator)
        out.append(a)
    return out


def select(
    predictor: SupernetPredictor,
    posterior: ArchPosterior,
    config: NesbsConfig,
    generator: torch.Generator,
) -> tuple[list[Candidate], int]:
    """T candidates (at each delta for ``delta="auto"``) scored by the supernet loss of their
    combined predictions; the best's index."""
    candidates = []
    key = config.selection_loss
    deltas: tuple[float | None, ...] = (None,) if config.sampler != "svgd-rd" else config.deltas()
    for delta in deltas:
        for _ in range(config.iterations):
            members = sample_candidate(posterior, config, generator, delta=0.0 if delta is None else delta)
            scores = predictor.ensemble_scores(members, config.combine)
            candidates.append(Candidate(tuple(members), scores, delta))
    best = min(
        range(len(candidates)), key=lambda t: (candidates[t].scores[key], candidates[t].scores["nll"], t)
    )
    return candidates, best


def supernet_predictor(
    supernet: nn.Module, encoding: ArchEncoding, data: TensorData, train: TensorData, config: NesbsConfig
) -> SupernetPredictor:
    """The supernet's predictions on ``data`` as ``config`` says (``bn``: recalibrated on
    ``train``, the supernet's own training split, where asked)."""
    return SupernetPredictor(
        supernet,
        encoding,
        data,
        batch_size=config.eval_batch_size,
        device=config.device,
        bn=config.bn,
        calibration=train,
        calibration_batches=config.bn_batches,
        calibration_batch_size=config.batch_size,
    )


def run_nesbs(
    supernet: nn.Module,
    encoding: ArchEncoding,
    data: TensorData,
    config: NesbsConfig,
    *,
    on_stage: StageCallback | None = None,
) -> NesbsRun:
    """Algorithm 5.1 on ``supernet`` (initialised) with ``data`` split ``config.split`` / rest."""
    generator = torch.Generator().manual_seed(config.seed)
    train, select_data = data.split(config.split, seed=config.seed)
    supernet.to(torch.device(config.device))
    emit = on_stage or (lambda *_: None)
    seconds: dict[str, float] = {}

    t0 = time.perf_counter()

    def supernet_epoch(epoch: int, loss: float, acc: float, last: Assignment) -> None:
        emit("supernet", last, {"train_loss": loss, "train_accuracy": 100.0 * acc}, {"epoch": epoch})

    sup_log = train_uniform(supernet, encoding, train, config, generator, on_epoch=supernet_epoch)
    seconds["supernet"] = time.perf_counter() - t0

    t0 = time.perf_counter()

    def posterior_epoch(epoch: int, nll: float, kl: float, post: ArchPosterior) -> None:
        mode = post.mode()
        scores = {"nll": nll, "kl": kl, "mode_log_prob": post.log_prob(mode), "entropy": post.entropy()}
        emit("posterior", mode, scores, {"epoch": epoch})

    if config.sampler == "uniform":  # URS-T samples no posterior: none is fitted
        posterior = ArchPosterior(encoding, tau=config.tau)
    else:
        posterior = fit_posterior(
            supernet, encoding, select_data, config, generator, on_epoch=posterior_epoch
        )
    seconds["posterior"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    predictor = supernet_predictor(supernet, encoding, select_data, train, config)
    candidates, best = select(predictor, posterior, config, generator)
    for t, cand in enumerate(candidates):
        for i, a in enumerate(cand.members):
            member = predictor.member_scores(a)
            emit(
                "candidate",
                a,
                {
                    "member_nll": member["nll"],
                    "member_error": member["error"],
                    "ensemble_nll": cand.scores["nll"],
                    "ensemble_error": cand.scores["error"],
                },
                {"candidate": t, "member": i},
            )
    chosen = candidates[best]
    member_scores = tuple(predictor.member_scores(a) for a in chosen.members)
    seconds["selection"] = time.perf_counter() - t0
    log.info(
        "NESBS (%s) ensemble: supernet NLL %.4f, error %.2f %% on the selection split",
        config.sampler,
        chosen.scores["nll"],
        chosen.scores["error"],
    )
    return NesbsRun(
        members=chosen.members,
        member_scores=member_scores,
        ensemble_scores=dict(chosen.scores),
        candidates=tuple(candidates),
        best_index=best,
        posterior=posterior,
        supernet_log=tuple(sup_log),
        seconds=seconds,
        predictor=predictor,
    )

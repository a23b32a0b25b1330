"""An ensemble's members trained from scratch and evaluated: what a search's ranking is not.

:func:`train_members` trains each member from scratch (stage E of NESBS, §5.3.5 of the
thesis; NES's final training), so an export or an evaluation has trained networks: a
search ranks members with shared or briefly trained weights, which is not what a user
deploys. :func:`evaluate_members` asks an evaluator (a tabular benchmark) what it says of
each member, beside the search's own scores.

Named apart from :mod:`nasforge.kernel.ensemble`, the value an ensemble search ends in:
training and evaluating its members needs data, training loops and evaluators, the run's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
import torch
from torch import nn

from nasforge.kernel.datasets import TensorData, network_options
from nasforge.kernel.ensemble import Ensemble
from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.evaluator import PREDICTIONS_KEY
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.network_factory import build_network
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.seeding import LocalRandomness, seeded_generator
from nasforge.run.training import train_cosine


@attrs.frozen
class MemberRecipe:
    """How each member is trained from scratch: SGD with momentum, cosine lr to 0.

    The short-train evaluator's recipe with momentum and gradient clipping (what NESBS's
    digits benchmark trains its members with); ``epochs`` is the one to choose.
    """

    epochs: int = attrs.field(default=30, validator=attrs.validators.ge(1))
    batch_size: int = attrs.field(default=64, validator=attrs.validators.ge(1))
    lr: float = attrs.field(default=0.05, validator=attrs.validators.gt(0.0))
    momentum: float = 0.9
    weight_decay: float = 3e-4
    grad_clip: float | None = 5.0


#: Called after every epoch of every member: (member index, epoch done, its train log).
EpochCallback = Callable[[int, int, dict[str, float]], None]


def train_network(
    space: SearchSpace,
    g: Genotype,
    data: TensorData,
    *,
    seed: int = 0,
    recipe: MemberRecipe | None = None,
    build_options: dict[str, Any] | None = None,
    device: str = "cpu",
    on_epoch: Callable[[int, dict[str, float]], None] | None = None,
) -> nn.Module:
    """``g``'s network trained from scratch on ``data``, in eval mode.

    Initial weights, batch order and dropout draw from ``seed`` only (generators owned by
    the call), so the same seed gives the same network whatever else runs. The data's
    channels and classes are filled in unless ``build_options`` name them.
    """
    recipe = recipe or MemberRecipe()
    options = {**network_options(data.input_shape, data.num_classes), **(build_options or {})}
    randomness = LocalRandomness(seed)
    with randomness:
        model = build_network(space, g, options).to(device)
    opt = torch.optim.SGD(
        model.parameters(), lr=recipe.lr, momentum=recipe.momentum, weight_decay=recipe.weight_decay
    )
    train_cosine(
        model,
        opt,
        data.x.to(device),
        data.y.to(device),
        epochs=recipe.epochs,
        lr=recipe.lr,
        batch_size=recipe.batch_size,
        order=seeded_generator(seed),
        randomness=randomness,
        grad_clip=recipe.grad_clip,
        after_epoch=on_epoch,  # it returns nothing: the training never stops early
    )
    return model.eval()


def train_members(
    ensemble: Ensemble,
    space: SearchSpace,
    data: TensorData,
    *,
    recipe: MemberRecipe | None = None,
    build_options: dict[str, Any] | None = None,
    seed: int = 0,
    device: str = "cpu",
    on_epoch: EpochCallback | None = None,
) -> list[nn.Module]:
    """Every member trained from scratch on ``data`` (member ``i`` from seed ``seed + i``, so
    a repeated architecture, as in DeepEns, still gets its own initial weights), in order."""
    models = []
    for i, g in enumerate(ensemble.members):
        callback = None if on_epoch is None else (lambda e, log, i=i: on_epoch(i, e, log))
        models.append(
            train_network(
                space,
                g,
                data,
                seed=seed + i,
                recipe=recipe,
                build_options=build_options,
                device=device,
                on_epoch=callback,
            )
        )
    return models


def predict_probabilities(
    ensemble: Ensemble, models: Sequence[nn.Module], x: torch.Tensor, *, batch_size: int = 512
) -> torch.Tensor:
    """[N, C] class probabilities of the ensemble of trained ``models`` on ``x`` (eval mode)."""
    module = ensemble.module(models).eval()
    device = next(module.parameters()).device
    with torch.no_grad():
        out = [module(x[i : i + batch_size].to(device)).cpu() for i in range(0, len(x), batch_size)]
    return torch.cat(out)


# --- members' evaluations -------------------------------------------------------------
def ensemble_scores_of_results(
    ensemble: Ensemble, results: Sequence[Any], labels: Sequence[int]
) -> dict[str, float]:
    """The ensemble's validation error (%) and NLL from its members' evaluations.

    Each result must carry per-example probabilities (an evaluator with ``per_example``,
    asked for them: short-train's ``predictions=True``); they are combined by the
    ensemble's rule and weights (for ``mean-logits`` the log-probabilities stand in for
    the logits, which changes nothing: softmax ignores a per-example constant).
    """
    if len(results) != len(ensemble):
        raise NasforgeError(f"ensemble of {len(ensemble)} members given {len(results)} evaluations")
    outputs = []
    for i, r in enumerate(results):
        probs = (getattr(r, "metadata", None) or {}).get(PREDICTIONS_KEY)
        if probs is None:
            raise NasforgeError(
                f"member {i}'s evaluation holds no per-example predictions: evaluate with an "
                "evaluator that has them, asked for them (short-train: -o predictions=true)"
            )
        p = torch.as_tensor(probs, dtype=torch.float64)
        if p.dim() != 2 or p.shape[0] != len(labels):
            raise NasforgeError(
                f"member {i}'s predictions have shape {tuple(p.shape)}, not [{len(labels)}, C]"
            )
        outputs.append(p.clamp_min(1e-12).log())
    combined = ensemble.combine_logits(outputs)
    y = torch.as_tensor(list(labels), dtype=torch.long)
    nll = float(torch.nn.functional.nll_loss(combined.clamp_min(1e-12).log(), y))
    error = 100.0 * float((combined.argmax(-1) != y).double().mean())
    return {"ensemble_valid_error": error, "ensemble_valid_nll": nll}


def evaluate_members(
    ensemble: Ensemble, evaluator: Any, names: Sequence[str] | None = None
) -> tuple[Ensemble, list[Any]]:
    """Every member evaluated by ``evaluator`` (a tabular benchmark looks each up), the
    objectives ``names`` added to the member's scores, and their mean over members
    (``members_mean_<name>``) to the ensemble's objectives; where the evaluations carry
    per-example predictions, the ensemble's own validation error and NLL
    (:func:`ensemble_scores_of_results`) too. Returns the new ensemble and the results.

    ``names`` defaults to the evaluator's optimised objective and the one the protocol
    reports (NAS-Bench-201's table: ``valid_accuracy`` and ``test_accuracy``), so a members
    table gains two columns, not every number the table holds. A search ranks members
    with shared weights; this is what a benchmark says of them, side by side.
    """
    if names is None:
        names = list(dict.fromkeys([evaluator.objective.name, evaluator.reported]))
    results = [evaluator.evaluate(g) for g in ensemble.members]
    old = ensemble.scores or tuple({} for _ in ensemble.members)
    scores = [
        {**s, **{k: float(r.objectives[k]) for k in names if k in r.objectives}}
        for s, r in zip(old, results, strict=True)
    ]
    objectives = dict(ensemble.objectives)
    for name in names:
        values = [float(r.objectives[name]) for r in results if name in r.objectives]
        if values and len(values) == len(results):
            objectives[f"members_mean_{name}"] = sum(values) / len(values)
    labels = getattr(evaluator, "valid_labels", None)
    if labels is not None and all(PREDICTIONS_KEY in (r.metadata or {}) for r in results):
        objectives.update(ensemble_scores_of_results(ensemble, results, labels))
    return attrs.evolve(ensemble, scores=scores, objectives=objectives), results

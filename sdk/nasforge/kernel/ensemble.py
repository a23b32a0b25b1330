"""An ensemble of architectures as a first-class result: members, weights, how they combine.

Ensemble search (NESBS, NES) ends in several genotypes whose predictions are averaged,
not one; a consumer (export, evaluation, ``inspect``) needs to know the members, their
weights, whether probabilities or logits are averaged, and what each member scored.
:class:`Ensemble` is that value, frozen and validated at the boundary; a strategy puts
it in ``SearchOutcome.ensemble`` (and, for readers of the older form, its JSON under
:data:`ENSEMBLE_KEY` in ``SearchOutcome.produced_by``); :meth:`Ensemble.from_outcome` reads
either back (or treats ``outcome.members`` as a uniform ensemble when a strategy says no
more). A one-shot run journals it in its end record, so ``resume`` and ``inspect`` give it back.

Combine rules: ``mean-softmax`` is the weighted mean of the members' class probabilities
(the NES convention NESBS follows); ``mean-logits`` the softmax of the weighted mean of
their logits. Either way an ensemble outputs probabilities.

:func:`train_members` trains each member from scratch (stage E of NESBS, §5.3.5 of the
thesis; NES's final training), so an export or an evaluation has trained networks: a
search ranks members with shared or briefly trained weights, which is not what a user
deploys.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import torch
from torch import nn

from nasforge.kernel.errors import NasforgeError, first_line
from nasforge.kernel.genotype import Genotype

if TYPE_CHECKING:
    from nasforge.kernel.datasets import TensorData
    from nasforge.kernel.search_space import SearchSpace

#: The JSON form's format tag and version (a reader refuses others in one line).
FORMAT = "nasforge-ensemble"
VERSION = 1
#: Where an ensemble sits in ``SearchOutcome.produced_by`` (and a best result's metadata).
ENSEMBLE_KEY = "ensemble_outcome"
COMBINE_RULES = ("mean-softmax", "mean-logits")


def _members(_inst: Any, _attr: attrs.Attribute, value: tuple[Genotype, ...]) -> None:
    if not value or not all(isinstance(g, Genotype) for g in value):
        raise ValueError("an ensemble needs at least one member, each a Genotype")
    spaces = {(g.space, g.version) for g in value}
    if len(spaces) != 1:
        raise ValueError(f"ensemble members come from one space, got {sorted(spaces)}")


def _float_tuple(value: Sequence[float]) -> tuple[float, ...]:
    return tuple(float(v) for v in value)


@attrs.frozen
class Ensemble:
    """Members (genotypes of one space), their weights, the combine rule, and their scores.

    ``weights`` default to uniform and must be non-negative, summing to 1; ``scores`` is
    empty or one dict of numbers per member (e.g. its selection loss); ``objectives``
    are the ensemble's own numbers (e.g. the NLL of its combined prediction).
    """

    members: tuple[Genotype, ...] = attrs.field(converter=tuple, validator=_members)
    weights: tuple[float, ...] = attrs.field(converter=_float_tuple, default=())
    combine: str = attrs.field(default="mean-softmax", validator=attrs.validators.in_(COMBINE_RULES))
    scores: tuple[dict[str, float], ...] = attrs.field(
        converter=lambda v: tuple(dict(s) for s in v), default=()
    )
    objectives: dict[str, float] = attrs.field(converter=dict, factory=dict)
    method: str | None = None

    def __attrs_post_init__(self) -> None:
        n = len(self.members)
        if not self.weights:
            object.__setattr__(self, "weights", (1.0 / n,) * n)
        if len(self.weights) != n:
            raise ValueError(f"ensemble of {n} members has {len(self.weights)} weights")
        if any(not (math.isfinite(w) and w >= 0) for w in self.weights) or not math.isclose(
            sum(self.weights), 1.0, abs_tol=1e-6
        ):
            raise ValueError(f"ensemble weights must be non-negative and sum to 1, got {self.weights}")
        if self.scores and len(self.scores) != n:
            raise ValueError(f"ensemble of {n} members has {len(self.scores)} score entries")

    def __len__(self) -> int:
        return len(self.members)

    # --- combining ---------------------------------------------------------------------
    def combine_logits(self, logits: Sequence[torch.Tensor]) -> torch.Tensor:
        """The ensemble's class probabilities [N, C] from each member's logits [N, C]."""
        return combine_logits(logits, self.weights, self.combine)

    def module(self, models: Sequence[nn.Module]) -> EnsembleModule:
        """One module running ``models`` (the members' networks, in order) and combining them."""
        if len(models) != len(self):
            raise ValueError(f"ensemble of {len(self)} members given {len(models)} networks")
        return EnsembleModule(models, self.weights, self.combine)

    # --- JSON --------------------------------------------------------------------------
    def to_json(self, texts: Sequence[str] | None = None) -> dict[str, Any]:
        """The JSON form (``texts``: the members' canonical strings, for people and tools)."""
        out: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "method": self.method,
            "members": [g.to_json() for g in self.members],
            "weights": list(self.weights),
            "combine": self.combine,
            "scores": [dict(s) for s in self.scores],
            "objectives": dict(self.objectives),
        }
        if texts is not None:
            out["texts"] = list(texts)
        return out

    @classmethod
    def from_json(cls, data: Any) -> Ensemble:
        """Read :meth:`to_json`'s form; anything else is a :class:`NasforgeError` in one line."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise NasforgeError(f"not a {FORMAT} document")
        if data.get("version") != VERSION:
            raise NasforgeError(
                f"{FORMAT} version {data.get('version')!r} is not supported (this reads {VERSION})"
            )
        try:
            return cls(
                members=[Genotype.from_json(g) for g in data["members"]],
                weights=data.get("weights") or (),
                combine=data.get("combine", "mean-softmax"),
                scores=data.get("scores") or (),
                objectives=data.get("objectives") or {},
                method=data.get("method"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise NasforgeError(f"malformed {FORMAT} document: {first_line(exc)}") from exc

    @classmethod
    def from_outcome(cls, outcome: Any) -> Ensemble | None:
        """The ensemble a SearchOutcome holds: its ``ensemble`` field, else its
        :data:`ENSEMBLE_KEY` entry (outcomes made before the field), else a uniform ensemble
        of ``outcome.members`` when it has no Pareto front; None when it holds none."""
        held = getattr(outcome, "ensemble", None)
        if isinstance(held, Ensemble):
            return held
        data = (getattr(outcome, "produced_by", None) or {}).get(ENSEMBLE_KEY)
        if data is not None:
            return cls.from_json(data)
        members = tuple(getattr(outcome, "members", ()) or ())
        if members and not getattr(outcome, "front", ()):
            return cls(members=members)
        return None


def combine_logits(
    logits: Sequence[torch.Tensor], weights: Sequence[float], rule: str = "mean-softmax"
) -> torch.Tensor:
    """Weighted combination of members' logits into probabilities (see the module docstring)."""
    if len(logits) != len(weights) or not logits:
        raise ValueError(f"{len(logits)} members' outputs for {len(weights)} weights")
    if rule not in COMBINE_RULES:
        raise ValueError(f"unknown combine rule {rule!r} (known: {', '.join(COMBINE_RULES)})")
    w = torch.tensor(list(weights), dtype=logits[0].dtype, device=logits[0].device)
    return _combine(torch.stack(list(logits)), w, rule)


def _combine(stacked: torch.Tensor, w: torch.Tensor, rule: str) -> torch.Tensor:
    """[members, N, C] logits and [members] weights -> [N, C] probabilities (no Python-side
    shape checks, so a traced export records only tensor operations)."""
    w = w.to(stacked.dtype).view((-1,) + (1,) * (stacked.dim() - 1))
    if rule == "mean-softmax":
        return (w * torch.softmax(stacked, dim=-1)).sum(0)
    return torch.softmax((w * stacked).sum(0), dim=-1)


class EnsembleModule(nn.Module):
    """The members' networks behind one forward: input -> combined class probabilities.

    What a fused ONNX export traces, so the rule lives in one place for PyTorch and ONNX.
    """

    def __init__(self, models: Sequence[nn.Module], weights: Sequence[float], combine: str) -> None:
        super().__init__()
        if combine not in COMBINE_RULES:
            raise ValueError(f"unknown combine rule {combine!r} (known: {', '.join(COMBINE_RULES)})")
        self.members = nn.ModuleList(models)
        self.weights = tuple(float(w) for w in weights)
        self.combine = combine
        #: A buffer, so a traced export holds the weights as one initializer.
        self.register_buffer("weight_vector", torch.tensor(self.weights), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outs = []
        for m in self.members:
            out = m(x)
            outs.append(out[0] if isinstance(out, tuple | list) else out)
        return _combine(torch.stack(outs), self.weight_vector, self.combine)


# --- training the members -------------------------------------------------------------
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
    from nasforge.kernel.datasets import network_options
    from nasforge.kernel.search_space import build_network
    from nasforge.kernel.seeding import LocalRandomness, seeded_generator
    from nasforge.run.training import CosineSchedule, iterate_batches, set_lr, train_epoch

    recipe = recipe or MemberRecipe()
    options = {**network_options(data.input_shape, data.num_classes), **(build_options or {})}
    randomness = LocalRandomness(seed)
    with randomness:
        model = build_network(space, g, options).to(device)
    opt = torch.optim.SGD(
        model.parameters(), lr=recipe.lr, momentum=recipe.momentum, weight_decay=recipe.weight_decay
    )
    schedule = CosineSchedule(recipe.lr, 0.0, recipe.epochs)
    shuffle = seeded_generator(seed)
    x, y = data.x.to(device), data.y.to(device)
    for epoch in range(recipe.epochs):
        set_lr(opt, schedule(epoch))
        batches = iterate_batches(x, y, recipe.batch_size, generator=shuffle)
        log = train_epoch(model, batches, opt, grad_clip=recipe.grad_clip, randomness=randomness)
        if on_epoch is not None:
            on_epoch(epoch + 1, log)
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
    from nasforge.kernel.evaluator import PREDICTIONS_KEY

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
    from nasforge.kernel.evaluator import PREDICTIONS_KEY

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

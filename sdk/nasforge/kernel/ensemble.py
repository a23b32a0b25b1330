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

Training and evaluating the members is the run's business (:mod:`nasforge.run.ensemble_training`);
this module holds the value alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import attrs
import torch
from torch import nn

from nasforge.kernel.errors import NasforgeError, first_line
from nasforge.kernel.genotype import Genotype

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

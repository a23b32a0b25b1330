"""``simplex``: weight-sharing search with architecture parameters on the simplex (Roberts et al.).

One strategy covers the family the paper reasons about: DARTS (softmax logits, Adam) and
GAEA (exponentiated gradient) as parameterisations, plus Euclidean projection; first-order
or second-order bilevel, or single-level, as modes. It trains ``space.supernet(...)``
through the core's supernet contract only, so it searches any space that implements it
(``act-mlp``, NAS-Bench-201, DARTS cells, a third party's) without knowing which.

After the search it discretises by arg max (each cell's own rule, through
``supernet.derive``), then asks the paper's question of every mixed edge: does arg max
alpha recover the candidate that is best with the shared weights? The answer
(:mod:`nasforge_simplex.edge_probe`), the ranking of the best architectures by alpha and
by shared-weight loss (:mod:`nasforge_simplex.candidate_ranking`) and the final alphas go
into ``outcome.produced_by`` and the last trial's metadata (so the journal keeps them);
with a console and ``progress`` they are printed as tables, else their warnings are logged.
"""

from __future__ import annotations

import logging
import platform
import time
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import attrs
import torch
from rich.console import Console

from nasforge.kernel.datasets import TensorData, network_options
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.one_shot import OneShotStrategy
from nasforge.kernel.outcome import SearchOutcome
from nasforge.kernel.registry import Registry
from nasforge.kernel.result import Result, Trial
from nasforge.kernel.search_space import SUPERNET, SearchSpace
from nasforge.kernel.seeding import seeded_build, seeded_generator
from nasforge.kernel.supernet import Supernet, as_supernet, supernet_option_names
from nasforge.run.training import CosineSchedule, clip_gradients, paired_batches, run_epochs, set_lr
from nasforge_simplex import arch_gradient
from nasforge_simplex.candidate_ranking import Ranking, rank_candidates
from nasforge_simplex.config import SimplexConfig, make_config
from nasforge_simplex.edge_probe import EdgeConsistency, supernet_consistency
from nasforge_simplex.losses import LossFn, accuracy, loss_function
from nasforge_simplex.parameterisation import SimplexParameterisation, make_parameterisation

log = logging.getLogger("nasforge.simplex")

Batch = tuple[torch.Tensor, torch.Tensor]
#: Per-epoch numbers a trial carries as objectives (the rest go to its metadata).
OBJECTIVES = ("val_loss", "val_accuracy", "derived_val_loss", "derived_val_accuracy", "train_loss")
#: What the last trial's metadata and ``outcome.produced_by`` carry of the final assessment.
REPORTED = ("diagnostic", "diagnostic_summary", "ranking")


@attrs.frozen
class SearchState:
    """The search as it ended: the supernet, its final simplex points and the splits."""

    supernet: Supernet
    alphas: tuple[torch.Tensor, ...]
    train: TensorData
    val: TensorData


class SimplexSearch(OneShotStrategy):
    """Weight sharing with alpha on the simplex (EG, softmax, projection) and the arg-max check.

    ``SimplexSearch(parameterisation="eg", mode="first_order", epochs=..., seed=...).fit(space, data)``.
    Options are :class:`~nasforge_simplex.config.SimplexConfig` fields; ``fit`` may
    override any of them. After ``fit``, ``self.state`` holds the trained supernet and its
    simplex points (weight inheritance, further diagnostics).
    """

    name: ClassVar[str] = "simplex"
    requires: ClassVar[frozenset[str]] = frozenset({SUPERNET})
    #: Built with the run's seed, bar setting, registry (a dataset named in ``fit``) and
    #: device (an option of its settings).
    context_fields = OneShotStrategy.context_fields | {"progress", "registry", "device"}

    def __init__(
        self,
        *,
        seed: int = 0,
        progress: bool = True,
        console: Console | None = None,
        registry: Registry | None = None,
        **options: Any,
    ) -> None:
        """``registry`` resolves a dataset named in ``fit`` (default: the process-wide one)."""
        super().__init__(seed=int(seed), progress=progress, registry=registry, console=console, **options)
        self.config = make_config(self.options)
        self.device(self.config.device)  # "cuda" without CUDA fails now, in one line
        self.state: SearchState | None = None

    # --- the search ---------------------------------------------------------------------
    def fit(
        self,
        space: SearchSpace,
        data: Any,
        *,
        supernet: torch.nn.Module | None = None,
        on_trial: Callable[[Trial], None] | None = None,
        **options: Any,
    ) -> SearchOutcome:
        """Search ``space`` on ``data`` (a TensorData, a ``(train, val)`` pair or a dataset
        name); ``supernet`` injects a prebuilt one; ``on_trial`` sees each epoch's trial."""
        cfg = make_config(options, self.config) if options else self.config
        space.require(self.requires, by=f"strategy '{self.name}'")
        device = self.device(cfg.device)
        gen = seeded_generator(self.seed)
        train, val = self._splits(data, cfg)
        module = supernet
        if module is None:  # initial weights from the seed alone, not torch's global generator
            module = seeded_build(lambda: self._build_supernet(space, cfg, train), self.seed)
        module = module.to(device)
        net = as_supernet(module, by=f"strategy '{self.name}'")
        train, val = _on_device(train, device), _on_device(val, device)
        dtype = next(iter(net.arch_parameters())).dtype
        train, val = _as_dtype(train, dtype), _as_dtype(val, dtype)
        loss_fn = loss_function(cfg.loss)
        param = make_parameterisation(
            cfg.parameterisation, net.arch_parameters(), lr=cfg.step, adam=cfg.adam(), floor=cfg.eg_floor
        )
        weights = list(net.weight_parameters())
        w_opt = cfg.build_weight_optimizer(weights)
        lr_at = CosineSchedule(cfg.w_lr, cfg.w_lr_min, cfg.epochs)
        trials: list[Trial] = []

        def forward(x: torch.Tensor, alpha: Sequence[torch.Tensor]) -> torch.Tensor:
            out = net(x, list(alpha))  # type: ignore[operator]
            return out[0] if isinstance(out, tuple | list) else out

        def one_epoch(epoch: int) -> dict[str, float]:
            start = time.perf_counter()
            w_lr = lr_at(epoch)
            set_lr(w_opt, w_lr)
            metrics = self._run_batches(
                net, forward, loss_fn, param, weights, w_opt, cfg, train, val, w_lr, gen
            )
            alpha = param.alpha()
            g = net.derive(alpha)
            if (epoch + 1) % cfg.eval_every == 0 or epoch == cfg.epochs - 1:
                metrics.update(_evaluate(net, forward, loss_fn, alpha, g, val))
            metrics.update(_alpha_metrics(net, alpha))
            metadata: dict[str, Any] = {
                "metrics": dict(metrics),
                "genotype": space.format(g),
                "alphas": [a.detach().cpu().tolist() for a in alpha],
            }
            if epoch == cfg.epochs - 1:  # the verdict travels in the journal with the last epoch
                param.sync()
                final.update(self._assess(space, net, param.alpha(), g, val, cfg, loss_fn))
                metadata.update({k: v for k, v in final.items() if k in REPORTED})
            trial = Trial(
                index=epoch,
                genotype=g,
                result=Result(
                    objectives={k: metrics[k] for k in OBJECTIVES if k in metrics},
                    cost=time.perf_counter() - start,
                    metadata=metadata,
                ),
                wall_seconds=time.perf_counter() - start,
            )
            trials.append(trial)
            if on_trial is not None:
                on_trial(trial)
            return metrics

        final: dict[str, Any] = {}
        run_epochs(
            cfg.epochs,
            one_epoch,
            description=f"{self.name} search",
            progress=self.progress,
            console=self.console,
        )
        alphas = tuple(a.detach() for a in param.alpha())
        self.state = SearchState(net, alphas, train, val)
        last = trials[-1]
        produced: dict[str, Any] = {
            "strategy": self.name,
            "seed": self.seed,
            "config": cfg.to_json(),
            "space": space.name,
            "data": {"train": train.digest(), "val": val.digest(), "name": train.name},
            "torch": torch.__version__,
            "python": platform.python_version(),
            "alphas": {cell.name: a.cpu().tolist() for cell, a in zip(net.topology, alphas, strict=True)},
            "ops": {cell.name: list(cell.ops.names) for cell in net.topology},
            **{k: v for k, v in final.items() if k in REPORTED},
        }
        reports: list[EdgeConsistency] = final.get("reports", [])
        ranking: Ranking | None = final.get("ranked")
        if self.progress and self.console is not None:
            from nasforge_simplex.report_table import print_report

            print_report(self.console, reports, ranking)
        else:
            for line in _warnings(reports):
                log.warning(line)
        return SearchOutcome(
            best=last.genotype, best_result=last.result, history=trials, produced_by=produced
        )

    def _assess(
        self,
        space: SearchSpace,
        net: Supernet,
        alpha: Sequence[torch.Tensor],
        derived: Genotype,
        val: TensorData,
        cfg: SimplexConfig,
        loss_fn: LossFn,
    ) -> dict[str, Any]:
        """The diagnostic of every mixed edge and the ranking, on the architecture split:
        the objects (``reports``, ``ranked``) and their JSON (:data:`REPORTED` keys)."""
        out: dict[str, Any] = {}
        alphas = [a.detach() for a in alpha]
        x, y = _subset(val, cfg.diagnostic_samples)
        if cfg.diagnose:
            reports = supernet_consistency(
                net, alphas, x, y, loss=cfg.loss, tie_tol=cfg.tie_tol, seed=self.seed
            )
            out.update(
                reports=reports,
                diagnostic=[r.to_json() for r in reports],
                diagnostic_summary=summarise(reports),
            )
        if cfg.rank_candidates > 0:
            ranked = rank_candidates(
                net,
                alphas,
                x,
                y,
                k=cfg.rank_candidates,
                loss_fn=loss_fn,
                derived=derived,
                describe=space.format,
            )
            out.update(ranked=ranked, ranking=ranked.to_json())
        return out

    # --- pieces -------------------------------------------------------------------------
    def _splits(self, data: Any, cfg: SimplexConfig) -> tuple[TensorData, TensorData]:
        """(weight split, architecture split) from what the caller has."""
        return self.search_splits(data, cfg.train_portion)

    def _build_supernet(self, space: SearchSpace, cfg: SimplexConfig, train: TensorData) -> torch.nn.Module:
        accepted = supernet_option_names(space)
        num_classes = train.num_classes
        if train.y.is_floating_point():  # real targets: one output per target column
            num_classes = int(train.y.reshape(len(train), -1).shape[1])
        options: dict[str, Any] = network_options(train.input_shape, num_classes, accepted=accepted)
        flat = len(train.input_shape) == 1
        if flat and accepted is not None and "in_features" in accepted:  # flat inputs: say how many
            options["in_features"] = int(train.input_shape[0])
        options.update(cfg.supernet)
        return space.supernet(**options)

    def _run_batches(
        self,
        net: Supernet,
        forward: arch_gradient.Forward,
        loss_fn: LossFn,
        param: SimplexParameterisation,
        weights: list[torch.nn.Parameter],
        w_opt: torch.optim.Optimizer,
        cfg: SimplexConfig,
        train: TensorData,
        val: TensorData,
        w_lr: float,
        gen: torch.Generator,
    ) -> dict[str, float]:
        module: Any = net
        module.train()
        loss_sum, correct, seen = 0.0, 0.0, 0
        arch_loss = float("nan")
        pairs = paired_batches((train.x, train.y), (val.x, val.y), cfg.batch_size, generator=gen)
        for b, (tb, vb) in enumerate(pairs):
            if cfg.max_batches is not None and b >= cfg.max_batches:
                break
            if cfg.mode == "single_level":  # one loss on both batches, both steps from it
                batch = (torch.cat([tb[0], vb[0]]), torch.cat([tb[1], vb[1]]))
                g_alpha, g_w, logits, loss = arch_gradient.single_level(
                    forward, loss_fn, param.alpha(), weights, batch
                )
                param.step(g_alpha)
                arch_loss = loss
            else:
                if cfg.mode == "first_order":
                    g_alpha, arch_loss = arch_gradient.first_order(forward, loss_fn, param.alpha(), vb)
                else:
                    g_alpha, arch_loss = arch_gradient.second_order(
                        forward, loss_fn, param.alpha(), weights, tb, vb, xi=w_lr, eps_scale=cfg.unrolled_eps
                    )
                param.step(g_alpha)
                batch = tb
                # alpha without grad: the supernet skips ops weighted exactly zero
                logits_t = forward(tb[0], param.alpha())
                loss_t = loss_fn(logits_t, tb[1])
                g_w = list(torch.autograd.grad(loss_t, weights, allow_unused=True))
                logits, loss = logits_t.detach(), float(loss_t.detach())
            _weight_step(weights, g_w, w_opt, cfg.grad_clip)
            n = batch[0].shape[0]
            loss_sum += loss * n
            correct += accuracy(logits, batch[1]) * n
            seen += n
        seen = max(seen, 1)
        out = {"train_loss": loss_sum / seen, "arch_loss": arch_loss, "lr": w_lr}
        if not train.y.is_floating_point():
            out["train_accuracy"] = correct / seen
        return out


def _weight_step(
    weights: list[torch.nn.Parameter],
    grads: Sequence[torch.Tensor | None],
    opt: torch.optim.Optimizer,
    clip: float,
) -> None:
    opt.zero_grad(set_to_none=True)
    for p, g in zip(weights, grads, strict=True):
        p.grad = None if g is None else g.detach()
    clip_gradients(weights, clip)
    opt.step()


@torch.no_grad()
def _evaluate(
    net: Supernet,
    forward: arch_gradient.Forward,
    loss_fn: LossFn,
    alpha: Sequence[torch.Tensor],
    g: Genotype,
    val: TensorData,
) -> dict[str, float]:
    """The supernet under alpha and the derived network with inherited weights (one-hot
    edge weights), on the architecture split, in eval mode."""
    module: Any = net
    module.eval()
    try:
        one_hot = [w.detach() for w in net.one_hot_weights(g)]
        out = {}
        for prefix, weights in (("val", alpha), ("derived_val", one_hot)):
            logits = torch.cat([forward(val.x[i : i + 512], weights) for i in range(0, len(val), 512)])
            out[f"{prefix}_loss"] = float(loss_fn(logits, val.y))
            acc = accuracy(logits, val.y)
            if acc == acc:  # NaN for real targets
                out[f"{prefix}_accuracy"] = acc
        return out
    finally:
        module.train()


def _alpha_metrics(net: Supernet, alpha: Sequence[torch.Tensor]) -> dict[str, float]:
    """How decided the search is: mean largest weight and mean top-two gap per cell."""
    out = {}
    for cell, a in zip(net.topology, alpha, strict=True):
        top = a.detach().double().topk(min(2, a.shape[1]), dim=-1).values
        out[f"{cell.name}_alpha_max"] = float(top[:, 0].mean())
        if top.shape[1] > 1:
            out[f"{cell.name}_alpha_gap"] = float((top[:, 0] - top[:, 1]).mean())
    return out


def summarise(reports: Sequence[EdgeConsistency]) -> dict[str, Any]:
    """Counts over edges: how many verdicts of each kind, how many exact, certified, flagged."""
    verdicts: dict[str, int] = {}
    for r in reports:
        verdicts[r.report.verdict] = verdicts.get(r.report.verdict, 0) + 1
    return {
        "edges": len(reports),
        "verdicts": verdicts,
        "match": sum(r.report.match for r in reports),
        "certified": sum(r.report.certified for r in reports),
        "exact": sum(r.report.exact for r in reports),
        "near_duplicate_edges": sum(bool(r.report.near_duplicates) for r in reports),
    }


def _warnings(reports: Sequence[EdgeConsistency]) -> list[str]:
    out = []
    for r in reports:
        if r.report.verdict != "consistent":
            out.append(f"{r.label}: {r.report.verdict}: {r.report.reason}")
        out.extend(f"{r.label}: {w}" for w in r.report.warnings if not w.startswith("heuristic"))
    return out


def _subset(data: TensorData, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The first ``n`` samples (the split is already a seeded permutation)."""
    return data.x[:n], data.y[:n]


def _on_device(data: TensorData, device: torch.device) -> TensorData:
    if data.x.device == device and data.y.device == device:
        return data
    return TensorData(data.name, data.x.to(device), data.y.to(device), data.num_classes)


def _as_dtype(data: TensorData, dtype: torch.dtype) -> TensorData:
    """Inputs (and real targets) in the supernet's dtype (a float64 supernet, for exactness)."""
    if data.x.dtype == dtype and (not data.y.is_floating_point() or data.y.dtype == dtype):
        return data
    y = data.y.to(dtype) if data.y.is_floating_point() else data.y
    return TensorData(data.name, data.x.to(dtype), y, data.num_classes)

"""The loop DARTS and PR-DARTS share: split data, alternate steps, derive, record.

Subclasses decide only what differs between the methods: the edge weights of the weight
step, the architecture loss (or gradient), the deterministic weights for evaluation, the
scores a genotype is read from, and their diagnostics. Every epoch ends in a
:class:`~nasforge.Trial` holding that epoch's derived genotype, so the outcome's history
shows how the architecture evolved.
"""

from __future__ import annotations

import abc
import platform
import time
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import attrs
import torch
import torch.nn.functional as F
from rich.console import Console

from nasforge.kernel.datasets import TensorData, network_options
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.one_shot import OneShotStrategy
from nasforge.kernel.option_types import config_from_options
from nasforge.kernel.outcome import SearchOutcome
from nasforge.kernel.registry import Registry
from nasforge.kernel.result import Result, Trial
from nasforge.kernel.search_space import SUPERNET, SearchSpace
from nasforge.kernel.seeding import seeded_build, seeded_generator
from nasforge.kernel.supernet import as_supernet, supernet_option_names
from nasforge.run.training import (
    CosineSchedule,
    clip_gradients,
    evaluate,
    paired_batches,
    run_epochs,
    set_lr,
)
from nasforge_darts.bilevel_config import BilevelConfig
from nasforge_darts.supernet_view import SupernetView

Weights = list[torch.Tensor]
Batch = tuple[torch.Tensor, torch.Tensor]


@attrs.define
class StepContext:
    """What a step needs to know about where the search stands."""

    epoch: int
    epochs: int
    w_lr: float
    w_optimizer: torch.optim.Optimizer
    generator: torch.Generator


class BilevelSearch(OneShotStrategy):
    """Base of the gradient-based one-shot strategies of this plugin."""

    requires: ClassVar[frozenset[str]] = frozenset({SUPERNET})
    #: Built with the run's seed, bar setting, registry (a dataset named in ``fit``) and
    #: device (an option of its settings).
    context_fields = OneShotStrategy.context_fields | {"progress", "registry", "device"}
    config_class: ClassVar[type[BilevelConfig]] = BilevelConfig

    def __init__(
        self,
        *,
        seed: int = 0,
        progress: bool = True,
        console: Console | None = None,
        config: BilevelConfig | None = None,
        registry: Registry | None = None,
        **options: Any,
    ) -> None:
        """``options`` override ``config`` (default: the method's); ``registry`` resolves a
        dataset named in ``fit`` (default: the process-wide one)."""
        super().__init__(seed=int(seed), progress=progress, registry=registry, console=console)
        base = config if config is not None else self.default_config()
        self.config = config_from_options(type(base), options, owner=self.name, base=base)
        self.device(self.config.device)  # "cuda" without CUDA fails now, in one line

    def default_config(self) -> BilevelConfig:
        return self.config_class()

    # --- what subclasses define -------------------------------------------------------
    def view_options(self) -> dict[str, Any]:
        return {}

    def begin_epoch(self, view: SupernetView, ctx: StepContext) -> None:  # noqa: B027
        """Per-epoch state (e.g. the gate temperature)."""

    @abc.abstractmethod
    def train_weights(self, view: SupernetView, ctx: StepContext) -> Weights | None:
        """Edge weights for the weight step (no gradient into the architecture)."""

    @abc.abstractmethod
    def arch_gradient(
        self, view: SupernetView, train: Batch, val: Batch, ctx: StepContext
    ) -> tuple[list[torch.Tensor], dict[str, float]]:
        """Gradient of the architecture objective w.r.t. ``view.arch_parameters()``."""

    @abc.abstractmethod
    def eval_weights(self, view: SupernetView) -> Weights | None:
        """Deterministic edge weights to evaluate the supernet with."""

    @abc.abstractmethod
    def derive_scores(self, view: SupernetView) -> Weights:
        """Per-(edge, op) strengths the genotype is read from."""

    def diagnostics(self, view: SupernetView, ctx: StepContext) -> dict[str, float]:
        return {}

    # --- the loop -----------------------------------------------------------------------
    def fit(
        self,
        space: SearchSpace,
        data: Any,
        *,
        supernet: torch.nn.Module | None = None,
        on_trial: Callable[[Trial], None] | None = None,
        **options: Any,
    ) -> SearchOutcome:
        """Search ``space`` on ``data``; ``options`` override this strategy's config.

        ``supernet`` injects a prebuilt supernet (else ``space.supernet(...)`` is built
        from ``config.supernet`` and the data's shape); ``on_trial`` sees each epoch's
        trial as soon as it exists (journal or checkpoint there).
        """
        cfg = attrs.evolve(self.config, **options) if options else self.config
        space.require(self.requires, by=f"strategy '{self.name}'")
        self.active_config = cfg
        device = self.device(cfg.device)
        gen = seeded_generator(self.seed)
        train, val = self.search_splits(data, cfg.train_portion)
        module = supernet
        if module is None:  # initialised from the seed alone, not from torch's global generator
            module = seeded_build(lambda: self._build_supernet(space, cfg, train), self.seed)
        # built on the CPU from the seed, then moved: the same initial weights on any device
        module = module.to(device)
        train, val = _on_device(train, device), _on_device(val, device)
        view = SupernetView(as_supernet(module, by=f"strategy '{self.name}'"), **self.view_options())
        w_opt = cfg.weight_optimizer().build(view.weight_parameters())
        a_opt = cfg.arch_optimizer().build(view.arch_parameters())
        lr_at = CosineSchedule(cfg.w_lr, cfg.w_lr_min, cfg.epochs)
        trials: list[Trial] = []

        def one_epoch(epoch: int) -> dict[str, float]:
            start = time.perf_counter()
            ctx = StepContext(epoch, cfg.epochs, lr_at(epoch), w_opt, gen)
            set_lr(w_opt, ctx.w_lr)
            self.begin_epoch(view, ctx)
            metrics = self._run_batches(view, cfg, train, val, ctx, a_opt)
            g = view.derive(self.derive_scores(view))
            if (epoch + 1) % cfg.eval_every == 0 or epoch == cfg.epochs - 1:
                metrics.update(self._evaluate(view, g, val))
            metrics.update(self.diagnostics(view, ctx))
            metrics.update(self._stats_metrics(view, g))
            trial = Trial(
                index=epoch,
                genotype=g,
                result=Result(
                    objectives={k: metrics[k] for k in _OBJECTIVES if k in metrics},
                    cost=time.perf_counter() - start,
                    metadata={"metrics": dict(metrics), "genotype": space.format(g)},
                ),
                wall_seconds=time.perf_counter() - start,
            )
            trials.append(trial)
            if on_trial is not None:
                on_trial(trial)
            return metrics

        run_epochs(
            cfg.epochs,
            one_epoch,
            description=f"{self.name} search",
            progress=self.progress,
            console=self.console,
        )
        final = trials[-1]
        return SearchOutcome(
            best=final.genotype,
            best_result=final.result,
            history=trials,
            produced_by={
                "strategy": self.name,
                "seed": self.seed,
                "config": cfg.to_json(),
                "space": space.name,
                "data": {"train": train.digest(), "val": val.digest(), "name": train.name},
                "torch": torch.__version__,
                "python": platform.python_version(),
                "arch_parameters": [a.detach().cpu().tolist() for a in view.arch_parameters()],
            },
        )

    def _build_supernet(self, space: SearchSpace, cfg: BilevelConfig, train: TensorData) -> torch.nn.Module:
        options: dict[str, Any] = network_options(train.input_shape, train.num_classes)
        if "layers" in (supernet_option_names(space) or ()):  # a cell-stacking supernet (DARTS's)
            options["layers"] = cfg.darts_layers
        options.update(cfg.supernet)
        return space.supernet(**options)

    def _run_batches(
        self,
        view: SupernetView,
        cfg: BilevelConfig,
        train: TensorData,
        val: TensorData,
        ctx: StepContext,
        a_opt: torch.optim.Optimizer,
    ) -> dict[str, float]:
        loss_sum, correct, seen = 0.0, 0.0, 0
        extra: dict[str, float] = {}
        pairs = paired_batches((train.x, train.y), (val.x, val.y), cfg.batch_size, generator=ctx.generator)
        for b, (tb, vb) in enumerate(pairs):
            if cfg.max_batches is not None and b >= cfg.max_batches:
                break
            if cfg.arch_first:
                extra = self._arch_step(view, tb, vb, ctx, a_opt)
            loss, logits = self._weight_step(view, cfg, tb, ctx)
            if not cfg.arch_first:
                extra = self._arch_step(view, tb, vb, ctx, a_opt)
            loss_sum += loss * tb[0].shape[0]
            correct += float((logits.argmax(-1) == tb[1]).sum())
            seen += tb[0].shape[0]
        seen = max(seen, 1)
        return {"train_loss": loss_sum / seen, "train_accuracy": correct / seen, "lr": ctx.w_lr, **extra}

    def _weight_step(
        self, view: SupernetView, cfg: BilevelConfig, batch: Batch, ctx: StepContext
    ) -> tuple[float, torch.Tensor]:
        view.module.train()
        weights = self.train_weights(view, ctx)
        if weights is not None:
            weights = [w.detach() for w in weights]
        logits = view.forward(batch[0], weights)
        loss = F.cross_entropy(logits, batch[1])
        ctx.w_optimizer.zero_grad(set_to_none=True)
        params = view.weight_parameters()
        grads = torch.autograd.grad(loss, params, allow_unused=True)
        for p, g in zip(params, grads, strict=True):
            p.grad = g
        clip_gradients(params, cfg.grad_clip)
        ctx.w_optimizer.step()
        return float(loss.detach()), logits.detach()

    def _arch_step(
        self,
        view: SupernetView,
        train: Batch,
        val: Batch,
        ctx: StepContext,
        a_opt: torch.optim.Optimizer,
    ) -> dict[str, float]:
        view.module.train()
        grads, info = self.arch_gradient(view, train, val, ctx)
        a_opt.zero_grad(set_to_none=True)
        for p, g in zip(view.arch_parameters(), grads, strict=True):
            p.grad = g.detach()
        a_opt.step()
        return info

    def _evaluate(self, view: SupernetView, g: Genotype, val: TensorData) -> dict[str, float]:
        """Supernet accuracy under the method's deterministic weights, and the derived
        cell's with inherited weights (one-hot edge weights), both with BN in eval mode."""
        weights = self.eval_weights(view)
        one_hot = view.one_hot(g)
        view.module.eval()
        try:
            loss, acc = evaluate(lambda x: view.forward(x, weights), val.x, val.y)
            d_loss, d_acc = evaluate(lambda x: view.forward(x, one_hot), val.x, val.y)
        finally:
            view.module.train()
        return {
            "val_loss": loss,
            "val_accuracy": acc,
            "derived_val_loss": d_loss,
            "derived_val_accuracy": d_acc,
        }

    def _stats_metrics(self, view: SupernetView, g: Genotype) -> dict[str, float]:
        out: dict[str, float] = {}
        for kind, stats in view.stats(g).items():
            out[f"{kind}_skips"] = stats.skips
            out[f"{kind}_skip_share"] = stats.skip_share
            out[f"{kind}_depth"] = stats.depth
            out[f"{kind}_parametric_depth"] = stats.parametric_depth
        return out


_OBJECTIVES: Sequence[str] = ("val_accuracy", "val_loss", "derived_val_accuracy", "train_loss")


def _on_device(data: TensorData, device: torch.device) -> TensorData:
    """``data`` with its tensors on ``device`` (itself when they are there already)."""
    if data.x.device == device and data.y.device == device:
        return data
    return TensorData(data.name, data.x.to(device), data.y.to(device), data.num_classes)

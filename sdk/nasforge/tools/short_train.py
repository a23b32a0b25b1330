"""The ``short-train`` evaluator: train a genotype's network briefly, report validation
accuracy. The evaluator for any space without a tabular benchmark, and for any strategy
(a hybrid method's per-step evaluation, a baseline's, a one-shot result's): a few epochs
on a small in-memory dataset such as sklearn digits.

Any space with ``build`` works: the network is built from the evaluator's seed (the
same initialisation for every candidate), trained with SGD + cosine learning rate on a
fixed split, and scored on the held-out part. ``cost`` is wall seconds.

With ``latency="onnx"`` each Result also carries ``onnx_latency_ms`` (lower is better):
the network exported to ONNX and timed with onnxruntime on this machine, at the data's
input shape, cached (:mod:`nasforge.tools.latency_objective`). Off by default, so results and
journals without it are unchanged.

Every random draw of an evaluation (initial weights, shuffling, dropout, drop-path)
comes from generators seeded by the evaluator and owned by the call
(:mod:`nasforge.kernel.seeding`), so a result depends on the genotype and the settings only,
also when several evaluations run on threads at once.
"""

from __future__ import annotations

import math
import time
from typing import Any, ClassVar, get_args

import attrs
import torch
from torch import nn

from nasforge.kernel.datasets import ComponentLookup, TensorData, load_dataset, network_options
from nasforge.kernel.errors import NasforgeError, OptionError
from nasforge.kernel.evaluator import PREDICTIONS_KEY, Evaluator
from nasforge.kernel.fidelity import asked_budget, should_stop
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.result import Objective, Result
from nasforge.kernel.search_space import BUILD, SearchSpace
from nasforge.kernel.seeding import LocalRandomness, seeded_generator
from nasforge.run.defaults import TRAINING_DATASET
from nasforge.run.training import SGDConfig, evaluate, train_cosine
from nasforge.tools.latency_objective import OBJECTIVE as LATENCY_OBJECTIVE
from nasforge.tools.latency_objective import LatencyMode, LatencySettings, OnnxLatency

OBJECTIVE = Objective("valid_accuracy", higher_is_better=True)


class ShortTrainEvaluator(Evaluator):
    """Validation accuracy (percent) after ``epochs`` of SGD on a dataset split."""

    name: ClassVar[str] = "short-train"
    #: It builds each genotype's network (its ``build_options`` are checked by ``preflight``).
    requires: ClassVar[frozenset[str]] = frozenset({BUILD})
    #: Its ``dataset`` is the run's training data (``--train-data``), not a benchmark's.
    trains: ClassVar[bool] = True
    #: Multi-fidelity strategies vary the epochs (full: the ``epochs`` option).
    fidelity: ClassVar[str | None] = "epochs"
    #: Built with the run's seed, device, loaded training data, registry and network options.
    context_fields = frozenset({"seed", "device", "data", "registry", "build_options"})
    #: With ``predictions=True`` a Result carries the validation probabilities.
    per_example: ClassVar[bool] = True

    def __init__(
        self,
        space: SearchSpace,
        *,
        dataset: str | None = TRAINING_DATASET,
        epochs: int = 5,
        batch_size: int = 64,
        lr: float = 0.05,
        weight_decay: float = 3e-4,
        valid_fraction: float = 0.3,
        build: dict[str, Any] | None = None,
        seed: int = 0,
        device: str = "cpu",
        data: TensorData | None = None,
        registry: ComponentLookup | None = None,
        latency: LatencyMode = "off",
        latency_repeats: int = 50,
        latency_warmup: int = 10,
        latency_threads: int = 1,
        latency_batch_size: int = 1,
        latency_cache: str | bool = True,
        predictions: bool = False,
        build_options: dict[str, Any] | None = None,
    ) -> None:
        """``build`` are ``space.build`` options; ``num_classes`` and ``in_channels`` are
        filled in from the data unless given. ``build_options`` are the run's network
        options (``--build-option``), under ``build``: this evaluator's own option wins.

        ``latency="onnx"`` adds ``onnx_latency_ms`` to every result, timed with
        ``latency_threads`` threads at batch ``latency_batch_size``: the median of
        ``latency_repeats`` runs after ``latency_warmup``. ``latency_cache`` is the cache
        directory, True for ``~/.cache/nasforge/latency`` (``$XDG_CACHE_HOME``), False
        for none.

        A run hands over its training ``data``, already loaded; without it ``dataset`` is
        loaded through ``registry`` (without one, only the core's built-in datasets are
        known: this module sits below the registry).

        ``predictions=True`` puts each validation example's class probabilities (rounded
        to 6 decimals) in ``Result.metadata["valid_probabilities"]``, in the order of
        :attr:`valid_labels`, so an ensemble of evaluated members can be scored without
        retraining them; off by default (about 50 kB per trial on digits).
        """
        space.require({BUILD}, by=f"evaluator '{self.name}'")
        name = dataset or (data.name if data is not None else TRAINING_DATASET)
        super().__init__(space, dataset=name)
        if epochs < 1 or batch_size < 1 or not 0.0 < valid_fraction < 1.0:
            raise NasforgeError("short-train needs epochs >= 1, batch_size >= 1, 0 < valid_fraction < 1")
        if data is None:
            data = load_dataset(name, registry=registry, seed=seed)
        self.valid, self.train = data.split(valid_fraction, seed=seed)
        self.epochs, self.batch_size, self.seed, self.device = epochs, batch_size, seed, device
        self.optimiser = SGDConfig(lr=lr, weight_decay=weight_decay)
        self.build_options = {**(build_options or {}), **(build or {})}
        for key, value in network_options(data.input_shape, data.num_classes).items():
            self.build_options.setdefault(key, value)
        self.input_shape = data.input_shape
        if not isinstance(predictions, bool):
            raise OptionError(f"option 'predictions' must be true or false, got {predictions!r}")
        self.predictions = predictions
        self.latency = self._latency(
            latency, latency_repeats, latency_warmup, latency_threads, latency_batch_size, latency_cache
        )

    def _latency(
        self, mode: str, repeats: int, warmup: int, threads: int, batch_size: int, cache: str | bool
    ) -> OnnxLatency | None:
        """The latency helper when asked for (its settings checked even when not)."""
        if mode not in get_args(LatencyMode):
            raise OptionError(
                f"option 'latency' must be one of {', '.join(get_args(LatencyMode))}, got {mode!r}"
            )
        settings = LatencySettings(batch_size=batch_size, warmup=warmup, repeats=repeats, threads=threads)
        if mode == "off":
            return None
        if cache == "":
            raise OptionError("option 'latency_cache' must name a directory, or be true or false")
        return OnnxLatency(
            self.space,
            sample_shape=self.input_shape,
            build_options=self.build_options,
            settings=settings,
            cache=cache,
        )

    @property
    def objective(self) -> Objective:
        return OBJECTIVE

    @property
    def valid_labels(self) -> list[int]:
        """The validation split's labels, in the order of the per-example predictions."""
        return [int(v) for v in self.valid.y.tolist()]

    @property
    def objectives(self) -> dict[str, Objective]:
        """Validation accuracy, and ``onnx_latency_ms`` (lower is better) when measured."""
        out = {OBJECTIVE.name: OBJECTIVE}
        if self.latency is not None:
            out[LATENCY_OBJECTIVE.name] = LATENCY_OBJECTIVE
        return out

    def evaluate(self, g: Genotype) -> Result:
        return self.evaluate_at(g, None)

    def evaluate_at(
        self, g: Genotype, fidelity: int | None, *, stop_below: tuple[float, ...] | None = None
    ) -> Result:
        """Train for ``fidelity`` epochs (``None``: the configured ``epochs``), the
        learning rate annealed over those epochs: a shorter budget is a complete short
        schedule, not the start of a longer one. The validation accuracy after every
        epoch is in ``metadata["per_epoch"]`` (a learning curve), the epochs trained in
        ``metadata["epochs"]``. With ``stop_below`` (a pruner's thresholds) training
        stops after the first epoch whose accuracy falls short of its threshold:
        ``metadata["stopped_at"]`` is that epoch, the objective the accuracy it reached."""
        self.space.validate(g)
        epochs = asked_budget(self.name, self.epochs, fidelity)
        start = time.perf_counter()
        try:
            # One stream from the seed for init and then training randomness (dropout,
            # drop-path), owned by this call: other threads cannot draw from it or reseed it.
            randomness = LocalRandomness(self.seed)
            with randomness:
                model = self.space.build(g, **self.build_options).to(self.device)
            opt = self.optimiser.build(model.parameters())
            x, y = self.train.x.to(self.device), self.train.y.to(self.device)
            vx, vy = self.valid.x.to(self.device), self.valid.y.to(self.device)
            curve: list[float] = []
            acc = math.nan

            def validated(done: int, _log: dict[str, float]) -> bool:
                nonlocal acc  # evaluation draws no randomness: the curve leaves training unchanged
                _, acc = evaluate(model, vx, vy)
                curve.append(100.0 * acc)
                return should_stop(stop_below, done, curve[-1], OBJECTIVE.higher_is_better)

            log = train_cosine(
                model,
                opt,
                x,
                y,
                epochs=epochs,
                lr=self.optimiser.lr,
                batch_size=self.batch_size,
                order=seeded_generator(self.seed),
                randomness=randomness,
                after_epoch=validated,
            )
        except RuntimeError as exc:  # a network that cannot train is a failed trial, not a crash
            return Result(objectives={}, cost=time.perf_counter() - start, failed=True, error=str(exc))
        if not math.isfinite(acc):
            return Result(
                objectives={}, cost=time.perf_counter() - start, failed=True, error="no validation data"
            )
        metadata: dict[str, Any] = {
            "train_loss": log.get("loss", math.nan),
            "train_accuracy": log.get("accuracy", math.nan),
            "epochs": len(curve),
            "per_epoch": {OBJECTIVE.name: curve},
            **({"stopped_at": len(curve)} if len(curve) < epochs else {}),
        }
        if self.predictions:
            metadata[PREDICTIONS_KEY] = _probabilities(model, vx)
        result = Result(
            objectives={OBJECTIVE.name: 100.0 * acc}, cost=time.perf_counter() - start, metadata=metadata
        )
        if self.latency is None:
            return result
        # Measured after training, so this evaluation's own work does not disturb it; the
        # measuring time (nothing on a cache hit) is part of what the trial cost.
        result = self.latency.add_to(result, g)
        return attrs.evolve(result, cost=time.perf_counter() - start)

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "epochs": self.epochs,
            "batch_size": self.batch_size,
            "optimiser": self.optimiser.to_json(),
            "build": self.build_options,
            "train": len(self.train),
            "valid": len(self.valid),
            "seed": self.seed,
            **({} if self.latency is None else {"latency": self.latency.describe()}),
            **({"predictions": True} if self.predictions else {}),
        }


def _probabilities(model: nn.Module, x: torch.Tensor, batch_size: int = 512) -> list[list[float]]:
    """Class probabilities of ``model`` (eval mode, no randomness drawn) on ``x``, rounded."""
    model.eval()
    with torch.no_grad():
        probs = torch.cat(
            [torch.softmax(model(x[i : i + batch_size]), -1) for i in range(0, len(x), batch_size)]
        )
    return [[round(float(p), 6) for p in row] for row in probs.cpu().tolist()]

"""The ``darts-train`` evaluator: DARTS's evaluation training as a search's evaluator.

``nasforge darts-train`` trains one derived cell with DARTS's recipe (auxiliary tower,
drop-path, cutout, cosine learning rate). This evaluator runs the same trainer
(:func:`nasforge_darts.eval_trainer.train_derived`) on every genotype a search proposes,
so a search on the DARTS space can rank cells by what that recipe makes of them, and a
multi-fidelity strategy (``sh``, ``hyperband``, the median pruner) can give each cell
fewer epochs: its fidelity is ``epochs``. It observes a *validation* split carved from
the run's training data (``valid_fraction``, by the run's seed), never a test set, and
reports its accuracy after every epoch (``metadata["per_epoch"]``), so a trial can be
stopped between epochs and is journaled with the curve it reached.

A shorter budget is a complete short schedule (cosine annealed and drop-path ramped over
the epochs it is given), as short-train's. Defaults are the ``cpu-tiny`` preset (8x8
digits on a laptop CPU); ``--evaluator-option preset=paper`` is DARTS's CIFAR-10 recipe (600 epochs).

    nasforge search --space darts --strategy hyperband --evaluator darts-train \\
        --dataset digits --evaluator-option epochs=9 --evaluator-option max_batches=10
"""

from __future__ import annotations

import math
import time
from typing import Any, ClassVar

import attrs

from nasforge.kernel.datasets import ComponentLookup, TensorData, load_dataset, network_options
from nasforge.kernel.errors import NasforgeError, OptionError
from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.fidelity import asked_budget, should_stop
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.result import Objective, Result
from nasforge.kernel.search_space import BUILD, SearchSpace
from nasforge.run.defaults import TRAINING_DATASET
from nasforge_darts.cifar_local import ImageSplits
from nasforge_darts.eval_trainer import EvalTrainSettings, train_derived, train_settings

OBJECTIVE = Objective("valid_accuracy", higher_is_better=True)


class _Stop(Exception):
    """Raised from the per-epoch callback to end a training a pruner stopped."""


class DartsTrainEvaluator(Evaluator):
    """Validation accuracy (percent) after DARTS's evaluation training of each cell."""

    name: ClassVar[str] = "darts-train"
    spaces: ClassVar[frozenset[str]] = frozenset({"darts"})
    requires: ClassVar[frozenset[str]] = frozenset({BUILD})
    trains: ClassVar[bool] = True
    fidelity: ClassVar[str | None] = "epochs"
    context_fields = frozenset({"seed", "device", "data", "registry"})

    def __init__(
        self,
        space: SearchSpace,
        *,
        dataset: str | None = TRAINING_DATASET,
        preset: str = "cpu-tiny",
        valid_fraction: float = 0.3,
        seed: int = 0,
        device: str = "cpu",
        data: TensorData | None = None,
        registry: ComponentLookup | None = None,
        **settings: Any,
    ) -> None:
        """``settings`` override the preset's (``epochs``, ``C``, ``layers``,
        ``batch_size``, ``max_batches``, ``lr``, ``drop_path``, ``cutout``, ...; see
        ``nasforge darts-train --help``); ``eval_every`` is always 1 (a curve needs every
        epoch). The training data is the run's (``--dataset``), split by ``seed`` into
        training and validation images, normalised by the training images' statistics."""
        name = dataset or (data.name if data is not None else TRAINING_DATASET)
        super().__init__(space, dataset=name)
        if not isinstance(valid_fraction, float | int) or not 0.0 < float(valid_fraction) < 1.0:
            raise OptionError(f"option 'valid_fraction' must lie in (0, 1), got {valid_fraction!r}")
        if "eval_every" in settings:
            raise OptionError("option 'eval_every' is fixed at 1 here: every epoch is reported")
        self.settings: EvalTrainSettings = train_settings(preset, **settings, eval_every=1)
        if data is None:
            data = load_dataset(name, registry=registry, seed=seed)
        if data.x.dim() != 4:
            raise NasforgeError(
                f"darts-train needs images (N, C, H, W); dataset '{name}' is {tuple(data.x.shape)}"
            )
        valid, train = data.split(float(valid_fraction), seed=seed)
        dims = [0, 2, 3]
        x = train.x.float()
        mean = tuple(float(v) for v in x.mean(dim=dims))
        std = tuple(max(float(v), 1e-6) for v in x.std(dim=dims))
        self.splits = ImageSplits(name, train, valid, mean, std)
        self.seed, self.device = seed, device
        self.epochs = self.settings.epochs
        self.input_shape = data.input_shape
        self.build_options = {
            **network_options(data.input_shape, data.num_classes),
            "C": self.settings.C,
            "layers": self.settings.layers,
            "auxiliary": self.settings.auxiliary_weight > 0,
        }

    @property
    def objective(self) -> Objective:
        return OBJECTIVE

    def evaluate(self, g: Genotype) -> Result:
        return self.evaluate_at(g, None)

    def evaluate_at(
        self, g: Genotype, fidelity: int | None, *, stop_below: tuple[float, ...] | None = None
    ) -> Result:
        """Train ``fidelity`` epochs (None: the configured ``epochs``) and report the
        validation accuracy after each; with ``stop_below`` (a pruner's thresholds) stop
        after the first epoch that falls short (``metadata["stopped_at"]``)."""
        self.space.validate(g)
        epochs = asked_budget(self.name, self.epochs, fidelity)
        settings = attrs.evolve(self.settings, epochs=epochs)
        curve: list[float] = []
        last: dict[str, float] = {}

        def on_epoch(record: dict[str, float]) -> None:
            last.update(record)
            curve.append(
                100.0 * float(record["test_accuracy"])
            )  # the trainer's "test" is our validation split
            if should_stop(stop_below, len(curve), curve[-1], OBJECTIVE.higher_is_better):
                raise _Stop

        start = time.perf_counter()
        try:
            # the trainer draws from its own seeded generators only: same seed, same curve
            train_derived(
                g,
                self.splits,
                settings,
                seed=self.seed,
                device=self.device,
                on_epoch=on_epoch,
                log_epochs=False,
            )
        except _Stop:
            pass
        except (RuntimeError, NasforgeError) as exc:  # a cell that cannot train is a failed trial
            return Result(objectives={}, cost=time.perf_counter() - start, failed=True, error=str(exc))
        if not curve or not math.isfinite(curve[-1]):
            return Result(
                objectives={}, cost=time.perf_counter() - start, failed=True, error="no validation data"
            )
        metadata: dict[str, Any] = {
            "epochs": len(curve),
            "per_epoch": {OBJECTIVE.name: curve},
            "train_loss": last.get("train_loss", math.nan),
            "train_accuracy": last.get("train_accuracy", math.nan),
            **({"stopped_at": len(curve)} if len(curve) < epochs else {}),
        }
        return Result(
            objectives={OBJECTIVE.name: curve[-1]}, cost=time.perf_counter() - start, metadata=metadata
        )

    def describe(self) -> dict[str, Any]:
        """What the journal header records of this evaluator (its settings decide results)."""
        return {
            **super().describe(),
            "seed": self.seed,
            "epochs": self.epochs,
            "settings": self.settings.to_json(),
            "train": len(self.splits.train),
            "valid": len(self.splits.test),
        }

"""Training a derived DARTS-space network from scratch, the way the papers evaluate a cell.

The recipe (preset ``paper``) is DARTS's CIFAR-10 evaluation (Liu et al., ICLR 2019,
code quark0/darts ``train.py``), which the later cells (P-DARTS, PC-DARTS, PR-DARTS, ...)
reuse for their published test errors: 20 cells, C = 36, 600 epochs, batch 96, SGD lr
0.025 with cosine annealing to 0 stepped per epoch, momentum 0.9, weight decay 3e-4,
gradient clipping at norm 5, an auxiliary tower after the second reduction cell with loss
weight 0.4, drop-path whose probability rises linearly with the epoch to 0.2
(``0.2 * epoch / epochs``, never on identity edges), and cutout 16 after the standard
crop + flip. Sources: Shu's thesis, App. A.1.3-A.1.4 (DARTS's evaluation recipe: 20
cells, 36 channels, auxiliary weight 0.4, batch 96, 600 epochs, cutout, drop path 0.2;
cosine to 0; clip 5), and PR-DARTS's evaluation settings with DARTS's ``train.py`` (SGD
0.025, momentum 0.9, wd 3e-4, clip 5; DARTS-V2's 2.76 % test error in PR-DARTS's Table 1).

``cpu-tiny`` is the same loop at a size two CPU cores train in seconds (digits, C = 8,
5 cells, 2 epochs), which is what the tests run; a GPU reproduces a published number with
``paper`` and nothing else changed.

Randomness never touches torch's global generators: the weights come from the seed
(:func:`nasforge.kernel.seeding.seeded_build`), the batch order and the augmentation draws from
explicit CPU generators, drop-path masks from a :class:`~nasforge.kernel.seeding.LocalRandomness`
entered around each forward pass. With ``out``, a checkpoint (weights, optimiser, the
generators' states, the per-epoch history) is written atomically after every epoch, so a
killed run started again with the same arguments continues where it stopped.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import torch
import torch.nn.functional as F
from rich.console import Console
from rich.progress import Progress

from nasforge.kernel.datasets import load_dataset, network_options
from nasforge.kernel.device import resolve_device
from nasforge.kernel.errors import NasforgeError, OptionError, show
from nasforge.kernel.files import atomic_path
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.one_shot import PROGRESS_COLUMNS
from nasforge.kernel.option_types import MAX_COUNT, as_float, check_options, in_range, typed
from nasforge.kernel.seeding import LocalRandomness, seeded_build, seeded_generator
from nasforge.run.training import CosineSchedule, SGDConfig, set_lr
from nasforge_darts.cifar_local import ImageSplits, augment, eval_transform
from nasforge_darts.counting import count_parameters
from nasforge_darts.cutout import cutout
from nasforge_darts.eval_network import EvalNetwork
from nasforge_darts.space import DartsSpace

logger = logging.getLogger("nasforge.darts.train")

_count = [typed, in_range(ge=1, le=MAX_COUNT)]
CHECKPOINT = "checkpoint.pt"
CHECKPOINT_FORMAT = "nasforge.darts-train-checkpoint/1"


@attrs.frozen(kw_only=True)
class EvalTrainSettings:
    """Everything that decides what an evaluation run computes (the device does not).

    Defaults are the ``paper`` preset. ``auxiliary_weight=0`` builds no auxiliary tower,
    ``drop_path=0``, ``cutout=0`` and ``crop_padding=0`` switch those off.
    """

    preset: str = attrs.field(default="paper", validator=typed)
    epochs: int = attrs.field(default=600, validator=_count)
    batch_size: int = attrs.field(default=96, validator=_count)
    lr: float = attrs.field(default=0.025, converter=as_float, validator=in_range(gt=0))
    #: Cosine annealing's floor: DARTS's train.py anneals to 0 (its search anneals to 0.001).
    lr_min: float = attrs.field(default=0.0, converter=as_float, validator=in_range(ge=0))
    momentum: float = attrs.field(default=0.9, converter=as_float, validator=in_range(ge=0, lt=1))
    weight_decay: float = attrs.field(default=3e-4, converter=as_float, validator=in_range(ge=0))
    grad_clip: float = attrs.field(default=5.0, converter=as_float, validator=in_range(gt=0))
    auxiliary_weight: float = attrs.field(default=0.4, converter=as_float, validator=in_range(ge=0))
    #: The drop-path probability of the last epoch; epoch e uses ``drop_path * e / epochs``.
    drop_path: float = attrs.field(default=0.2, converter=as_float, validator=in_range(ge=0, lt=1))
    #: Side of the cut-out square (after crop and flip, on normalised images).
    cutout: int = attrs.field(default=16, validator=[typed, in_range(ge=0, le=4096)])
    crop_padding: int = attrs.field(default=4, validator=[typed, in_range(ge=0, le=4096)])
    flip: bool = attrs.field(default=True, validator=typed)
    C: int = attrs.field(default=36, validator=[typed, in_range(ge=2, le=4096)])
    layers: int = attrs.field(default=20, validator=[typed, in_range(ge=3, le=1000)])
    #: Test-set evaluation every n epochs (the last epoch is always evaluated).
    eval_every: int = attrs.field(default=1, validator=_count)
    eval_batch_size: int = attrs.field(default=256, validator=_count)
    #: Cap on training batches per epoch (smoke runs); None = the whole training set.
    max_batches: int | None = attrs.field(default=None, validator=[typed, in_range(ge=1, le=MAX_COUNT)])

    @lr_min.validator
    def _floor_below_start(self, _attr: attrs.Attribute, value: float) -> None:
        if value > self.lr:
            raise OptionError(f"option 'lr_min' ({value:g}) must not exceed lr ({self.lr:g})")

    @C.validator
    def _even(self, _attr: attrs.Attribute, value: int) -> None:
        if value % 2:
            raise OptionError(f"option 'C' must be even (FactorizedReduce halves it), got {value}")

    def drop_path_at(self, epoch: int) -> float:
        """DARTS's ramp: ``drop_path * epoch / epochs`` (0 in the first epoch)."""
        return self.drop_path * epoch / self.epochs

    def lr_at(self, epoch: int) -> float:
        return CosineSchedule(self.lr, self.lr_min, self.epochs)(epoch)

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


#: The presets; every value of ``paper`` is DARTS's CIFAR-10 evaluation (module docstring).
PRESETS: dict[str, dict[str, Any]] = {
    "paper": {
        "epochs": 600,
        "batch_size": 96,
        "lr": 0.025,
        "lr_min": 0.0,
        "momentum": 0.9,
        "weight_decay": 3e-4,
        "grad_clip": 5.0,
        "auxiliary_weight": 0.4,
        "drop_path": 0.2,
        "cutout": 16,
        "crop_padding": 4,
        "flip": True,
        "C": 36,
        "layers": 20,
        "eval_every": 1,
        "eval_batch_size": 256,
    },
    # the same recipe shrunk for 8x8 digits on a CPU: cutout and padding scaled with the
    # image side (16/32 -> 4/8, 4/32 -> 1/8), no flip (a mirrored digit is another glyph)
    "cpu-tiny": {
        "epochs": 2,
        "batch_size": 64,
        "lr": 0.025,
        "lr_min": 0.0,
        "momentum": 0.9,
        "weight_decay": 3e-4,
        "grad_clip": 5.0,
        "auxiliary_weight": 0.4,
        "drop_path": 0.2,
        "cutout": 4,
        "crop_padding": 1,
        "flip": False,
        "C": 8,
        "layers": 5,
        "eval_every": 1,
        "eval_batch_size": 512,
    },
}


def train_settings(preset: str = "paper", **overrides: Any) -> EvalTrainSettings:
    """The preset's settings with ``overrides`` on top (bad names and values: one line)."""
    if not isinstance(preset, str) or preset not in PRESETS:
        raise OptionError(f"unknown darts-train preset {show(preset)}; known: {', '.join(PRESETS)}")
    accepted = [f.name for f in attrs.fields(EvalTrainSettings) if f.name != "preset"]
    check_options("darts-train", EvalTrainSettings, overrides, accepted=accepted)
    return EvalTrainSettings(preset=preset, **{**PRESETS[preset], **overrides})


def digits_splits(*, test_fraction: float = 0.2, split_seed: int = 0) -> ImageSplits:
    """sklearn's digits (1x8x8 in [0, 1]) split 80/20 by a fixed seed, normalised by the
    training images' mean and std: the CPU stand-in for CIFAR-10."""
    data = load_dataset("digits")
    train, test = data.split(1.0 - test_fraction, seed=split_seed)
    mean, std = float(train.x.mean()), float(train.x.std())
    return ImageSplits("digits", train, test, (mean,), (std,))


@attrs.frozen
class EvalTrainResult:
    """What a run produced: the per-epoch history and the final test numbers."""

    genotype: str
    dataset: str
    settings: EvalTrainSettings
    seed: int
    device: str
    history: list[dict[str, float]]
    test_loss: float
    test_accuracy: float
    parameters: int
    seconds: float
    resumed_from: int
    checkpoint: str | None
    #: The trained network (on its training device), e.g. to export its weights.
    model: torch.nn.Module | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def test_error(self) -> float:
        """Test error in percent (what the papers' tables give)."""
        return 100.0 * (1.0 - self.test_accuracy)

    def to_json(self) -> dict[str, Any]:
        return {
            "genotype": self.genotype,
            "dataset": self.dataset,
            "preset": self.settings.preset,
            "settings": self.settings.to_json(),
            "seed": self.seed,
            "device": self.device,
            "epochs": list(self.history),
            "test_loss": self.test_loss,
            "test_accuracy": self.test_accuracy,
            "test_error": self.test_error,
            "parameters": self.parameters,
            "seconds": self.seconds,
            "resumed_from": self.resumed_from,
            "checkpoint": self.checkpoint,
        }


def build_eval_network(g: Genotype, data: ImageSplits, settings: EvalTrainSettings, seed: int) -> EvalNetwork:
    """The evaluation network for ``data``'s images, its weights drawn from ``seed`` alone."""
    space = DartsSpace()
    options: dict[str, Any] = network_options(data.train.input_shape, data.train.num_classes)
    options.update(C=settings.C, layers=settings.layers, auxiliary=settings.auxiliary_weight > 0)
    model = seeded_build(lambda: space.build(g, **options), seed)
    assert isinstance(model, EvalNetwork)
    return model


def train_derived(
    genotype: Genotype | str,
    data: ImageSplits,
    settings: EvalTrainSettings,
    *,
    seed: int = 0,
    device: str | torch.device = "cpu",
    out: str | Path | None = None,
    progress: bool = False,
    console: Console | None = None,
    on_epoch: Callable[[dict[str, float]], None] | None = None,
    log_epochs: bool = True,
) -> EvalTrainResult:
    """Train the network of a DARTS-space ``genotype`` on ``data`` with ``settings``.

    ``out`` (a directory) receives ``checkpoint.pt`` after every epoch; if it already holds
    one of this run (same genotype, data, settings and seed) training continues from it,
    and one of another run is refused in one line. ``on_epoch`` sees each epoch's record;
    ``log_epochs=False`` logs it at debug level only (an evaluator inside a search, whose
    progress the run reports).
    """
    space = DartsSpace()
    g = space.parse(genotype) if isinstance(genotype, str) else genotype
    space.validate(g)
    text = space.format(g)
    dev = resolve_device(device)
    started = time.perf_counter()

    model = build_eval_network(g, data, settings, seed).to(dev)
    optimizer = SGDConfig(
        lr=settings.lr, momentum=settings.momentum, weight_decay=settings.weight_decay
    ).build(model.parameters())
    order_gen = seeded_generator(seed)  # batch order
    augment_gen = seeded_generator(seed + 1)  # crops, flips, cutout squares
    randomness = LocalRandomness(seed + 2)  # drop-path masks
    train_x, train_y = data.train.x.to(dev), data.train.y.to(dev)

    checkpoint = Path(out) / CHECKPOINT if out is not None else None
    fingerprint: dict[str, Any] = {}  # what a checkpoint must match to be resumed
    if checkpoint is not None:
        fingerprint = {
            "genotype": text,
            "settings": settings.to_json(),
            "seed": seed,
            "data": {"name": data.name, "train": data.train.digest(), "test": data.test.digest()},
        }
    history: list[dict[str, float]] = []
    start_epoch, seconds_before = 0, 0.0
    if checkpoint is not None:
        checkpoint.parent.mkdir(parents=True, exist_ok=True)
        if checkpoint.exists():
            state = _read_checkpoint(checkpoint, fingerprint)
            model.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            order_gen.set_state(state["generators"]["order"])
            augment_gen.set_state(state["generators"]["augment"])
            if dev.type == state["device_type"]:  # a CUDA stream cannot continue on the CPU
                randomness.generator(dev).set_state(state["generators"]["drop_path"])
            history = list(state["history"])
            start_epoch, seconds_before = int(state["epoch"]), float(state["seconds"])
            logger.info("resuming %s from epoch %d/%d", checkpoint, start_epoch, settings.epochs)

    def one_epoch(epoch: int) -> dict[str, float]:
        t0 = time.perf_counter()
        lr, drop_prob = settings.lr_at(epoch), settings.drop_path_at(epoch)
        set_lr(optimizer, lr)
        model.drop_path_prob = drop_prob
        model.train()
        n = train_x.shape[0]
        order = torch.randperm(n, generator=order_gen).to(dev)
        sums = torch.zeros(3, device=dev)  # loss, aux loss, correct (summed over samples)
        seen = 0
        for b, begin in enumerate(range(0, n, settings.batch_size)):
            if settings.max_batches is not None and b >= settings.max_batches:
                break
            idx = order[begin : begin + settings.batch_size]
            if idx.numel() < 2:  # BatchNorm needs two samples; only a last batch can be smaller
                continue
            xb = augment(
                train_x[idx],
                data.mean,
                data.std,
                padding=settings.crop_padding,
                flip=settings.flip,
                generator=augment_gen,
            )
            xb, yb = cutout(xb, settings.cutout, generator=augment_gen), train_y[idx]
            optimizer.zero_grad(set_to_none=True)
            # drop-path draws its masks from the run's generator (no draws at probability 0,
            # so the first epoch skips the dispatch mode's per-op cost)
            with randomness if drop_prob > 0 else contextlib.nullcontext():
                logits, aux = model.forward_with_aux(xb)
            loss = F.cross_entropy(logits, yb)
            total = loss
            aux_loss = torch.zeros((), device=dev)
            if aux is not None and settings.auxiliary_weight > 0:
                aux_loss = F.cross_entropy(aux, yb)
                total = loss + settings.auxiliary_weight * aux_loss
            total.backward()
            # the norm stays a tensor: no device synchronisation per step on a GPU
            torch.nn.utils.clip_grad_norm_(model.parameters(), settings.grad_clip)
            optimizer.step()
            k = yb.shape[0]
            sums += torch.stack(
                [loss.detach() * k, aux_loss.detach() * k, (logits.detach().argmax(-1) == yb).sum()]
            )
            seen += k
        loss_sum, aux_sum, correct = (float(v) for v in sums.cpu())
        seen = max(seen, 1)
        record = {
            "epoch": epoch,
            "lr": lr,
            "drop_path": drop_prob,
            "train_loss": loss_sum / seen,
            "train_aux_loss": aux_sum / seen,
            "train_accuracy": correct / seen,
        }
        if not math.isfinite(record["train_loss"]):
            raise NasforgeError(f"training diverged in epoch {epoch} (loss {record['train_loss']}); lower lr")
        if (epoch + 1) % settings.eval_every == 0 or epoch == settings.epochs - 1:
            record["test_loss"], record["test_accuracy"] = evaluate_images(
                model, data, settings.eval_batch_size, dev
            )
        record["seconds"] = time.perf_counter() - t0
        return record

    bar = Progress(*PROGRESS_COLUMNS, console=console, disable=not progress)
    with bar:
        task = bar.add_task(f"darts-train {data.name}", total=settings.epochs, completed=start_epoch, info="")
        for epoch in range(start_epoch, settings.epochs):
            record = one_epoch(epoch)
            history.append(record)
            logger.log(
                logging.INFO if log_epochs else logging.DEBUG,
                "epoch %d/%d: %s",
                epoch + 1,
                settings.epochs,
                _describe(record),
            )
            if checkpoint is not None:
                elapsed = seconds_before + time.perf_counter() - started
                _write_checkpoint(
                    checkpoint,
                    fingerprint=fingerprint,
                    epoch=epoch + 1,
                    model=model,
                    optimizer=optimizer,
                    generators={
                        "order": order_gen.get_state(),
                        "augment": augment_gen.get_state(),
                        "drop_path": randomness.generator(dev).get_state(),
                    },
                    device_type=dev.type,
                    history=history,
                    seconds=elapsed,
                )
            if on_epoch is not None:
                on_epoch(record)
            bar.update(task, advance=1, info=_describe(record))

    last = history[-1] if history else {}
    if "test_accuracy" in last and last.get("epoch") == settings.epochs - 1:
        test_loss, test_acc = last["test_loss"], last["test_accuracy"]
    else:  # a history whose last epoch was not evaluated (a checkpoint from elsewhere)
        test_loss, test_acc = evaluate_images(model, data, settings.eval_batch_size, dev)
    return EvalTrainResult(
        genotype=text,
        dataset=data.name,
        settings=settings,
        seed=seed,
        device=str(dev),
        history=history,
        test_loss=test_loss,
        test_accuracy=test_acc,
        parameters=count_parameters(model),
        seconds=seconds_before + time.perf_counter() - started,
        resumed_from=start_epoch,
        checkpoint=str(checkpoint) if checkpoint is not None else None,
        model=model,
    )


@torch.no_grad()
def evaluate_images(
    model: torch.nn.Module, data: ImageSplits, batch_size: int, device: torch.device
) -> tuple[float, float]:
    """Mean cross-entropy and top-1 accuracy on the test images (normalised only), in eval
    mode (no drop-path, no auxiliary tower, BN running statistics)."""
    was_training = model.training
    model.eval()
    loss_sum = torch.zeros((), device=device)
    correct = torch.zeros((), device=device)
    try:
        for begin in range(0, len(data.test), batch_size):
            xb = eval_transform(data.test.x[begin : begin + batch_size].to(device), data.mean, data.std)
            yb = data.test.y[begin : begin + batch_size].to(device)
            logits = model(xb)
            loss_sum += F.cross_entropy(logits, yb, reduction="sum")
            correct += (logits.argmax(-1) == yb).sum()
    finally:
        model.train(was_training)
    n = max(len(data.test), 1)
    return float(loss_sum) / n, float(correct) / n


def _describe(record: dict[str, float]) -> str:
    parts = [f"lr {record['lr']:.4g}", f"drop_path {record['drop_path']:.3f}"]
    parts.append(f"loss {record['train_loss']:.4f}")
    if record.get("train_aux_loss"):
        parts.append(f"aux {record['train_aux_loss']:.4f}")
    parts.append(f"train {100 * record['train_accuracy']:.2f}%")
    if "test_accuracy" in record:
        parts.append(f"test {100 * record['test_accuracy']:.2f}%")
    if "seconds" in record:
        parts.append(f"{record['seconds']:.1f} s")
    return ", ".join(parts)


def _write_checkpoint(path: Path, **state: Any) -> None:
    model: torch.nn.Module = state.pop("model")
    optimizer: torch.optim.Optimizer = state.pop("optimizer")
    payload = {
        "format": CHECKPOINT_FORMAT,
        "model": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        "optimizer": optimizer.state_dict(),
        **state,
    }
    with atomic_path(path) as tmp:
        torch.save(payload, tmp)


def _read_checkpoint(path: Path, fingerprint: dict[str, Any]) -> dict[str, Any]:
    """The checkpoint's contents, or one line when it is unreadable or of another run."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for a truncated or foreign file
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise NasforgeError(f"{path} is not a readable darts-train checkpoint ({first})") from None
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        raise NasforgeError(f"{path} is not a darts-train checkpoint")
    theirs = state.get("fingerprint", {})
    differs = sorted(k for k in fingerprint if theirs.get(k) != fingerprint[k])
    if differs:
        raise NasforgeError(
            f"{path} is a checkpoint of another run ({', '.join(differs)} differ): "
            "use another --out, or delete it to start over"
        )
    return state


__all__ = [
    "PRESETS",
    "EvalTrainResult",
    "EvalTrainSettings",
    "build_eval_network",
    "digits_splits",
    "evaluate_images",
    "train_derived",
    "train_settings",
]

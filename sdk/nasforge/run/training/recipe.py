"""How the chosen architecture is trained from scratch: one documented, recorded recipe.

A search ranks architectures after a few epochs (short-train) or with shared weights (a
supernet); what a user deploys is the winner trained properly on all of its training
data. The recipe is the short-train evaluator's made longer and given augmentation:

* SGD with momentum 0.9 (Nesterov), learning rate 0.05 annealed to 0 by a cosine over the
  epochs (set once per epoch), weight decay 3e-4, gradient norm clipped at 5, batches of
  64 in an order drawn from the seed (the loop of :func:`~nasforge.run.training.train_epoch`);
* 30 epochs: a NAS-Bench-201 cell with C=8, N=1 trains on MNIST-1D's 4,000 sequences in
  about two minutes of one CPU core (102-131 s measured on a busy 2-core machine; the
  default C=16, N=5 network takes several times longer);
* augmentation where the data is images (``C x H x W``): each sample shifted by up to an
  eighth of its height and width (zero padding, then a crop: CIFAR's 4 pixels of 32,
  MNIST-1D's 5 samples of 40, digits' 1 pixel of 8), drawn per sample from the seed;
  mirroring is off by default, since it changes what a digit or a sequence means
  (``augment="shift-flip"`` for natural images); other data is not augmented.

Every value is checked where it crosses into the run (one line naming the option) and
recorded with the trained model, so the numbers it reports can be reproduced.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

import attrs

from nasforge.kernel.errors import OptionError, show
from nasforge.kernel.option_types import MAX_COUNT, as_float, check_option, in_range, one_of, typed

#: ``auto``: shift images, leave other data alone; ``none``; ``shift``; ``shift-flip``.
Augment = Literal["auto", "none", "shift", "shift-flip"]
AUGMENTS: tuple[str, ...] = get_args(Augment)

_count = [typed, in_range(ge=1, le=MAX_COUNT)]
#: Bounds no useful training crosses, so that an absurd value is one line before the first
#: epoch, not an overflow inside torch after it: a step of lr x gradient above 10 wipes
#: out any network, weight decay above 1 pulls every weight past zero in a step or two, and
#: a clip above 1e6 is no clip (leave it out).
MAX_LR = 10.0
MAX_WEIGHT_DECAY = 1.0
MAX_GRAD_CLIP = 1e6


def _grad_clip(value: Any) -> float | None:
    """A number, or None for no clipping."""
    if value is None:
        return None
    check_option("grad_clip", value, float)
    return float(value)


@attrs.frozen(kw_only=True)
class TrainRecipe:
    """The settings that decide what a from-scratch training computes (the device does not)."""

    epochs: int = attrs.field(default=30, validator=_count)
    batch_size: int = attrs.field(default=64, validator=_count)
    lr: float = attrs.field(default=0.05, converter=as_float, validator=in_range(gt=0, le=MAX_LR))
    momentum: float = attrs.field(default=0.9, converter=as_float, validator=in_range(ge=0, lt=1))
    nesterov: bool = attrs.field(default=True, validator=typed)
    weight_decay: float = attrs.field(
        default=3e-4, converter=as_float, validator=in_range(ge=0, le=MAX_WEIGHT_DECAY)
    )
    grad_clip: float | None = attrs.field(
        default=5.0, converter=_grad_clip, validator=in_range(gt=0, le=MAX_GRAD_CLIP)
    )
    augment: str = attrs.field(default="auto", validator=one_of(AUGMENTS))
    #: Share of the training data held out to report accuracy on, when the data has no
    #: test split of its own (drawn by the seed; the rest is trained on).
    holdout_fraction: float = attrs.field(default=0.2, converter=as_float, validator=in_range(gt=0, lt=1))

    @nesterov.validator
    def _nesterov_needs_momentum(self, _attr: attrs.Attribute, value: bool) -> None:
        if value and self.momentum == 0:
            raise OptionError("option 'nesterov' needs momentum > 0 (set nesterov false, or a momentum)")

    def shifts(self, input_shape: tuple[int, ...]) -> tuple[int, int]:
        """The largest shift (rows, columns) an image of ``input_shape`` gets; (0, 0) when
        not augmented (not an image, or ``augment="none"``)."""
        if self.augment == "none" or len(input_shape) != 3:
            return (0, 0)
        _, height, width = input_shape
        return (height // 8, width // 8)

    def flips(self, input_shape: tuple[int, ...]) -> bool:
        """Whether images of ``input_shape`` are mirrored left-right at random."""
        return self.augment == "shift-flip" and len(input_shape) == 3

    def describe(self, input_shape: tuple[int, ...] | None = None) -> str:
        """The recipe in a line (what ``--help`` and a trained model's metadata say)."""
        nesterov = ", Nesterov" if self.nesterov else ""
        text = (
            f"{self.epochs} epochs of SGD (momentum {self.momentum:g}{nesterov}, lr {self.lr:g} cosine "
            f"to 0, weight decay {self.weight_decay:g}, batch {self.batch_size})"
        )
        if input_shape is None:
            return text
        rows, cols = self.shifts(input_shape)
        if rows or cols:
            mirrored = " and mirrored" if self.flips(input_shape) else ""
            text += f", images shifted up to {rows}x{cols}{mirrored}"
        return text

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> TrainRecipe:
        """A recipe from a record or a user's options; unknown names are one line."""
        if not isinstance(data, dict):
            raise OptionError(f"a training recipe must be an object, got {show(data)}")
        known = {f.name for f in attrs.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise OptionError(f"unknown training option {unknown[0]!r} (known: {', '.join(sorted(known))})")
        return cls(**data)

"""Small training utilities shared by the weight-sharing strategies and evaluators.

Deliberately not a trainer framework: optimiser configs, schedules, clipping, batching,
accuracy and an epoch loop with rich progress are enough for DARTS-style searches and
short from-scratch evaluations, and each is one short module.
"""

from typing import TYPE_CHECKING

from nasforge.kernel.lazy_package import lazy_package

if TYPE_CHECKING:  # the names with their types; at run time each loads on first use
    from nasforge.run.training.accuracy import accuracy, evaluate
    from nasforge.run.training.batches import iterate_batches, paired_batches
    from nasforge.run.training.clipping import clip_gradients
    from nasforge.run.training.from_scratch import train_cosine
    from nasforge.run.training.loop import EpochLog, run_epochs, train_epoch
    from nasforge.run.training.optimizers import AdamConfig, SGDConfig
    from nasforge.run.training.schedules import CosineSchedule, LinearSchedule, set_lr
else:
    lazy_package(__name__)

__all__ = [
    "AdamConfig",
    "CosineSchedule",
    "EpochLog",
    "LinearSchedule",
    "SGDConfig",
    "accuracy",
    "clip_gradients",
    "evaluate",
    "iterate_batches",
    "paired_batches",
    "run_epochs",
    "set_lr",
    "train_cosine",
    "train_epoch",
]

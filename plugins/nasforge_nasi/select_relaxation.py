"""Pick the NASI relaxation for a space and its supernet.

DARTS needs its own (ops and inputs are separate decisions); every supernet with one
(edges x ops) architecture matrix takes the row-wise one. Dispatch is by the space's
name and the supernet's shapes, never by importing another plugin.
"""

from __future__ import annotations

from torch import nn

from nasforge.search_space import SearchSpace
from nasforge_nasi.config import NasiConfig
from nasforge_nasi.darts_relaxation import DartsRelaxation
from nasforge_nasi.relaxation import Relaxation
from nasforge_nasi.rowwise_relaxation import RowwiseRelaxation


def relaxation_for(space: SearchSpace, supernet: nn.Module, config: NasiConfig) -> Relaxation:
    """The relaxation of ``space``; raises CapabilityError for an unsupported supernet."""
    if space.name == "darts":
        return DartsRelaxation(space, supernet, single_path=config.single_path, pairing=config.pairing)
    return RowwiseRelaxation(space, supernet, single_path=config.single_path)

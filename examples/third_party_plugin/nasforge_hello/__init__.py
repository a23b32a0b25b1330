"""An example nasforge plugin, packaged on its own as a third party would."""

from nasforge_hello.cell_space import HelloCellSpace
from nasforge_hello.hill_climb import HillClimb
from nasforge_hello.weight_norm import WeightNorm

__all__ = ["HelloCellSpace", "HillClimb", "WeightNorm"]

"""NAS-Bench-201 for nasforge: the 15,625-cell space, its networks and supernet, and the
bundled benchmark table behind an evaluator that follows the benchmark protocol
(validation accuracy as fitness, recorded training seconds as cost, test accuracy reported).

Registered through the ``nasforge`` entry point ``nb201``; importing this package reads
no data (the table loads on first lookup).
"""

from typing import TYPE_CHECKING

from nasforge.kernel.lazy_package import lazy_package

if TYPE_CHECKING:  # the names with their types; at run time each loads on first use
    from nasforge_nb201.arch import OP_NAMES
    from nasforge_nb201.datasets import DATASET_NAMES, BenchmarkDataset, benchmark_dataset
    from nasforge_nb201.evaluator import NB201TableEvaluator
    from nasforge_nb201.flops import network_macs
    from nasforge_nb201.network import NB201Network, build
    from nasforge_nb201.space import NB201Space
    from nasforge_nb201.supernet import NB201Supernet, supernet
    from nasforge_nb201.table import NB201Table, load_table
else:
    lazy_package(__name__)

__all__ = [
    "DATASET_NAMES",
    "OP_NAMES",
    "BenchmarkDataset",
    "NB201Network",
    "NB201Space",
    "NB201Supernet",
    "NB201Table",
    "NB201TableEvaluator",
    "benchmark_dataset",
    "build",
    "load_table",
    "network_macs",
    "supernet",
]

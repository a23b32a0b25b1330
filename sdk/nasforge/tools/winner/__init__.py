"""Training the architecture a search chose, from scratch, and reporting it held out
(``nasforge train``, ``nasforge.api.train``)."""

from nasforge.tools.winner.data_split import WinnerData, winner_data
from nasforge.tools.winner.source import WinnerSource, resolve_source
from nasforge.tools.winner.task import RESULT_FILE, TrainedWinner, train_winner

__all__ = [
    "RESULT_FILE",
    "TrainedWinner",
    "WinnerData",
    "WinnerSource",
    "resolve_source",
    "train_winner",
    "winner_data",
]

"""A host program embedding nasforge: a journaled search followed trial by trial.

    python examples/host_program.py [RUN_DIR]

What a production AutoML pipeline needs from the library, through public names only:
a seeded search on the bundled NAS-Bench-201 table, a callback per new trial and one at the
end, a hook object (the same hooks plugins implement), the ``nasforge`` logger's records,
one exception class to catch, and ``resume`` to continue a run a killed process left. It is
checked with ``mypy --strict`` in CI, so the types a host sees are the ones written here.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from nasforge import NasforgeError, SearchOutcome, Trial, api, hookimpl


class Dashboard:
    """Follows a run: what a host would forward to its own monitoring."""

    def __init__(self) -> None:
        self.best_so_far = float("-inf")
        self.trials = 0

    def on_trial(self, trial: Trial) -> None:
        """Called once for each new trial, as it is journaled (never for replayed ones)."""
        self.trials += 1
        # the search observes validation accuracy; test accuracy is only reported at the end
        accuracy = trial.result.objectives.get("valid_accuracy", float("-inf"))
        if accuracy > self.best_so_far:
            self.best_so_far = accuracy
            print(f"trial {trial.index}: new best validation accuracy {accuracy:.2f}")

    def on_end(self, outcome: SearchOutcome) -> None:
        """Called once when the run ends."""
        print(f"search ended after {self.trials} new trials")


class AuditHook:
    """A hook object: the plugin hooks, without registering a plugin."""

    @hookimpl
    def nasforge_search_end(self, experiment: object, outcome: SearchOutcome) -> None:
        print(f"audit: best genotype {outcome.best.choices}")


def main(run_dir: Path) -> int:
    logging.basicConfig(level=logging.INFO, format="%(name)s %(levelname)s %(message)s")
    dashboard = Dashboard()
    try:
        outcome = api.search(
            space="nb201",
            strategy="rea",
            evaluator="nb201-table",
            dataset="cifar10",
            trials=50,
            seed=0,
            run_dir=run_dir,
            on_trial=dashboard.on_trial,
            on_end=dashboard.on_end,
            hooks=[AuditHook()],
        )
    except NasforgeError as err:  # every refusal and failure the library raises
        print(f"search failed: {err}", file=sys.stderr)
        return 2
    chosen = outcome.best_result
    if chosen is None:  # every trial failed: nothing was chosen
        print("no trial succeeded", file=sys.stderr)
        return 1
    print("test accuracy of the chosen cell:", chosen.objectives["test_accuracy"])
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "host-run")))

"""A NESBS ensemble search of a few seconds on digits (3 members), shared by the ensemble
tests: the strategy options, the CLI's argv for it, and the export's build options."""

from __future__ import annotations

import json

#: nesbs options for a run of a few seconds (C=4 supernet, 2 batches an epoch).
TINY = {
    "supernet_epochs": 1,
    "posterior_epochs": 1,
    "max_batches": 2,
    "batch_size": 16,
    "svgd_steps": 10,
    "iterations": 1,
    "supernet": {"C": 4, "N": 1},
}
#: ``nasforge search`` of that run on NB201 with digits, quiet.
SEARCH = ["search", "--space", "nb201", "--strategy", "nesbs", "--dataset", "digits", "-q"]
for _key, _value in TINY.items():
    SEARCH += ["-o", f"{_key}={json.dumps(_value)}"]
#: The networks an export builds, as small as the supernet.
BUILD = ["--build-option", "C=4", "--build-option", "N=1"]

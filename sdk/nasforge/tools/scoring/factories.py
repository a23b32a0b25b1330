"""This thread's sweep network factories, made once and reused by every chunk and builder.

A space's :class:`~nasforge.kernel.network_factory.NetworkFactory` reuses its modules from
one genotype to the next, so a sweep makes one per process and build options and keeps it
(:func:`thread_factory`); the sweep's runners and the device pipeline's builders share it.
"""

from __future__ import annotations

import json
import pickle
import threading
from typing import Any

from nasforge.kernel.network_factory import NetworkFactory, network_factory
from nasforge.kernel.search_space import SearchSpace

#: This thread's network factories, by space and build options: made once, reused by every
#: chunk (in-process sweeps run one chunk per genotype; a worker unpickles a new space
#: object with every chunk, so the key is the space's pickled state, not its identity).
#: Per thread, because a factory hands out one network object: two sweeps on two threads
#: must not share it. A few, least recent dropped; each entry holds its space.
_LOCAL = threading.local()


def thread_factory(space: SearchSpace, build: dict[str, Any]) -> NetworkFactory:
    """This thread's factory of ``space``'s networks for ``build`` (made on first use)."""
    factories: dict[tuple[bytes | int, str], tuple[SearchSpace, NetworkFactory]] = _LOCAL.__dict__.setdefault(
        "factories", {}
    )
    try:
        state: bytes | int = pickle.dumps(space)
    except Exception:  # an unpicklable space (in-process only): by identity  # noqa: BLE001
        state = id(space)
    key = (state, json.dumps(build, sort_keys=True, default=str))
    entry = factories.pop(key, None)
    if entry is None or (isinstance(state, int) and entry[0] is not space):
        entry = (space, network_factory(space, build))
    factories[key] = entry  # (re)inserted last: the most recent
    while len(factories) > 4:
        del factories[next(iter(factories))]
    return entry[1]


__all__ = ["thread_factory"]

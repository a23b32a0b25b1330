"""nasforge: a plugin-based neural architecture search SDK for PyTorch.

The core is three packages, each importing only the ones before it: ``nasforge.kernel``
(the contracts and values plugins implement and use), ``nasforge.run`` (what runs a
search) and ``nasforge.tools`` (scoring, export, reports, the CLI). The names below are the
stable API, loaded on first use so that ``import nasforge`` stays cheap; type checkers see
each with its type (:mod:`nasforge._public_names`). Status messages go to :mod:`logging`
under the ``nasforge`` logger; a library only emits records, so the package adds nothing
but a :class:`logging.NullHandler`.
"""

import importlib
import importlib.abc
import logging
import sys
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

logging.getLogger("nasforge").addHandler(logging.NullHandler())


class _SpaceSources(importlib.abc.MetaPathFinder):
    """Finds the module of a space loaded from its file (``--space PATH.py:NAME``) by the
    name it was loaded under, in any process: a worker unpickling such a space loads it."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> Any:
        if name.startswith("nasforge_space_source_"):
            from nasforge.kernel.space_source import spec_of

            return spec_of(name)
        return None


if not any(isinstance(f, _SpaceSources) for f in sys.meta_path):
    sys.meta_path.append(_SpaceSources())

if TYPE_CHECKING:  # every public name with its type; at run time each loads on first use
    from nasforge._public_names import *  # noqa: F403
else:

    def __getattr__(name: str) -> Any:
        from nasforge._public_names import _EXPORTS

        if name == "__all__":
            value: Any = sorted((*_EXPORTS, "__version__"))
        elif name in _EXPORTS:
            value = getattr(importlib.import_module(_EXPORTS[name]), name)
        else:
            raise AttributeError(f"module 'nasforge' has no attribute {name!r}")
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        from nasforge._public_names import _EXPORTS

        return sorted({*globals(), *_EXPORTS})

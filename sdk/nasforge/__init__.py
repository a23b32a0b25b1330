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
import logging
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

logging.getLogger("nasforge").addHandler(logging.NullHandler())

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

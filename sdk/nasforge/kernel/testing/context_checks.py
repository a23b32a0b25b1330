"""How the conformance kits build a component: as a run does, through its ``from_context``
hook, with a plugin author's mistake reported in one line.

pytest rewrites ``assert`` only in test files, not in an installed package such as this
kit, so every check here (and in the kits) carries its own message with the values that
differ: a failure reads as what is wrong, never as a bare ``AssertionError``.
"""

from __future__ import annotations

from typing import Any

import pytest

from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.run_context import RunContext, construction_mistake


def require_buildable(kind: str, cls: Any) -> None:
    """Fail the test in one line when a run could not build ``cls`` through its hook (a
    context field the context does not hold, a constructor that does not take what its
    ``from_context`` passes): what ``nasforge plugins`` and the registry report too."""
    name = getattr(cls, "name", getattr(cls, "__name__", repr(cls)))
    mistake = construction_mistake(kind, str(name), cls)
    if mistake is not None:
        pytest.fail(mistake, pytrace=False)


def build_from_context(kind: str, cls: Any, context: RunContext, *args: Any, **options: Any) -> Any:
    """``cls`` built as a run builds it (``cls.from_context(context, *args, **options)``; a
    class without the hook as the run's adapter calls it), a mistake failing the test in
    one line naming the component. Options the component refuses stay its own errors
    (:class:`~nasforge.kernel.errors.NasforgeError`), for the checks that expect them."""
    require_buildable(kind, cls)
    name = getattr(cls, "name", getattr(cls, "__name__", repr(cls)))
    try:
        if hasattr(cls, "from_context"):
            return cls.from_context(context, *args, **options)
        return cls(*args, seed=context.seed, **options) if kind == "strategy" else cls(*args, **options)
    except NasforgeError:
        raise
    except TypeError as exc:
        pytest.fail(f"{kind} '{name}' cannot be built from a run context: TypeError: {exc}", pytrace=False)


__all__ = ["build_from_context", "require_buildable"]

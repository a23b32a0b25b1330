"""How the conformance kits build a component: as a run does, through its hook (the context
fields it declares, or its own ``from_context``), a plugin author's mistake reported in
one line.

pytest rewrites ``assert`` only in test files, not in an installed package such as this
kit, so every check here (and in the kits) carries its own message with the values that
differ: a failure reads as what is wrong, never as a bare ``AssertionError``.
"""

from __future__ import annotations

from typing import Any

import pytest

from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.run_context import RunContext, build_from_context, construction_mistake


def require_buildable(kind: str, cls: Any) -> None:
    """Fail the test in one line when a run could not build ``cls`` through its hook (a
    context field the context does not hold, a constructor that does not take what the
    run passes it): what ``nasforge plugins`` and the registry report too."""
    name = getattr(cls, "name", getattr(cls, "__name__", repr(cls)))
    mistake = construction_mistake(kind, str(name), cls)
    if mistake is not None:
        pytest.fail(mistake, pytrace=False)


def build_as_a_run(kind: str, cls: Any, context: RunContext, *args: Any, **options: Any) -> Any:
    """``cls`` built as a run builds it, through its hook
    (:func:`~nasforge.kernel.run_context.build_from_context`), a mistake failing the test
    in one line naming the component. Options the component refuses stay its own errors
    (:class:`~nasforge.kernel.errors.NasforgeError`), for the checks that expect them."""
    require_buildable(kind, cls)
    name = getattr(cls, "name", getattr(cls, "__name__", repr(cls)))
    try:
        return build_from_context(kind, cls, context, *args, **options)
    except NasforgeError:
        raise
    except TypeError as exc:
        pytest.fail(f"{kind} '{name}' cannot be built from a run context: TypeError: {exc}", pytrace=False)


__all__ = ["build_as_a_run", "require_buildable"]

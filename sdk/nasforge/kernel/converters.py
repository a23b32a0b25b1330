"""``tuple`` and ``dict`` as attrs converters, typed for a type checker.

mypy's attrs plugin types an ``__init__`` parameter by its converter's first parameter;
with ``converter=tuple`` (or ``dict``) that is ``Iterable[_T_co]``, a type variable nothing
binds, so every call of the class fails to type-check. These are the same callables at run
time, declared with a concrete parameter type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    def to_tuple(value: Iterable[Any], /) -> tuple[Any, ...]: ...
    def to_dict(value: Mapping[Any, Any] | Iterable[tuple[Any, Any]], /) -> dict[Any, Any]: ...
else:
    to_tuple, to_dict = tuple, dict

"""User-given option values checked against the types their constructor declares.

Options arrive as JSON (``-o key=value``, ``--build-option``, a journal header), so a
value can be any JSON type whatever the option means. Unchecked, ``population_size="x"``
or ``1e308`` fails deep inside a constructor as a TypeError or OverflowError far from its
cause; checked here against the declared hints (int, float, bool, str, Literal, Optional,
list, tuple, dict), it fails at once with one line naming the option and what it expects.

The attrs helpers (:func:`typed`, :data:`as_float`, :data:`as_tuple`, :data:`as_dict`,
:func:`in_range`, :func:`one_of`) give plugin config classes the same checks and the same
error type, so a config used from Python and one built from the command line agree.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import operator
import os
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

import attrs

from nasforge.kernel import errors

#: The widest integer an option may hold: a 64-bit seed (torch takes [-2^63, 2^64)).
#: Anything beyond is a typo or a fuzzer, and would overflow a C integer downstream.
INT_MIN, INT_MAX = -(2**63), 2**64 - 1
#: Upper bound of counts and sizes (epochs, batch sizes, populations): beyond it a value is
#: a typo that would overflow a C integer in torch or allocate without end, not a setting.
MAX_COUNT = 2**31 - 1

_C = TypeVar("_C")


# --- checking one value -----------------------------------------------------------------
def check_option(name: str, value: Any, hint: Any) -> None:
    """Raise :class:`OptionError` unless ``value`` (a JSON value) fits the type ``hint``."""
    if _fits(value, hint):
        return
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and _fits(0, hint):
        raise errors.OptionError(f"option '{name}' must fit in 64 bits, got {errors.show(value)}")
    raise errors.OptionError(f"option '{name}' expects {describe(hint)}, got {errors.show(value)}")


def _fits(value: Any, hint: Any) -> bool:
    if hint is Any or hint is inspect.Parameter.empty or isinstance(hint, typing.TypeVar):
        return True
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        return any(_fits(value, arg) for arg in args)
    if origin is Literal:
        return any(type(value) is type(arg) and value == arg for arg in args)
    if hint is None or hint is type(None):
        return value is None
    if hint is bool:
        return type(value) is bool
    if hint is int:
        return _is_integer(value)
    if hint is float:
        return _is_number(value)
    if hint is str:
        return isinstance(value, str)
    container = origin if isinstance(origin, type) else hint if isinstance(hint, type) else None
    if container is None:
        return True  # Callable, Protocol, ...: nothing a JSON value can be checked against
    if issubclass(container, Mapping):
        return isinstance(value, Mapping) and _fits_mapping(value, args)
    if issubclass(container, str | bytes):
        return isinstance(value, container)
    if issubclass(container, Sequence | frozenset | set):
        return isinstance(value, list | tuple) and _fits_items(value, container, args)
    if issubclass(container, os.PathLike):
        return isinstance(value, str | os.PathLike)
    return isinstance(value, container)


def _is_integer(value: Any) -> bool:
    """An int (numpy's too, never a bool) that fits in 64 bits."""
    return (
        isinstance(value, numbers.Integral)
        and not isinstance(value, bool)
        and INT_MIN <= int(value) <= INT_MAX
    )


def _is_number(value: Any) -> bool:
    """A finite real (an int within 64 bits, a float), never a bool."""
    if isinstance(value, numbers.Integral):
        return _is_integer(value)
    return isinstance(value, numbers.Real) and math.isfinite(value)


def _fits_mapping(value: Mapping[Any, Any], args: tuple[Any, ...]) -> bool:
    key_hint, value_hint = args if len(args) == 2 else (Any, Any)
    return all(_fits(k, key_hint) and _fits(v, value_hint) for k, v in value.items())


def _fits_items(value: Sequence[Any], container: type, args: tuple[Any, ...]) -> bool:
    if issubclass(container, tuple) and args and args[-1] is not Ellipsis:
        return len(value) == len(args) and all(_fits(v, h) for v, h in zip(value, args, strict=True))
    item = args[0] if args else Any
    return all(_fits(v, item) for v in value)


# --- words for messages -------------------------------------------------------------------
_NAMES: dict[Any, tuple[str, str]] = {
    int: ("an integer", "integers"),
    float: ("a finite number", "numbers"),
    bool: ("true or false", "booleans"),
    str: ("a string", "strings"),
    type(None): ("null", "nulls"),
}


def describe(hint: Any, *, plural: bool = False) -> str:
    """``int | None`` -> "an integer or null"; ``list[float]`` -> "a list of numbers"."""
    if hint in _NAMES:
        return _NAMES[hint][plural]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        return " or ".join(describe(arg, plural=plural) for arg in args)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    container = origin if isinstance(origin, type) else hint if isinstance(hint, type) else None
    if container is not None and issubclass(container, Mapping):
        return "objects" if plural else "an object (key: value)"
    if container is not None and issubclass(container, Sequence | frozenset | set):
        if issubclass(container, tuple) and args and args[-1] is not Ellipsis:
            return f"a list of {len(args)} {describe(args[0], plural=True)}"
        inner = f" of {describe(args[0], plural=True)}" if args and args[0] is not Any else ""
        return f"lists{inner}" if plural else f"a list{inner}"
    if container is not None and issubclass(container, os.PathLike):
        return "paths" if plural else "a path"
    name = getattr(hint, "__name__", str(hint))
    return f"{name} values" if plural else f"a {name}"


def first_line(exc: BaseException) -> str:
    """The message of ``exc`` without attrs' extra exception arguments (Attribute reprs)."""
    message = exc.args[0] if exc.args and isinstance(exc.args[0], str) else str(exc)
    return message.strip().splitlines()[0] if message.strip() else type(exc).__name__


# --- checking a call ------------------------------------------------------------------------
def hints_of(target: Callable[..., Any]) -> dict[str, Any]:
    """The resolved parameter hints of a function or a class's ``__init__`` ({} if unresolvable).

    A hint that names something only imported under TYPE_CHECKING cannot be resolved;
    its options are then left unchecked rather than blocking the call.
    """
    if attrs.has(target):  # type: ignore[arg-type]  # any callable may be asked; attrs answers False
        return _field_hints(target)
    function = target.__init__ if isinstance(target, type) else target  # type: ignore[misc]
    try:
        return typing.get_type_hints(function)
    except (NameError, TypeError, AttributeError):
        return {}


def check_options(
    owner: str,
    target: Callable[..., Any],
    options: Mapping[str, Any],
    *,
    accepted: Iterable[str] | None = None,
) -> None:
    """Check that ``target(**options)`` would get only known names, each of its declared type.

    ``accepted`` limits the names a user may set (default: every parameter that can be
    passed by keyword); a target taking ``**kwargs`` accepts any name, and then only the
    declared ones are type-checked. Messages read "<owner>: option 'x' expects ...".
    """
    params = inspect.signature(target).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    if accepted is None:
        keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        accepted = [n for n, p in params.items() if p.kind in keyword]
    names = list(accepted)
    hints = hints_of(target)
    for key, value in options.items():
        if key not in names and not takes_any:
            close = errors.suggest(key, names)
            hint = f"; did you mean '{close}'?" if close else ""
            raise errors.OptionError(
                f"{owner} does not accept option {errors.show(key)}{hint} "
                f"(accepts: {', '.join(names) or 'no options'})"
            )
        if key in hints:
            try:
                check_option(key, value, hints[key])
            except errors.OptionError as exc:
                raise errors.OptionError(f"{owner}: {exc}") from None


def config_from_options(
    cls: type[_C], options: Mapping[str, Any], *, owner: str, base: _C | None = None
) -> _C:
    """``base`` (default: ``cls``'s defaults) with ``options``: a strategy's flat JSON options
    turned into its frozen attrs settings, the one way every one-shot plugin does it.

    An option ``cls`` lacks is one line listing what it accepts; a value its validators or
    converters refuse is one line ``bad <owner> option: ...``, both as :class:`OptionError`.
    """
    fields = {a.name for a in attrs.fields(cls)}  # type: ignore[arg-type]  # _C: an attrs class, by contract
    unknown = sorted(set(options) - fields)
    if unknown:
        raise errors.OptionError(
            f"{owner} does not accept option(s) {unknown} (accepts: {', '.join(sorted(fields))})"
        )
    try:
        return attrs.evolve(base, **options) if base is not None else cls(**options)  # type: ignore[misc]  # as above
    except (TypeError, ValueError) as exc:
        raise errors.OptionError(f"bad {owner} option: {first_line(exc)}") from exc


# --- attrs helpers for config classes ------------------------------------------------------
@functools.cache
def _field_hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except (NameError, TypeError, AttributeError):
        return {}


def typed(instance: object, attribute: attrs.Attribute, value: Any) -> None:
    """attrs validator: the value fits the field's declared type (bool is no int here)."""
    check_option(attribute.name, value, _field_hints(cast(type, type(instance))).get(attribute.name, Any))


def _to_float(value: Any, _instance: Any, field: attrs.Attribute) -> float:
    check_option(field.name, value, float)
    return float(value)


def _to_tuple(value: Any, instance: object, field: attrs.Attribute) -> Any:
    if value is None:
        return None
    check_option(field.name, value, _field_hints(cast(type, type(instance))).get(field.name, tuple[Any, ...]))
    return tuple(value)


def _to_dict(value: Any, _instance: Any, field: attrs.Attribute) -> dict[str, Any]:
    check_option(field.name, value, dict[str, Any])
    return dict(value)


if TYPE_CHECKING:  # mypy's attrs plugin reads a converter's first parameter, not a Converter object

    def as_float(value: float, /) -> float: ...
    def as_tuple(value: Iterable[Any] | None, /) -> Any: ...
    def as_dict(value: Mapping[str, Any], /) -> dict[str, Any]: ...
else:
    #: attrs converter: a finite number (int or float, not bool), stored as float.
    as_float = attrs.Converter(_to_float, takes_self=True, takes_field=True)
    #: attrs converter: a list or tuple of the field's declared item types, stored as a tuple.
    as_tuple = attrs.Converter(_to_tuple, takes_self=True, takes_field=True)
    #: attrs converter: an object with string keys, stored as a fresh dict.
    as_dict = attrs.Converter(_to_dict, takes_self=True, takes_field=True)


_COMPARE = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}


def in_range(
    *, ge: float | None = None, gt: float | None = None, le: float | None = None, lt: float | None = None
) -> Callable[[Any, attrs.Attribute, Any], None]:
    """attrs validator: ``value`` within the given bounds (None passes: pair with typed)."""
    bounds = [(op, b) for op, b in ((">=", ge), (">", gt), ("<=", le), ("<", lt)) if b is not None]

    def validate(_instance: Any, attribute: attrs.Attribute, value: Any) -> None:
        if value is None:
            return
        for op, bound in bounds:
            if not _COMPARE[op](value, bound):
                shown = bound if isinstance(bound, int) else f"{bound:g}"
                raise errors.OptionError(
                    f"option '{attribute.name}' must be {op} {shown}, got {errors.show(value)}"
                )

    return validate


def one_of(choices: Sequence[Any]) -> Callable[[Any, attrs.Attribute, Any], None]:
    """attrs validator: ``value`` is one of ``choices`` (of the same type: True is not 1)."""
    allowed = tuple(choices)

    def validate(_instance: Any, attribute: attrs.Attribute, value: Any) -> None:
        if not any(type(value) is type(c) and value == c for c in allowed):
            listing = ", ".join(repr(c) for c in allowed)
            raise errors.OptionError(
                f"option '{attribute.name}' must be one of {listing}, got {errors.show(value)}"
            )

    return validate

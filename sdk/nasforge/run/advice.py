"""Errors whose advice names the next step in the words of the face the caller used.

A refusal lives once, in the run, with one message; only its advice differs between a
Python caller ("continue it with nasforge.api.resume('runs/x')") and a user of the
command line ("`nasforge resume runs/x`"). :func:`advised` makes the error with the
Python words, as a library error should speak, and keeps the command line's words in
``cli_message``, which the ``nasforge`` command prints instead.
"""

from __future__ import annotations

import os
from typing import TypeVar

from nasforge.kernel.errors import NasforgeError

E = TypeVar("E", bound=NasforgeError)

#: The attribute holding the command line's wording of an error's message.
CLI_MESSAGE = "cli_message"


def advised(cls: type[E], template: str, *, python: str, cli: str) -> E:
    """``cls(template)`` with ``{advice}`` in it replaced by ``python``; its
    :data:`CLI_MESSAGE` holds ``template`` with ``cli`` there."""
    error = cls(template.format(advice=python))
    setattr(error, CLI_MESSAGE, template.format(advice=cli))
    return error


def worded(cls: type[E], template: str, **words: tuple[str, str]) -> E:
    """``cls(template)`` with each ``{name}`` in it replaced by the first of ``words[name]``
    (how a Python caller names it: ``sample``, ``whole_space=True``); its
    :data:`CLI_MESSAGE` has the second there (the command line's: ``--sample``, ``--all``).
    For a refusal that names the caller's own settings, which the two faces spell apart."""
    error = cls(template.format(**{name: python for name, (python, _) in words.items()}))
    setattr(error, CLI_MESSAGE, template.format(**{name: cli for name, (_, cli) in words.items()}))
    return error


def resume_advice(run_dir: str | os.PathLike[str]) -> tuple[str, str]:
    """(Python, command line) words for continuing the run in ``run_dir``."""
    where = os.fspath(run_dir)
    return f"nasforge.api.resume({where!r})", f"`nasforge resume {where}`"


def cli_message(error: BaseException) -> str:
    """The message the command line prints for ``error``."""
    text = getattr(error, CLI_MESSAGE, None)
    return text if isinstance(text, str) else str(error)


__all__ = ["CLI_MESSAGE", "advised", "cli_message", "resume_advice", "worded"]

"""pluggy entry point of the plugin (``nb201 = "nasforge_nb201.plugin"``).

Registration only names classes: the table stays unread and no network is built, so
discovering plugins costs nothing beyond the imports.
"""

from __future__ import annotations

from nasforge.kernel.hookspecs import hookimpl


@hookimpl
def nasforge_register_search_spaces() -> list[type]:
    from nasforge_nb201.space import NB201Space

    return [NB201Space]


@hookimpl
def nasforge_register_evaluators() -> list[type]:
    from nasforge_nb201.evaluator import NB201TableEvaluator

    return [NB201TableEvaluator]

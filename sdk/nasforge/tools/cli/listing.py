"""`nasforge plugins|spaces|metrics|strategies|evaluators|datasets|executors`: what is installed."""

from __future__ import annotations

import logging
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from nasforge.run.executors import executor_options
from nasforge.tools.cli.common_options import command_registry
from nasforge.tools.cli.error_lines import one_line
from nasforge.tools.cli.output import err_console, first_line, out_console, print_json

logger = logging.getLogger("nasforge.plugins")

JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON to stdout.")]


def plugins(ctx: typer.Context, json_out: JsonFlag = False) -> None:
    """List installed plugins, what each provides, and any that failed to load.

    A plugin fails when its module does not import, a registration hook raises, or one of
    its components has a mistake a search would only meet later (a constructor the run
    cannot call, a metric whose name is not its info.name); it then registers nothing.
    Every component can also be named ``plugin:name``; a name two plugins register is a
    clash: the bare name keeps meaning the first-party component where one is, and is
    refused (naming the qualified names) where none is. Exits 1 when any plugin failed or
    any name clashes, each on a line of its own on stderr."""
    registry = command_registry(ctx)
    rows: list[dict[str, Any]] = [
        {
            "name": p.name,
            "module": p.module,
            "distribution": p.distribution,
            "ok": p.ok,
            "error": p.error,
            "provides": list(p.provides),
        }
        for p in registry.plugins
    ]
    if json_out:
        print_json({"items": rows, "clashes": [c.to_json() for c in registry.clashes]})
        _exit_if_failed(registry.failed, registry.conflicts)
        return
    table = Table(title="nasforge plugins (entry-point group 'nasforge')")
    for col in ("plugin", "module", "status", "provides"):
        table.add_column(col)
    for r in rows:
        status = "[green]ok[/]" if r["ok"] else f"[red]failed[/]: {r['error']}"
        table.add_row(r["name"], r["module"], status, ", ".join(r["provides"]))
    out_console.print(table)
    _exit_if_failed(registry.failed, registry.conflicts)


def _exit_if_failed(failed: list[Any], conflicts: list[str]) -> None:
    """One line per failed plugin and per name clash on stderr, then exit status 1 (a CI
    step that checks the installed plugins fails)."""
    for plugin in failed:
        err_console.print(
            f"[red]plugin '{escape(plugin.name)}' failed to load:[/] {escape(one_line(plugin.error or ''))}",
            highlight=False,
            soft_wrap=True,
        )
        if plugin.trace:  # -v: the whole traceback, for the plugin's author
            logger.debug("plugin '%s' failed to load:\n%s", plugin.name, plugin.trace)
    for conflict in conflicts:
        err_console.print(f"[yellow]warning:[/] {escape(conflict)}", highlight=False, soft_wrap=True)
    if failed or conflicts:
        raise typer.Exit(1)


def _warn_failed(failed: list[Any]) -> None:
    """A listing says on stderr which plugins failed to load: their components are missing
    from it (``nasforge plugins`` shows the whole story, and exits 1)."""
    for plugin in failed:
        err_console.print(
            f"[yellow]warning:[/] plugin '{escape(plugin.name)}' failed to load, so its components "
            f"are not listed: {escape(one_line(plugin.error or ''))}",
            highlight=False,
            soft_wrap=True,
        )


def _describe(kind: str, name: str, component: Any) -> dict[str, Any]:
    own = getattr(component, "description", None)  # a dataset source's own words, not its class's
    row: dict[str, Any] = {
        "name": name,
        "description": first_line(own if isinstance(own, str) and own else component.__doc__ or ""),
    }
    if kind == "space":
        row["capabilities"] = sorted(component.capabilities)
        row["version"] = component.version
    elif kind == "strategy":
        row["requires"] = sorted(getattr(component, "requires", ()))
        # whether it takes several --objective (and returns a Pareto front)
        row["multi_objective"] = bool(getattr(component, "multi_objective", False))
    elif kind == "metric":
        info = component.info
        row.update(
            higher_is_better=info.higher_is_better,
            needs_data=info.needs_data,
            needs_labels=info.needs_labels,
            description=info.description or row["description"],
        )
    elif kind == "executor":
        flags = getattr(component, "flags", {})
        row["options"] = [
            f"{name} ({', '.join(f for f, o in flags.items() if o == name)})"
            if name in flags.values()
            else name
            for name in executor_options(component)
        ]
    elif kind == "evaluator":
        row["spaces"] = sorted(component.spaces) or ["any"]
        row["simulated_clock"] = component.simulated
    row["module"] = getattr(component, "__module__", type(component).__module__)
    return row


def _lister(kind: str, title: str):  # noqa: ANN202 - returns a typer command
    def command(ctx: typer.Context, json_out: JsonFlag = False) -> None:
        registry = command_registry(ctx)
        rows = [_describe(kind, name, c) for name, c in registry.items(kind)]
        _warn_failed(registry.failed)
        if json_out:
            print_json(rows)
            return
        table = Table(title=title)
        keys = [k for k in rows[0] if k not in ("module", "description")] if rows else ["name"]
        keys.append("description")  # last, so the narrow columns stay on one line
        for k in keys:
            table.add_column(
                k.replace("_", " "), no_wrap=k == "name", ratio=3 if k == "description" else None
            )
        for r in rows:
            table.add_row(*[", ".join(v) if isinstance(v, list) else str(v) for v in (r[k] for k in keys)])
        out_console.print(table)

    command.__doc__ = f"List the registered {title.lower()}."
    return command


spaces = _lister("space", "Search spaces")
metrics = _lister("metric", "Metrics")
strategies = _lister("strategy", "Strategies")
evaluators = _lister("evaluator", "Evaluators")
datasets = _lister("dataset", "Datasets")
executors = _lister("executor", "Executors")

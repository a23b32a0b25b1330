"""``nasforge insight GENOTYPE... --dataset digits --out report/``: the chapter-4 diagnostics
of a set of genotypes, side by side on one static HTML page.

Any genotype of any registered space that can build it (the space is found by parsing;
``--space`` names it), a published cell's name (``DARTS_V2``, ``NASNet``, ...), or a cell in
its authors' ``Genotype(...)`` text (cell diagnostics only). ``--variants K`` adds the
thesis's connection variants 1..K of the first genotype, the comparison chapter 4 makes;
``--op-variants K`` its operation variants 1..K (same topology, ops redrawn).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from nasforge.kernel.errors import NasforgeError
from nasforge.run import defaults
from nasforge.tools.cli.common_options import Device, Quiet, command_registry
from nasforge.tools.cli.options import parse_options
from nasforge.tools.cli.output import out_console, print_json


def _seeds(text: str) -> tuple[int, ...]:
    try:
        seeds = tuple(int(s) for s in text.split(",") if s.strip())
    except ValueError:
        raise NasforgeError(f"--seeds must be comma-separated integers, got {text!r}") from None
    if not seeds:
        raise NasforgeError("--seeds needs at least one seed")
    return seeds


def insight(
    ctx: typer.Context,
    genotypes: Annotated[
        list[str],
        typer.Argument(help="Genotypes (any space's text form) or published cell names, e.g. DARTS_V2."),
    ],
    space: Annotated[
        str | None, typer.Option(help="Space of every genotype (default: the one that parses it).")
    ] = None,
    dataset: Annotated[str, typer.Option(help="Dataset of the probes (see `nasforge datasets`).")] = (
        defaults.TRAINING_DATASET
    ),
    out: Annotated[Path, typer.Option(help="Directory for index.html, figures/ and report.json.")] = Path(
        "insight"
    ),
    label: Annotated[
        list[str] | None, typer.Option("--label", help="Name of each genotype on the page, in order.")
    ] = None,
    variants: Annotated[
        int, typer.Option(min=0, help="Add the thesis's connection variants 1..K of the first genotype.")
    ] = 0,
    op_variants: Annotated[
        int,
        typer.Option(
            min=0, help="Add the thesis's operation variants 1..K of the first genotype (ops redrawn)."
        ),
    ] = 0,
    extremes: Annotated[
        bool,
        typer.Option(help="With --variants K: add only the widest-shallowest and narrowest-deepest of them."),
    ] = False,
    seeds: Annotated[str, typer.Option(help="Comma-separated seeds of the convergence probe.")] = "0",
    epochs: Annotated[int, typer.Option(min=1, help="Epochs of the convergence probe.")] = 8,
    lr: Annotated[float, typer.Option(min=0.0, help="Initial learning rate (cosine to 0).")] = 0.025,
    batch_size: Annotated[int, typer.Option(min=1, help="Batch size of the probe.")] = 64,
    limit: Annotated[
        int | None, typer.Option(min=2, help="Use at most this many samples of the dataset.")
    ] = None,
    samples: Annotated[
        int, typer.Option(min=2, help="Held-out examples for gradient variance and the landscape.")
    ] = 256,
    grid: Annotated[int, typer.Option(min=2, help="Landscape grid points per direction.")] = 11,
    build_option: Annotated[
        list[str] | None,
        typer.Option(
            "--build-option",
            help="Network option key=value for every genotype (C=8), or space:key=value for one "
            "space's genotypes alone (nb201:N=1, darts:layers=5).",
        ),
    ] = None,
    device: Device = "cpu",
    json_out: Annotated[bool, typer.Option("--json", help="Print the report's numbers as JSON.")] = False,
    quiet: Quiet = False,
) -> None:
    """Why did the search choose this? Cell width/depth, gradient variance, loss landscape and
    convergence of genotypes, side by side on one HTML page (Shu's thesis, ch. 4).

    Example: nasforge insight DARTS_V2 --variants 4 --build-option C=8 --build-option layers=5
    --build-option auxiliary=false --epochs 8 --out report/
    """
    # torch and the probes load here, not for --help
    from nasforge.kernel.datasets import load_dataset
    from nasforge.kernel.device import resolve_device
    from nasforge_insight.convergence import ProbeSettings
    from nasforge_insight.report import InsightSettings, run_insight
    from nasforge_insight.subjects import (
        extreme_variants,
        labelled,
        resolve,
        with_op_variants,
        with_variants,
    )

    registry = command_registry(ctx)
    data = load_dataset(dataset, registry=registry)
    try:
        settings = InsightSettings(
            probe=ProbeSettings(epochs=epochs, batch_size=batch_size, lr=lr, limit=limit),
            seeds=_seeds(seeds),
            build=parse_options(build_option),
            samples=samples,
            landscape_steps=grid,
            device=str(resolve_device(device)),
        )
    except (TypeError, ValueError) as exc:
        raise NasforgeError(f"insight: {exc}") from None
    subjects = [
        resolve(text, registry, space=space, label=name) for text, name in labelled(genotypes, label or [])
    ]
    if extremes and not variants:
        raise NasforgeError("--extremes chooses among --variants K: give K >= 2")
    first = subjects[0]
    if variants:
        subjects += (extreme_variants if extremes else with_variants)(first, variants)
    subjects += with_op_variants(first, op_variants)
    if out.exists() and not out.is_dir():
        raise NasforgeError(f"--out {out} is a file, not a directory")
    report = run_insight(subjects, data, settings, out)
    if json_out:
        print_json(report.to_json())
        return
    table = Table(title=f"nasforge insight on {data.name}")
    for column in ("genotype", "space", "width, depth", "train loss (mean)", "grad var (trained)"):
        table.add_column(column)
    for r in report.results:
        table.add_row(
            r.subject.label,
            r.subject.space_name,
            r.subject.shape_label or "-",
            "-" if r.summary is None else f"{r.summary.auc:.4f}",
            "-" if r.variance_trained is None else f"{r.variance_trained.value:.4g}",
        )
    out_console.print(table)
    for trend in report.trends:
        out_console.print(trend.describe(), markup=False)
    for caution in report.cautions:
        out_console.print(f"[yellow]caution:[/] {escape(caution)}")
    out_console.print(f"report: {report.html}")

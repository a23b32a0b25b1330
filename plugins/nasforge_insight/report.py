"""``nasforge insight``'s work: every diagnostic for a set of genotypes, and the page.

For each subject (:mod:`nasforge_insight.subjects`): the width and depth of its cells and
where they fall in their space's census (:mod:`enumeration`); and, when its space can
build it, the convergence probe over the seeds (:mod:`convergence`), the gradient
variance at initialisation and after the probe's training (:mod:`grad_variance`), and the
loss landscape around the trained weights (:mod:`landscape`), all on held-out examples
of one dataset. The result is ``index.html`` (static: every figure embedded as a PNG data
URI, no server, no network), the PNGs beside it in ``figures/``, and ``report.json``.
"""

from __future__ import annotations

import html
import json
import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from nasforge.kernel.converters import to_dict, to_tuple
from nasforge.kernel.datasets import TensorData, network_options
from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.files import atomic_write_text
from nasforge.kernel.network_factory import build_network
from nasforge.kernel.search_space import SUPERNET
from nasforge.kernel.seeding import LocalRandomness
from nasforge.tools.cli.output import json_document
from nasforge.tools.pages import embedded_png, page
from nasforge_insight import figures
from nasforge_insight.cautions import at_chance, parameter_spread
from nasforge_insight.cell_graph import CellShape
from nasforge_insight.convergence import Curve, ProbeSettings, Summary, split, summarise, train_curve
from nasforge_insight.enumeration import Census, census
from nasforge_insight.grad_variance import GradVariance, per_sample
from nasforge_insight.landscape import Surface, surface
from nasforge_insight.space_cells import topologies
from nasforge_insight.subjects import Subject
from nasforge_insight.trend import Trend, width_trends

log = logging.getLogger("nasforge.insight")

#: Parameters past which the probes are slow on a CPU (a warning, not a refusal).
LARGE = 2_000_000


@attrs.frozen
class InsightSettings:
    """What the probes run with. ``build`` are network options: ``key`` for every genotype,
    ``space:key`` for the genotypes of that space alone (an nb201 cell and a DARTS cell take
    different options, so one page can hold both: ``nb201:N=1``, ``darts:layers=5``)."""

    probe: ProbeSettings = ProbeSettings()
    seeds: tuple[int, ...] = attrs.field(default=(0,), converter=to_tuple)
    build: dict[str, Any] = attrs.field(factory=dict, converter=to_dict)
    samples: int = 256
    landscape_steps: int = 11
    landscape_span: float = 1.0
    device: str = "cpu"

    def __attrs_post_init__(self) -> None:
        if not self.seeds:
            raise ValueError("at least one seed")
        if self.samples < 2 or self.landscape_steps < 2 or self.landscape_span <= 0:
            raise ValueError("samples >= 2, landscape_steps >= 2 and landscape_span > 0 are needed")

    def to_json(self) -> dict[str, Any]:
        return {
            "probe": self.probe.to_json(),
            "seeds": list(self.seeds),
            "build": dict(self.build),
            "samples": self.samples,
            "landscape_steps": self.landscape_steps,
            "landscape_span": self.landscape_span,
            "device": self.device,
        }


@attrs.frozen
class CellRow:
    name: str
    shape: CellShape
    tail: float | None  # share of the space's topologies at least as wide and as shallow


@attrs.frozen
class SubjectResult:
    subject: Subject
    cells: tuple[CellRow, ...]
    parameters: int | None = None
    curves: tuple[Curve, ...] = ()
    summary: Summary | None = None
    variance_init: GradVariance | None = None
    variance_trained: GradVariance | None = None
    landscape: Surface | None = None
    landscape_png: Path | None = None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        s = self.subject
        return {
            "label": s.label,
            "space": s.space.name if s.space is not None else None,
            "genotype": s.text,
            "cells": [{"cell": c.name, **c.shape.to_json(), "tail_share": c.tail} for c in self.cells],
            "parameters": self.parameters,
            "convergence": None if self.summary is None else self.summary.to_json(),
            "curves": [c.to_json() for c in self.curves],
            "gradient_variance_init": None if self.variance_init is None else self.variance_init.to_json(),
            "gradient_variance_trained": (
                None if self.variance_trained is None else self.variance_trained.to_json()
            ),
            "landscape": None if self.landscape is None else self.landscape.to_json(),
            "note": self.note,
        }


@attrs.frozen
class Report:
    dataset: str
    settings: InsightSettings
    results: tuple[SubjectResult, ...]
    convergence_png: Path | None
    variance_png: Path | None
    html: Path
    json: Path
    #: Width and depth against convergence over every trained genotype (:mod:`trend`).
    trends: tuple[Trend, ...] = ()
    #: What the page warns about first (:mod:`cautions`).
    cautions: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "settings": self.settings.to_json(),
            "trends": [t.to_json() for t in self.trends],
            "cautions": list(self.cautions),
            "html": str(self.html),
            "json": str(self.json),
            "figures": [str(p) for p in self.figure_paths],
            "genotypes": [r.to_json() for r in self.results],
        }

    @property
    def figure_paths(self) -> list[Path]:
        paths = [r.landscape_png for r in self.results] + [self.convergence_png, self.variance_png]
        return [p for p in paths if p is not None]


_CENSUS: dict[tuple[type, str, str], Census] = {}


def _census_of(subject: Subject, cell_name: str) -> Census | None:
    if subject.space is None or SUPERNET not in subject.space.capabilities:
        return None  # no topology to count (cell text only, or a space built without a supernet)
    key = (type(subject.space), subject.space.version, cell_name)
    if key not in _CENSUS:
        found = [t for t in topologies(subject.space) if t.name == cell_name]
        _CENSUS[key] = census(found[0])
    return _CENSUS[key]


def _on(data: TensorData, device: str) -> TensorData:
    return (
        data
        if device == "cpu"
        else TensorData(data.name, data.x.to(device), data.y.to(device), data.num_classes)
    )


def build_options(build: dict[str, Any], space_name: str) -> dict[str, Any]:
    """The options of ``build`` for a genotype of ``space_name``: the unqualified ones, then
    those qualified ``space_name:key`` (which win over an unqualified key of the same name)."""
    shared: dict[str, Any] = {}
    own: dict[str, Any] = {}
    for key, value in build.items():
        name, sep, option = key.partition(":")
        if not sep:
            shared[key] = value
        elif name == space_name:
            own[option] = value
    return {**shared, **own}


def _check_qualified(build: dict[str, Any], subjects: Sequence[Subject]) -> None:
    """A ``space:key`` option that no genotype here belongs to is a typo: one line, now."""
    built = {s.space_name for s in subjects if s.space is not None}
    for key in build:
        name, sep, option = key.partition(":")
        if sep and (not name or not option):
            raise NasforgeError(f"--build-option {key!r}: write key=value or space:key=value")
        if sep and name not in built:
            raise NasforgeError(
                f"--build-option {key!r} names space '{name}', but no genotype here is built by it"
                f" (these are: {', '.join(sorted(built)) or 'none'})"
            )


def _options(data: TensorData, settings: InsightSettings, subject: Subject) -> dict[str, Any]:
    return {
        **network_options(data.input_shape, data.num_classes),
        **build_options(settings.build, subject.space_name),
    }


def _slug(text: str, index: int) -> str:
    return f"{index:02d}-" + (re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "genotype")


def _probe(subject: Subject, data: TensorData, settings: InsightSettings) -> SubjectResult:
    rows = tuple(
        CellRow(
            c.name, c.shape(), None if (cen := _census_of(subject, c.name)) is None else cen.tail(c.shape())
        )
        for c in subject.cells
    )
    if subject.space is None or subject.genotype is None:
        return SubjectResult(
            subject, rows, note="no registered space builds this cell: cell diagnostics only"
        )
    options = _options(data, settings, subject)
    curves: list[Curve] = []
    first = None
    var_init = var_trained = None
    for seed in settings.seeds:
        train, test = (_on(part, settings.device) for part in split(data, settings.probe, seed))
        randomness = LocalRandomness(seed)
        with randomness:
            model = build_network(subject.space, subject.genotype, options)
        model = model.to(settings.device)
        held_x, held_y = test.x[: settings.samples], test.y[: settings.samples]
        if first is None:
            size = sum(p.numel() for p in model.parameters())
            if size > LARGE:
                log.warning(
                    "insight: '%s' has %.1fM parameters: the probes will be slow on a CPU "
                    "(smaller networks: --build-option, e.g. C=8)",
                    subject.label,
                    size / 1e6,
                )
            var_init = per_sample(model, held_x, held_y)
        log.info("insight: training '%s' (seed %d, %d epochs)", subject.label, seed, settings.probe.epochs)
        curves.append(
            train_curve(
                model, train, test, settings.probe, seed=seed, label=subject.label, randomness=randomness
            )
        )
        if first is None:
            first = (model, held_x, held_y)
    assert first is not None
    model, held_x, held_y = first
    var_trained = per_sample(model, held_x, held_y)
    log.info("insight: loss landscape of '%s'", subject.label)
    land = surface(model, held_x, held_y, steps=settings.landscape_steps, span=settings.landscape_span)
    return SubjectResult(
        subject,
        rows,
        parameters=sum(p.numel() for p in model.parameters()),
        curves=tuple(curves),
        summary=summarise(subject.label, curves),
        variance_init=var_init,
        variance_trained=var_trained,
        landscape=land,
    )


def run_insight(
    subjects: Sequence[Subject], data: TensorData, settings: InsightSettings, out: Path
) -> Report:
    """Every diagnostic of ``subjects`` on ``data``; the page, figures and JSON under ``out``."""
    figures.require_plots()
    for seed in settings.seeds:  # too little data is one line now, not after the first genotype trained
        split(data, settings.probe, seed)
    _check_qualified(settings.build, subjects)
    for s in subjects:  # a network option a space rejects is one line now, not after hours of training
        if s.space is not None and s.genotype is not None:
            build_network(s.space, s.genotype, _options(data, settings, s))
    figures_dir = out / "figures"
    results = tuple(_probe(s, data, settings) for s in subjects)
    # one colour scale for every landscape, so the pictures compare side by side
    scale = figures.log_range([v for r in results if r.landscape for row in r.landscape.losses for v in row])
    results = tuple(
        r
        if r.landscape is None
        else attrs.evolve(
            r,
            landscape_png=figures.contour_figure(
                r.landscape,
                f"{r.subject.label}: {r.subject.shape_label}",
                figures_dir / f"{_slug(r.subject.label, i)}-landscape.png",
                scale=scale,
            ),
        )
        for i, r in enumerate(results, start=1)
    )
    trained = [r for r in results if r.curves]
    conv_png = var_png = None
    if trained:
        conv_png = figures.convergence_figure(
            {r.subject.label: r.curves for r in trained}, figures_dir / "convergence.png"
        )
        var_png = figures.variance_figure(
            {r.subject.label: (r.variance_init.value, r.variance_trained.value) for r in trained},  # type: ignore[union-attr]
            figures_dir / "gradient-variance.png",
        )
    cautions = tuple(at_chance(results, data.num_classes) + parameter_spread(results))
    for caution in cautions:
        log.warning("insight: %s", caution)
    trends = tuple(
        width_trends(results, lambda r: (r.subject.cells[0].shape().width, r.subject.cells[0].shape().depth))
    )
    report = Report(
        data.name,
        settings,
        results,
        conv_png,
        var_png,
        out / "index.html",
        out / "report.json",
        trends,
        cautions,
    )
    document = json_document(report.to_json(), command="insight")
    atomic_write_text(report.json, json.dumps(document, indent=2, sort_keys=True) + "\n")
    atomic_write_text(report.html, render_html(report))
    return report


# --- the page ---------------------------------------------------------------------------

_STYLE = """
p.lead { max-width: 70em; }
table.side { border-collapse: collapse; margin: 16px 0; }
table.side th, table.side td {
  border: 1px solid #ccc; padding: 6px 8px; vertical-align: top; font-size: 13px;
}
table.side th { background: #f3f3f3; text-align: left; }
td.rowname { font-weight: 600; background: #fafafa; white-space: nowrap; }
code.genotype { font-size: 10px; word-break: break-all; display: block; max-width: 30em; }
section.wide img.figure { max-width: 960px; }
#render-check { color: #666; font-size: 12px; }
p.caution { background: #fff4e5; border-left: 4px solid #e69500; padding: 6px 10px; max-width: 70em; }
"""

_CHECK = """
window.addEventListener('load', function () {
  var imgs = document.querySelectorAll('img.figure');
  var ok = 0;
  imgs.forEach(function (img) { if (img.complete && img.naturalWidth > 0) { ok += 1; } });
  var el = document.getElementById('render-check');
  el.textContent = 'figures rendered: ' + ok + ' of ' + imgs.length;
  el.setAttribute('data-rendered', String(ok));
  el.setAttribute('data-total', String(imgs.length));
});
"""


def _img(path: Path | None, alt: str) -> str:
    if path is None:
        return "<em>none</em>"
    return embedded_png(path.read_bytes(), alt)


def _num(value: float | None, fmt: str = ".4g") -> str:
    return "&ndash;" if value is None else format(value, fmt)


def _row(name: str, cells: Sequence[str]) -> str:
    return (
        f'<tr><td class="rowname">{html.escape(name)}</td>'
        + "".join(f"<td>{c}</td>" for c in cells)
        + "</tr>"
    )


def _cells_html(r: SubjectResult) -> str:
    parts = []
    for c in r.cells:
        tail = (
            ""
            if c.tail is None
            else f" &middot; {100 * c.tail:.1f}% of its space's cells are as wide and as shallow"
        )
        parts.append(f"{html.escape(c.name)}: <b>{html.escape(c.shape.label())}</b>{tail}")
    return "<br>".join(parts) or "<em>no cell graph</em>"


def render_html(report: Report) -> str:
    rs = report.results
    head = "".join(f"<th>{html.escape(r.subject.label)}</th>" for r in rs)
    rows = [
        _row("space", [html.escape(r.subject.space_name) for r in rs]),
        _row("genotype", [f'<code class="genotype">{html.escape(r.subject.text)}</code>' for r in rs]),
        _row("cell width, depth", [_cells_html(r) for r in rs]),
        _row("parameters", [_num(r.parameters, ",d") if r.parameters is not None else "&ndash;" for r in rs]),
        _row(
            "training loss, mean over epochs (± sd over seeds)",
            [
                "&ndash;" if r.summary is None else f"{r.summary.auc:.4f} &plusmn; {r.summary.auc_std:.4f}"
                for r in rs
            ],
        ),
        _row(
            "training loss, epoch 1", [_num(None if r.summary is None else r.summary.first_epoch) for r in rs]
        ),
        _row(
            "held-out loss, mean over epochs (± sd over seeds)",
            [
                "&ndash;"
                if r.summary is None
                else f"{r.summary.held_out_auc:.4f} &plusmn; {r.summary.held_out_auc_std:.4f}"
                for r in rs
            ],
        ),
        _row(
            "held-out accuracy",
            [_num(None if r.summary is None else 100 * r.summary.test_accuracy, ".1f") for r in rs],
        ),
        _row(
            "gradient variance, init → trained",
            [
                "&ndash;"
                if r.variance_init is None or r.variance_trained is None
                else f"{r.variance_init.value:.4g} &rarr; {r.variance_trained.value:.4g}"
                for r in rs
            ],
        ),
        _row(
            "landscape: mean rise over the grid",
            [_num(None if r.landscape is None else r.landscape.sharpness) for r in rs],
        ),
        _row(
            "loss landscape",
            [
                _img(r.landscape_png, f"loss landscape of {r.subject.label}")
                if r.landscape_png
                else html.escape(r.note)
                for r in rs
            ],
        ),
    ]
    p = report.settings.probe
    n = report.settings.landscape_steps
    lead = (
        f"Dataset <b>{html.escape(report.dataset)}</b>; convergence probe: {p.epochs} epochs of SGD "
        f"(lr {p.lr:g}, momentum {p.momentum:g}, weight decay {p.weight_decay:g}, cosine, "
        f"clip {p.grad_clip:g}, batch {p.batch_size}), seeds {', '.join(map(str, report.settings.seeds))}; "
        f"gradient variance and landscape on {report.settings.samples} held-out examples, a {n}&times;{n} "
        "grid of filter-normalised directions. Chapter 4 of Shu (2022): "
        "search prefers wide, shallow cells because they converge faster (smoother landscape, smaller "
        "gradient variance), not because they generalise better."
    )
    wide = [
        f'<section class="wide"><h2>{title}</h2>{_img(path, title.lower())}</section>'
        for title, path in (
            ("Convergence", report.convergence_png),
            ("Gradient variance", report.variance_png),
        )
        if path is not None
    ]
    cautions = "".join(f'<p class="caution">&#9888; {html.escape(c)}</p>' for c in report.cautions)
    trends = ""
    if report.trends:
        items = "".join(f"<li>{html.escape(t.describe())}</li>" for t in report.trends)
        trends = (
            "<h2>Width, depth and convergence over every trained genotype</h2>"
            f"<ul>{items}</ul><p>Rank correlations with a bootstrap 95 % interval over genotypes; "
            "wider converging faster is a negative correlation with the mean loss.</p>"
        )
    body = (
        "<h1>Why did the search choose this? Cell diagnostics</h1>" + cautions + f'<p class="lead">{lead}</p>'
        f'<table class="side"><thead><tr><th></th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
        + trends
        + "".join(wide)
        + '<p id="render-check">figures rendered: not checked (scripts off)</p>'
    )
    return page("nasforge insight", body, style=_STYLE, script=_CHECK)

"""The report page: one static HTML file (:mod:`nasforge.tools.pages`), figures embedded,
a table that sorts itself. Sorting is a few lines of vanilla JavaScript on
the table's own cells: a numeric column sorts by the exact value kept in ``data-value``
(NaN, for a failed trial, always last), a text column by its text; a second click
reverses the order, and the header's ``aria-sort`` says which way it is sorted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs

from nasforge.run.trial_failures import trial_failures
from nasforge.tools.pages import embedded_png, escape, page
from nasforge.tools.report.run_view import RunView, value


@attrs.frozen
class Figure:
    """One picture of the page: a heading, PNG bytes (or why there is none), a caption."""

    title: str
    png: bytes | None
    caption: str = ""
    missing: str = ""


_STYLE = """
body { max-width: 1500px; }
dl.facts { display: grid; grid-template-columns: max-content auto; gap: 2px 16px; font-size: 13px; }
dl.facts dt { font-weight: 600; color: #444; }
dl.facts dd { margin: 0; }
p.missing { color: #8a5a00; background: #fff7e6; padding: 6px 10px; border-left: 3px solid #e0a030; }
p.stopped { background: #eef6ff; padding: 6px 10px; border-left: 3px solid #3b82c4; }
table.trials { border-collapse: collapse; font-size: 12px; }
table.trials th, table.trials td { border: 1px solid #ddd; padding: 3px 6px; }
table.trials th { background: #f3f3f3; cursor: pointer; user-select: none; position: sticky; top: 0; }
table.trials th[aria-sort="ascending"]::after { content: " \\25B2"; }
table.trials th[aria-sort="descending"]::after { content: " \\25BC"; }
table.trials td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.trials td.genotype { font-family: monospace; font-size: 11px; max-width: 46em; word-break: break-all; }
tr.best td { background: #e8f6e8; font-weight: 600; }
tr.front td { background: #f1f8f1; }
tr.failed td, tr.infeasible td { color: #999; }
tr.stopped td { color: #3b6a96; font-style: italic; }
"""

_SORT = """
(function () {
  function key(cell, numeric) {
    if (!numeric) { return cell.textContent.trim().toLowerCase(); }
    var v = parseFloat(cell.getAttribute('data-value'));
    return isNaN(v) ? null : v;
  }
  function sortBy(table, th) {
    var col = Array.prototype.indexOf.call(th.parentNode.children, th);
    var numeric = th.getAttribute('data-type') === 'number';
    var ascending = th.getAttribute('aria-sort') !== 'ascending';
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (row, i) { row._order = i; });
    rows.sort(function (a, b) {
      var x = key(a.cells[col], numeric), y = key(b.cells[col], numeric);
      if (x === y) { return a._order - b._order; }
      if (x === null) { return 1; }
      if (y === null) { return -1; }
      var c = x < y ? -1 : 1;
      return ascending ? c : -c;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(th.parentNode.children, function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    table.querySelectorAll('thead th').forEach(function (th) {
      th.addEventListener('click', function () { sortBy(table, th); });
    });
  });
})();
"""


_e = escape


def _num(v: float) -> str:
    if math.isnan(v):
        return "&ndash;"
    return f"{v:,.0f}" if abs(v) >= 1e5 else f"{v:.5g}"


def _figure(fig: Figure) -> str:
    head = f"<h2>{_e(fig.title)}</h2>"
    if fig.png is None:
        return head + f'<p class="missing">{_e(fig.missing)}</p>'
    caption = f"<p class='lead'>{_e(fig.caption)}</p>" if fig.caption else ""
    return head + caption + embedded_png(fig.png, fig.title)


def _facts(view: RunView) -> str:
    spec = view.spec
    budget = spec.get("budget") or {}
    shown_budget = ", ".join(f"{k} {v:g}" for k, v in budget.items() if isinstance(v, int | float)) or "-"
    best = view.best
    facts = [
        ("run", _e(view.run_dir)),
        ("space", _e(spec.get("space", "?"))),
        ("strategy", _e(spec.get("strategy", "?"))),
        ("evaluator", _e(spec.get("evaluator") or "-")),
        (
            "objectives" if view.unit == "trial" else "plotted",
            _e(", ".join(view.goal.objective_texts())),
        ),
        ("constraints", _e(", ".join(view.goal.constraint_texts()) or "none")),
        ("budget", _e(shown_budget)),
        ("stop rules", _e(", ".join(spec.get("stop") or []) or "none")),
        ("seed", _e(spec.get("seed", "?"))),
        (
            f"{view.unit}s",
            f"{len(view.rows)} ({'finished' if view.finished else 'unfinished: no end record yet'})",
        ),
        ("created", _e(view.header.get("created", "?"))),
    ]
    if view.unit != "trial" and view.chosen is not None:  # a one-shot run derives its choice at the end
        facts.append(("chosen", f"<code>{_e(view.chosen_text)}</code>"))
    elif best is not None:
        shown = ", ".join(f"{c} {_num(value(best, c))}" for c in view.columns[:4])
        facts.append(
            ("best", f"trial {best.index}: {_e(shown)}<br><code>{_e(_text_of(view, best.index))}</code>")
        )
    if view.multi_fidelity:
        spent = [view.spent_of(t) for t in view.trials]
        full = sum(1 for t in view.trials if view.at_full(t))
        stopped = sum(1 for r in view.rows if r.status == "stopped")
        facts.append(
            (
                f"{view.fidelity} spent",
                f"{sum(s for s in spent if s is not None)} in all; full budget {view.full_fidelity} a "
                f"trial, reached by {full} trials" + (f"; {stopped} stopped early" if stopped else ""),
            )
        )
    if view.goal.multi_objective:
        facts.append(("Pareto front", f"{len(view.front)} architectures"))
    texts = {row.trial.genotype: row.text for row in view.rows}
    failures = trial_failures(view.trials, texts.__getitem__)
    if failures is not None:
        facts.append(
            (
                f"failed {view.unit}s",
                f"{failures.count} of {failures.of}; the first, {view.unit} {failures.trial}: "
                f"{_e(failures.error)}<br><code>{_e(failures.genotype)}</code>",
            )
        )
    return '<dl class="facts">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts) + "</dl>"


def _text_of(view: RunView, index: int) -> str:
    return view.rows[index].text


def _table(view: RunView) -> str:
    heads = [("#", "number"), ("genotype", "text")]
    heads += [(c, "number") for c in view.columns]
    if view.multi_fidelity:
        heads += [(str(view.fidelity), "number"), (f"{view.fidelity} trained", "number")]
    heads += [("cost (s)", "number"), ("wall (s)", "number"), ("status", "text")]
    thead = "".join(
        f'<th data-type="{kind}" title="sort by {_e(name)}">{_e(name)}</th>' for name, kind in heads
    )
    body = []
    for row in view.rows:
        t = row.trial
        cells = [f'<td class="num" data-value="{t.index}">{t.index}</td>']
        cells.append(f'<td class="genotype">{_e(row.text)}</td>')
        for c in view.columns:
            v = value(t, c)
            cells.append(f'<td class="num" data-value="{"NaN" if math.isnan(v) else repr(v)}">{_num(v)}</td>')
        if view.multi_fidelity:
            for b in (view.budget_of(t), view.spent_of(t)):
                shown = math.nan if b is None else float(b)
                cells.append(f'<td class="num" data-value="{"NaN" if b is None else b}">{_num(shown)}</td>')
        for v in (t.result.cost, t.wall_seconds):
            cells.append(f'<td class="num" data-value="{v!r}">{_num(v)}</td>')
        title = f' title="{_e(t.result.error)}"' if t.result.error else ""
        cells.append(f"<td{title}>{_e(row.status)}</td>")
        body.append(f'<tr class="{row.status}">' + "".join(cells) + "</tr>")
    return (
        '<table class="trials sortable" id="trials"><thead><tr>'
        + thead
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table>"
    )


def render(view: RunView, figures: Sequence[Figure]) -> str:
    """The whole page as text."""
    title = f"nasforge report: {view.spec.get('strategy', '?')} on {view.spec.get('space', '?')}"
    stopped = ""
    if view.stopped:
        stopped = (
            f'<p class="stopped">Stopped early after trial {_e(view.stopped.get("trial"))} '
            f"by <b>{_e(view.stopped.get('rule'))}</b>: {_e(view.stopped.get('reason'))}</p>"
        )
    body = (
        f"<h1>{_e(title)}</h1>"
        "<p class='lead'>A static page written by <code>nasforge report</code> from the run's journal.</p>"
        + stopped
        + _facts(view)
        + "".join(_figure(f) for f in figures)
        + f"<h2>Trials</h2><p class='lead'>{len(view.rows)} {view.unit}s; click a column header to sort "
        "(again to reverse).</p>" + _table(view)
    )
    return page(title, body, style=_STYLE, script=_SORT)

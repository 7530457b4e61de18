"""Render ``matrix.json`` as one self-contained HTML page: a grid of cases x cells.

No network and no external assets: the CSS is inline and there is no JavaScript. Every
non-pass square is a ``<details>`` element, so the error excerpt, the known failure, its
upstream link(s) and its fix are one click away, offline. Every string from the report is
escaped; only ``http(s)`` upstream links become ``<a href>``.

    from jaxcompat.report import html
    page = html.render(json.loads(Path("reports/matrix.json").read_text()))  # report.emit writes matrix.html
"""

from __future__ import annotations

import html as _html
from pathlib import Path

from jaxcompat._util.text import short_case
from jaxcompat.knowledge.outcomes import cell_label
from jaxcompat.model.outcomes import CaseResult, CellResult, parse_cells
from jaxcompat.model.vocab import CellOutcome, CellStatus, EnvironmentKind, Outcome, UserTestStatus, Verdict
from jaxcompat.plugin.backends import describe_device
from jaxcompat.report.reports import case_ids, overview, summary

# Versions shown in the column header, with their short names.
KEY_VERSIONS = {"jax": "jax", "jaxlib": "jaxlib", "equinox": "eqx", "diffrax": "dfx",
                "optimistix": "optx", "lineax": "lx", "chex": "chex", "numpy": "np"}



def esc(value) -> str:
    """Escape any value for HTML text and attribute values (quotes included)."""
    return _html.escape("" if value is None else str(value), quote=True)


def _wbr(text, after: str = "_") -> str:
    """Escaped text with line-break opportunities after ``after`` (long identifiers wrap cleanly)."""
    return esc(text).replace(after, after + "<wbr>")


def _token(value) -> str:
    """A CSS-class-safe token: letters, digits and dashes only."""
    return "".join(ch if ch.isalnum() or ch == "-" else "-" for ch in str(value or "none")).lower()


def _links(urls) -> str:
    out = []
    for url in urls or []:
        url = str(url)
        if url.lower().startswith(("https://", "http://")):
            out.append(f'<a href="{esc(url)}" rel="noopener noreferrer">{esc(url)}</a>')
        else:  # never turn anything else (javascript:, data:, relative paths) into a link
            out.append(f"<span>{esc(url)}</span>")
    return "<br>".join(out)


def _pre(text) -> str:
    return f'<pre class="msg">{esc(text)}</pre>' if text else ""


def _panel_rows(rows: list[tuple[str, str]]) -> str:
    """Definition-list rows; values are already HTML."""
    return "<dl>" + "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in rows if v) + "</dl>"


def _square(c: CellResult, r: CaseResult | None, case: str, side: str) -> str:
    cell_id = esc(c.id)
    if r is None:
        return (f'<td class="sq o-absent" data-outcome="absent" data-cell="{cell_id}" '
                f'data-case="{esc(case)}" title="not in this cell\'s results">–</td>')
    outcome = r.outcome or "?"
    label = Outcome(outcome).label if outcome in set(Outcome) else outcome
    attrs = (f'class="sq o-{_token(outcome)}" data-outcome="{esc(outcome)}" data-cell="{cell_id}" '
             f'data-case="{esc(case)}"')
    tip = f"{short_case(case)} @ {c.id}: {outcome}"
    mark = ""
    if r.reused_from:
        tip += f" (re-used, observed {r.reused_from})"
        mark = '<span class="reused" title="re-used">↺</span>'
    if outcome == Outcome.PASS and not r.message:
        return f'<td {attrs} title="{esc(tip)}"><span class="lbl">{esc(label)}</span>{mark}</td>'
    failure = r.failure
    rows = [
        ("case", f"<code>{esc(case)}</code>"),
        ("cell", f"<code>{cell_id}</code>"),
        ("outcome", f"<b>{esc(outcome)}</b> — {esc(Outcome(outcome).meaning if outcome in set(Outcome) else '')}"
                    f" (expected: {esc(r.expected)})"),
        ("known failure", f"<code>{esc(failure)}</code>" if failure else ""),
        ("fix", esc(r.fix) if r.fix else ""),
        ("upstream", _links(r.upstream)),
        ("error type", f"<code>{esc(r.error_type)}</code>" if r.error_type else ""),
        ("duration", f"{esc(r.duration_s)} s" if r.duration_s is not None else ""),
        ("re-used", f"from the result cache, observed {esc(r.reused_from)}" if r.reused_from else ""),
    ]
    badge = f'<span class="fid">{esc(failure)}</span>' if failure else ""
    return (f'<td {attrs}><details class="pop {side}"><summary title="{esc(tip)}">'
            f'<span class="lbl">{esc(label)}</span>{badge}{mark}</summary>'
            f'<div class="panel"><div class="ptitle">{esc(short_case(case))} — '
            f'{esc(c.id)}</div>{_panel_rows(rows)}{_pre(r.message)}'
            f'{_pre(r.traceback) if r.traceback else ""}</div>'
            f"</details></td>")


def _band(c: CellResult, rowspan: int, side: str) -> str:
    status = c.status or "?"
    label = CellStatus(status).label if status in set(CellStatus) else status
    failure = c.failure
    outcome = c.outcome or ""
    known = (f'<div class="fid">known: {esc(failure)}</div>' if failure
             else f'<div class="fid">{esc(outcome)}</div>')
    rows = [
        ("cell", f"<code>{esc(c.id)}</code>"),
        ("status", f"<b>{esc(status)}</b> — {esc(CellStatus(status).meaning if status in set(CellStatus) else '')}"),
        (
            "outcome",
            f"<b>{esc(outcome)}</b> — {esc(CellOutcome(outcome).meaning if outcome in set(CellOutcome) else '')}",
        ),
        ("known failure", f"<code>{esc(failure)}</code>" if failure else ""),
    ]
    return (f'<td class="band s-{_token(status)} co-{_token(outcome)}" rowspan="{rowspan}" '
            f'data-outcome="{esc(status)}" data-status="{esc(status)}" data-cell="{esc(c.id)}">'
            f'<div class="bandhead"><span class="lbl">{esc(label)}</span>{known}'
            f'<details class="pop {side}"><summary>details</summary><div class="panel">'
            f'<div class="ptitle">{esc(c.id)}: {esc(status)}</div>{_panel_rows(rows)}'
            f'{_pre(c.message)}</div></details></div>'
            f'<div class="vert">{esc(label)}</div></td>')


def _col_head(i: int, c: CellResult, failing: bool, side: str) -> str:
    cell_id = c.id
    status, outcome = c.status or "?", c.outcome or ""
    versions = c.versions or {}
    vers = "".join(f'<div class="v" title="{esc(d)} {esc(versions[d])}"><span class="k">{esc(short)}</span> '
                   f'<span class="n">{esc(versions[d])}</span></div>'
                   for d, short in KEY_VERSIONS.items() if d in versions)
    if not vers:  # e.g. a cell that never resolved: show what was requested
        req = c.requested or {}
        vers = "".join(f'<div class="v req" title="requested"><span class="k">{esc(KEY_VERSIONS.get(d, d))}'
                       f'</span> <span class="n">{esc(v)}</span></div>' for d, v in req.items())
    if status == CellStatus.OK:
        st = CellOutcome.OK if outcome in (CellOutcome.OK, "") else outcome
    else:
        st = status + (f" = {c.failure}" if c.failure else f" ({outcome})")
    flag = '<div class="failflag">FAILING</div>' if failing else ""
    environment = c.environment or EnvironmentKind.BUILT
    meta = " · ".join(esc(x) for x in (f"py{c.python or '?'}", c.backend or "?")
                      + ((f"{environment} env",) if environment != EnvironmentKind.BUILT else ()))
    all_versions = "".join(f"<code>{esc(k)} {esc(v)}</code> " for k, v in versions.items())
    requested = "".join(f"<code>{esc(k)} {esc(v)}</code> " for k, v in (c.requested or {}).items())
    timings = ", ".join(f"{esc(k)} {esc(v)}" for k, v in (c.timings or {}).items())
    notes = "".join(f"<li>{esc(n)}</li>" for n in c.notes or [])
    rows = [
        ("cell", f"<code>{esc(cell_id)}</code>"),
        ("status", f"<b>{esc(status)}</b>; outcome <b>{esc(outcome)}</b> — "
                   f"{esc(CellOutcome(outcome).meaning if outcome in set(CellOutcome) else '')}"),
        ("known failure", f"<code>{esc(c.failure)}</code>" if c.failure else ""),
        ("python / backend", meta),
        ("devices", esc(describe_device(c.device or {}))),
        ("resolution date", esc(c.date) if c.date else ""),
        ("requested", requested),
        ("environment", "built by the suite" if environment == EnvironmentKind.BUILT
                        else f"<b>{esc(environment)}</b>: versions read from it, nothing installed"),
        ("installed", all_versions),
        ("timings (s)", timings),
        ("notes", f"<ul>{notes}</ul>" if notes else ""),
    ]
    return (f'<th class="col s-{_token(status)} co-{_token(outcome)}{" failing" if failing else ""}" '
            f'id="cell-{i}" data-cell="{esc(cell_id)}" data-status="{esc(status)}" scope="col">'
            f'<div class="num">#{i}</div><div class="cid">{_wbr(cell_id, "-")}</div>{vers}'
            f'<div class="meta">{meta}</div><div class="meta">{esc(c.date or "no date")}</div>'
            f'<div class="cst">{esc(st)}</div>{flag}'
            f'<details class="pop {side}"><summary>cell info</summary><div class="panel">'
            f'<div class="ptitle">{esc(cell_id)}</div>{_panel_rows(rows)}{_pre(c.message)}'
            f"</div></details></th>")


def _legend() -> str:
    items = []
    for key, o in ((o.value, o) for o in Outcome):
        items.append(f'<li><span class="sw sq o-{key}"><span class="lbl">{esc(o.label)}</span></span> '
                     f'<b>{esc(key)}</b>: {esc(o.meaning)}'
                     f'{" — <em>fails the run</em>" if o.fails else ""}</li>')
    items.append('<li><span class="sw sq o-absent">–</span> <b>absent</b>: the case is not in this '
                 "cell's results</li>")
    items.append('<li><span class="reused">↺</span> <b>re-used</b>: the raw result came from the result '
                 "cache (its inputs are unchanged) and was judged afresh by today's rules; "
                 "<code>--no-cache</code> runs everything</li>")
    bands = []
    for key, st in ((s.value, s) for s in CellStatus if s is not CellStatus.OK):
        bands.append(f'<li><span class="sw band s-{key} co-cell-error"><span class="lbl">{esc(st.label)}</span>'
                     f'</span> <b>{esc(key)}</b>: {esc(st.meaning)}</li>')
    cell_outcomes = "".join(f"<li><b>{esc(o.value)}</b>: {esc(o.meaning)}</li>" for o in CellOutcome)
    abbrev = ", ".join(f"{esc(s)} = {esc(d)}" for d, s in KEY_VERSIONS.items() if s != d)
    return (f'<section class="legend"><h2>Legend</h2><div class="lcols">'
            f'<div><h3>Case outcomes (squares)</h3><ul>{"".join(items)}</ul></div>'
            f'<div><h3>Cell status (a band over the whole column)</h3><ul>{"".join(bands)}</ul>'
            f'<p>Band shading: red hatching = a cell error that fails the run; blue = explained by a '
            f'known failure (<code>expected</code>); grey = unavailable or interrupted.</p>'
            f'<h3>Cell outcome</h3><ul>{cell_outcomes}</ul>'
            f'<p>Version abbreviations in column headers: {abbrev}.</p></div></div>'
            f'<p>Click a square (or a column\'s <i>cell info</i>) to open its error excerpt, known failure, '
            f'upstream links and fix; click again to close.</p></section>')


def _known_failures(cells: list[CellResult]) -> str:
    """Each known failure that applied somewhere: fix, upstream, and where it showed up how."""
    known: dict[str, dict] = {}
    for c in cells:
        if c.failure:
            k = known.setdefault(c.failure, {"fix": "", "upstream": [], "where": []})
            k["where"].append(f"{c.id}: cell {cell_label(c)}")
        for r in c.results:
            if not r.failure:
                continue
            k = known.setdefault(r.failure, {"fix": "", "upstream": [], "where": []})
            k["fix"] = k["fix"] or r.fix or ""
            for u in r.upstream or []:
                if u not in k["upstream"]:
                    k["upstream"].append(u)
            k["where"].append(f"{c.id}: {short_case(r.case)} {r.outcome}")
    if not known:
        return ""
    items = []
    for fid, k in known.items():
        where = "".join(f"<li>{esc(w)}</li>" for w in k["where"])
        items.append(f'<li><details><summary><code>{esc(fid)}</code> — {len(k["where"])} occurrence(s)'
                     f'</summary>{_panel_rows([("fix", esc(k["fix"])), ("upstream", _links(k["upstream"]))])}'
                     f"<ul>{where}</ul></details></li>")
    return f'<section class="known"><h2>Known failures seen</h2><ul>{"".join(items)}</ul></section>'


CSS = (Path(__file__).resolve().parent / "matrix.css").read_text(encoding="utf-8")  # package data


def _overview_mark(fid: str, cid: str, hit: bool, whole: bool) -> str:
    if not hit:
        return f'<span class="n" title="{esc(fid)} @ {esc(cid)}: not observed"></span>'
    how = "the whole cell failed as predicted" if whole else "reproduced by a case"
    return (f'<span class="n hit{" whole" if whole else ""}" title="{esc(fid)} @ {esc(cid)}: {how}">'
            f'{"■" if whole else "●"}</span>')


def _overview(cells: list[CellResult], index: dict[str, int]) -> str:
    """Known failures × cells (● a case reproduced it, ■ the whole cell failed as it predicts),
    under a row of what fails the run (✗): the first thing a person asks. Cell numbers link to
    the grid's columns."""
    ov = overview(cells)
    # Rows of spans: the page keeps one <table>, the grid of cases × cells.
    head = "".join(f'<span class="n"><a href="#cell-{i}" title="{esc(cid)}">{i}</a></span>'
                   for cid, i in index.items())
    why: dict[str, list[str]] = {}
    for cid, case, outcome in ov.failing:
        why.setdefault(cid, []).append(f"{case}: {outcome}")
    fails_row = "".join(f'<span class="n{" fail" if cid in why else ""}" title="{esc(cid)}: '
                        f'{esc("; ".join(why.get(cid, ["as the rules predict"])))}">'
                        f'{"✗" if cid in why else ""}</span>' for cid in index)
    rows = [f'<div class="r fails"><span class="f"><b>fails the run</b> <small>({len(why)} cell(s))</small>'
            f'</span>{fails_row}</div>']
    for fid, where in ov.hits.items():
        hit = set(where)
        dots = "".join(_overview_mark(fid, cid, cid in hit, (fid, cid) in ov.whole_cell) for cid in index)
        rows.append(f'<div class="r"><span class="f"><code>{esc(fid)}</code> '
                    f'<small>({len(where)})</small></span>{dots}</div>')
    key = ('<p class="ovkey"><span class="n hit">●</span> a case reproduced the failure '
           '<span class="n hit whole">■</span> the whole cell failed as the rule predicts '
           '<span class="n fail">✗</span> fails the run (hover a mark for the details)</p>')
    table = (f'<div class="ov"><div class="r"><span class="f">known failure '
             f'\\ cell</span>{head}</div>{"".join(rows)}</div>{key}' if ov.hits or why
             else '<p class="empty">no known failure observed</p>')
    if ov.failing:
        items = "".join(f"<li><code>{esc(c)}</code> {esc(case)}: <b>{esc(o)}</b></li>" for c, case, o in ov.failing)
        fails = f'<p class="failing-list"><b>Failing the run ({len(ov.failing)}):</b></p><ul>{items}</ul>'
    else:
        fails = '<p><b>Nothing fails the run:</b> every cell behaved as the rules predict.</p>'
    return f'<section class="overview"><h2>Overview: known failures × cells</h2>{table}{fails}</section>'


def page(title: str, body: str, css: str = "") -> str:
    """The one HTML shell every page of the tool is written in (the matrix, the survey, a check):
    self-contained (inline CSS, no script, no external asset), ``title`` escaped here, ``body``
    already built from escaped parts."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{esc(title)}</title><style>{css}</style></head><body>{body}</body></html>\n")


def render(data: dict) -> str:
    """The whole page for one ``matrix.json`` dict (docs/reports.md)."""
    data = data if isinstance(data, dict) else {}
    # Records from here on: the JSON is parsed once, at this edge (any report version loads).
    cells = parse_cells(data)
    s = data["summary"] if isinstance(data.get("summary"), dict) and "ok" in data["summary"] else summary(cells)
    ok = bool(s.get("ok"))
    index = {c.id: i for i, c in enumerate(cells, 1)}
    title = f"jax-compat matrix — {'OK' if ok else 'FAILING'}"
    return page(title, f"<header>{_header(data, s, cells, index)}</header><main>{_overview(cells, index)}"
                       f"<h2>All cases × cells</h2>{_grid(cells, set(map(str, s.get('failing_cells') or [])))}"
                       f"{_legend()}{_known_failures(cells)}</main>", CSS)


def _header(data: dict, s: dict, cells: list[CellResult], index: dict[str, int]) -> str:
    """The verdict, what ran where and when, the outcome counts and the failing cells."""
    ok = bool(s.get("ok"))
    head = [f'<h1>jax-compat matrix <span class="verdict {"ok" if ok else "failing"}">'
            f'{"OK" if ok else "FAILING"}</span></h1>']
    meta = [f"generated <b>{esc(data.get('generated', '?'))}</b>",
            f"matrix file <code>{esc(data.get('matrix_file', '?'))}</code>",
            f"{len(cells)} cell(s), {len(case_ids(cells))} case(s)"]
    if data.get("python_host"):
        meta.append(f"host python {esc(data['python_host'])}")
    if data.get("schema") is not None:
        meta.append(f"schema {esc(data['schema'])}")
    head.append(f'<p class="meta-line">{" · ".join(meta)}</p>')
    if data.get("interrupted"):
        unfinished = ", ".join(esc(u) for u in data.get("unfinished") or [])
        head.append(f'<p class="meta-line"><b>interrupted</b>; unfinished: {unfinished or "none"}</p>')
    head.append(_counts(s.get("outcomes") or {}))
    if s.get("failing_cells"):
        links = " ".join(f'<a href="#cell-{index[f]}">{esc(f)}</a>' if f in index else esc(f)
                         for f in s.get("failing_cells") or [])
        head.append(f'<p class="failing-list"><b>Failing cells:</b> {links}</p>')
    return "".join(head)


def _counts(outcomes: dict) -> str:
    """One swatch and count per outcome (in the outcome table's order), then per cell status."""
    order = list(Outcome)
    counts = []
    for key, n in sorted(outcomes.items(), key=lambda kv: (order.index(kv[0]) if kv[0] in order else len(order),
                                                           str(kv[0]))):
        key = str(key)
        if key.startswith("cell:"):
            status = key[5:].split(" ", 1)[0]
            shade = CellOutcome.EXPECTED if CellOutcome.EXPECTED in key else CellOutcome.CELL_ERROR
            sw = f'<span class="sw band s-{_token(status)} co-{shade}">'
        else:
            sw = f'<span class="sw sq o-{_token(key)}">'
        counts.append(f'<li data-outcome="{esc(key)}">{sw}{esc(key)}</span><b>{esc(n)}</b></li>')
    return f'<ul class="counts">{"".join(counts) or "<li>no results</li>"}</ul>'


def _grid(cells: list[CellResult], failing_ids: set[str]) -> str:
    """Every case × every cell: a square per result, a band down a cell that ran no case."""
    if not cells:
        return ('<table class="grid"><thead><tr><th class="case corner" scope="col">case \\ cell</th>'
                '<th class="col" scope="col"><span class="empty">no cells</span></th></tr></thead><tbody>'
                '<tr><th class="case" scope="row"><span class="empty">no results</span></th>'
                '<td class="empty">the matrix has no cells</td></tr></tbody></table>')
    sides = ["left" if i <= max(1, len(cells) // 2 + 1) else "right" for i in range(1, len(cells) + 1)]
    thead = ['<th class="case corner" scope="col">case \\ cell</th>']
    thead += [_col_head(i, c, c.id in failing_ids or c.failing, sides[i - 1]) for i, c in enumerate(cells, 1)]
    band_cols = {i for i, c in enumerate(cells) if c.status != CellStatus.OK and not c.results}
    row_cases = case_ids(cells) or [None]  # a placeholder row so cell bands still show when no case ran
    rows = []
    for n, case in enumerate(row_cases):
        tds = [_row_head(case)]
        for i, c in enumerate(cells):
            if i in band_cols:
                tds += [_band(c, len(row_cases), sides[i])] if n == 0 else []
            elif case is None:
                tds.append('<td class="sq o-absent" data-outcome="absent">–</td>')
            else:
                tds.append(_square(c, next((r for r in c.results if r.case == case), None), case, sides[i]))
        rows.append(f'<tr{" class=placeholder" if case is None else ""}>{"".join(tds)}</tr>')
    return (f'<table class="grid"><thead><tr>{"".join(thead)}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def _row_head(case: str | None) -> str:
    if case is None:
        return '<th class="case" scope="row"><span class="empty">no case results</span></th>'
    stem, _, name = short_case(case).partition("::")
    return (f'<th class="case" scope="row" data-case="{esc(case)}" title="{esc(case)}">'
            f'<span class="mod">{_wbr(stem)}::</span><wbr>{_wbr(name)}</th>')


# ------------------------------------------------------------------ the report pages' shell
# crater.html, check.html (and the site's pages) are written with these: the verdict banner first,
# then tables with a small bar per row, groups folded in <details>; inline CSS, no script.

REPORT_CSS = """
:root{--safe:#1a7f37;--unsafe:#c62828;--unjudged:#8a6100;--ink:#1b1b1b;--muted:#5f6368;--line:#d0d7de}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:var(--ink);background:#fafbfc}
main{padding:0 1.5em 2em;max-width:1200px}
h2{font-size:1.15em;margin:1.4em 0 .5em;border-bottom:1px solid var(--line);padding-bottom:.2em}
code{font:12.5px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
pre{background:#f3f4f6;padding:.6em;overflow:auto;white-space:pre-wrap;font-size:12px;margin:.4em 0}
a{color:#0550ae}
.verdict-banner{padding:1em 1.5em;color:#fff;background:var(--unjudged)}
.verdict-banner.v-safe{background:var(--safe)}
.verdict-banner.v-not-safe{background:var(--unsafe)}
.verdict-banner .word{font-size:2.2em;font-weight:700;letter-spacing:.02em;text-transform:uppercase;line-height:1.1}
.verdict-banner .head{font-size:1.15em;margin:.2em 0}
.verdict-banner .meta{opacity:.92;font-size:.92em}
.verdict-banner code{color:#fff}
table.rows{border-collapse:collapse;background:#fff;width:100%}
table.rows th,table.rows td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:middle}
table.rows th{font-size:.85em;color:var(--muted);font-weight:600;white-space:nowrap}
table.rows td.n{text-align:right;font-variant-numeric:tabular-nums}
td.n.hot{color:var(--unsafe);font-weight:700} td.n.good{color:var(--safe);font-weight:700}
td.n.warn{color:var(--unjudged);font-weight:700}
.chip{display:inline-block;padding:0 .5em;border-radius:9px;font-size:.85em;font-weight:600;color:#fff;
 background:var(--unjudged);white-space:nowrap}
.chip.safe{background:var(--safe)} .chip.broken,.chip.none-ran,.chip.fails{background:var(--unsafe)}
.bar{display:flex;width:180px;height:12px;border-radius:3px;overflow:hidden;background:#e6e8eb}
.bar span{display:block;height:100%}
.k-broken,.k-fails{background:#d93025} .k-fixed{background:#1e8e3e} .k-flaky{background:#f9ab00}
.k-fails-both{background:#80868b} .k-pass{background:#a8dab5} .k-skipped{background:#dadce0}
.key span.sw{display:inline-block;width:.9em;height:.9em;border-radius:2px;vertical-align:-1px;margin:0 .25em 0 .8em}
.key{font-size:.85em;color:var(--muted);margin:.3em 0}
.note{color:var(--muted);font-size:.9em}
ul.tree,ul.tree ul{list-style:none;margin:.2em 0;padding-left:1.2em}
ul.tree>li{margin:.3em 0} ul.tree ul li:before{content:"└ ";color:var(--muted)}
.group{background:#fff;border:1px solid var(--line);border-left:5px solid var(--unsafe);border-radius:4px;
 padding:.6em 1em;margin:.8em 0}
.group.explained{border-left-color:#0550ae}
.group h3{margin:0 0 .3em;font-size:1em}
.group dl{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em;margin:.3em 0}
.group dt{color:var(--muted)} .group dd{margin:0}
details{margin:.3em 0} details>summary{cursor:pointer;color:#0550ae}
details ul{margin:.3em 0}
footer{color:var(--muted);font-size:.85em;padding:1em 1.5em;border-top:1px solid var(--line)}
"""

# the bar's segments, left first
BAR_ORDER = tuple(UserTestStatus(k) for k in ("broken", "fails", "flaky", "fails-both", "fixed", "pass", "skipped"))


def banner(code: int, headline: str, meta: list[str] = ()) -> str:
    """The verdict, first on the page: the word (safe / not safe / could not judge) big on its
    colour, the exit status and what it means, one headline (escaped here) and ``meta`` lines
    (already HTML)."""
    v = Verdict.of(code)
    lines = "".join(f'<div class="meta">{m}</div>' for m in meta if m)
    return (f'<header class="verdict-banner v-{v.value}" id="verdict">'
            f'<div class="word">{esc(v.label)}</div><div class="head">{esc(headline)}</div>'
            f'<div class="meta">exit {code}: {esc(v.meaning)}</div>{lines}</header>')


def bar(counts: dict[str, int], label: str = "") -> str:
    """A small picture of a suite: one segment per class of test (``BAR_ORDER``), as wide as its share."""
    total = sum(counts.get(k, 0) for k in BAR_ORDER)
    said = ", ".join(f"{counts[k]} {k}" for k in BAR_ORDER if counts.get(k))
    parts = "".join(f'<span class="k-{k}" style="width:{100 * counts[k] / total:.2f}%" title="{counts[k]} {k}">'
                    f"</span>" for k in BAR_ORDER if counts.get(k)) if total else ""
    said = f"{label + ': ' if label else ''}{said or 'no tests'}"
    return f'<div class="bar" role="img" aria-label="{esc(said)}">{parts}</div>'


def bar_key() -> str:
    return '<p class="key">' + "".join(f'<span class="sw k-{k}"></span>{esc(k)}' for k in BAR_ORDER) + "</p>"


def link(url: str, text: str = "") -> str:
    """An ``https``/``http`` URL as a link, shown as ``text`` (default: ``short_url``); anything
    else stays text."""
    if not str(url).lower().startswith(("https://", "http://")):
        return _links([url])
    return f'<a href="{esc(url)}" rel="noopener noreferrer">{esc(text or short_url(url))}</a>'


def short_url(url: str) -> str:
    """``equinox#854``, ``jax#23690``, ``equinox@8f327d9c98ad`` for GitHub's issues, pulls and
    commits; any other URL as it is."""
    parts = str(url).rstrip("/").split("/")
    if len(parts) >= 7 and parts[2] == "github.com" and parts[5] in ("issues", "pull"):
        return f"{parts[4]}#{parts[6]}"
    if len(parts) >= 7 and parts[2] == "github.com" and parts[5] == "commit":
        return f"{parts[4]}@{parts[6][:12]}"
    return str(url)


def fold(summary: str, body: str, open_: bool = False) -> str:
    """A ``<details>`` (``summary`` and ``body`` already HTML)."""
    return f"<details{' open' if open_ else ''}><summary>{summary}</summary>{body}</details>"

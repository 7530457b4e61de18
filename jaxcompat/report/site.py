"""The ecosystem's pages (``report site``): a static site from the stored reports, for GitHub Pages
or a folder opened in a browser. No server, no script, no external asset; every link between pages
is relative; every text was scrubbed when it was read (operations/site.py) and is escaped here.

    index.html     the newest night, what is open, and a link to each page
    history.html   the nightly crater's history (report/history.py)
    forecast.html  the deprecations the ecosystem still uses and the release that removes each
    survey.html    the survey's picture of jax × equinox (the stored page, with the site's bar)
    matrix.html    the matrix (matrix.json, else the committed baseline.json)
    nights/NIGHT/  what the site keeps of each night (crater.json, and its crater.html when kept)
    site-files.json  the files this build wrote: the next build into the folder removes those it does
                   not write again (an earlier build's pages never stay as if current); a folder holding
                   files and no site-files.json is refused (exit 2), and no other file is ever removed
"""

from __future__ import annotations

import json
from pathlib import Path

from jaxcompat._util.atomic import write_text
from jaxcompat.apihistory.apiexplain import histories
from jaxcompat.knowledge.deprecations import forecast
from jaxcompat.model.outcomes import parse_cells
from jaxcompat.model.site import Site
from jaxcompat.report import history as history_page
from jaxcompat.report import html

# the site's own rules, over the report pages' shell (html.REPORT_CSS: the banner, tables, folds)
BAR_CSS = """nav.site{background:#222;padding:.6em 1.5em}nav.site a{color:#fff;margin-right:1.2em}
nav.site a.here{font-weight:700;text-decoration:none}"""
CSS = BAR_CSS + """
table.plain{border-collapse:collapse;background:#fff}table.plain td,table.plain th{border:1px solid #ccc;
padding:3px 6px;vertical-align:top}main h1{font-size:1.4em}"""

PAGES = (("index.html", "home"), ("history.html", "history"), ("forecast.html", "forecast"),
         ("survey.html", "survey"), ("matrix.html", "matrix"))


def _bar(have: set[str], here: str) -> str:
    links = [f'<a href="{name}"{" class=here" if name == here else ""}>{label}</a>'
             for name, label in PAGES if name in have]
    return f'<nav class="site">{"".join(links)}</nav>'


def _shell(title: str, body: str, have: set[str], here: str, css: str = "", top: str = "") -> str:
    """A page of the site: the bar, ``top`` (a verdict banner), then ``body`` in ``<main>``."""
    return html.page(title, f"{_bar(have, here)}{top}<main>{body}</main>", html.REPORT_CSS + CSS + css)


def _with_bar(page: str, have: set[str], here: str) -> str:
    """A stored page (its own style) with the site's bar at its top."""
    return page.replace("</head>", f"<style>{BAR_CSS}</style></head>", 1).replace(
        "<body>", "<body>" + _bar(have, here), 1)


def pages(site: Site) -> dict[str, str]:
    """Every file of the site: its path inside the site -> its text."""
    have = {"index.html", "forecast.html"}
    have |= {"history.html"} if site.history else set()
    have |= {"survey.html"} if "survey.html" in site.copies else set()
    have |= {"matrix.html"} if site.matrix is not None else set()
    out = dict(site.copies)
    if "survey.html" in out:  # the stored page as it is, with the site's bar at its top
        out["survey.html"] = _with_bar(out["survey.html"], have, "survey.html")
    if site.matrix is not None:
        out["matrix.html"] = _with_bar(html.render(site.matrix), have, "matrix.html")
    if site.history:
        out["history.html"] = _shell("jax-compat: the nightly crater's history",
                                     history_page.body(site.history, site.nights_from), have, "history.html",
                                     history_page.CSS, history_page.banner_of(site.history, site.nights_from))
    out["forecast.html"] = _shell("jax-compat: warnings before the break", forecast_body(site), have,
                                  "forecast.html", history_page.CSS)
    top = history_page.banner_of(site.history, site.nights_from) if site.history else ""
    out["index.html"] = _shell("jax-compat: the JAX ecosystem", index_body(site, have), have, "index.html",
                               history_page.CSS, top)
    out[".nojekyll"] = ""  # GitHub Pages serves the files as they are
    return out


MANIFEST = "site-files.json"


class NotASite(ValueError):
    """``--out`` holds files that no build of the site wrote: nothing is written there."""


def write(site: Site, out_dir: Path) -> list[str]:
    """Write every file of the site into ``out_dir`` (atomically, each), then remove the files of the earlier
    build there (its ``MANIFEST``) that this one did not write; the paths written."""
    files = pages(site)
    before = earlier_build(out_dir)
    for rel, text in files.items():
        write_text(out_dir / rel, text)
    for rel in sorted(set(before) - set(files), reverse=True):
        if (out_dir / rel).is_file() or (out_dir / rel).is_symlink():
            (out_dir / rel).unlink()
        for folder in (out_dir / rel).parents:  # nights/NIGHT/, left empty
            if folder == out_dir or not folder.is_dir() or any(folder.iterdir()):
                break
            folder.rmdir()
    write_text(out_dir / MANIFEST, json.dumps(sorted(files), indent=1) + "\n")
    return sorted(files)


def earlier_build(out_dir: Path) -> list[str]:
    """The files the build before wrote into ``out_dir`` (none: a new or empty folder); ``NotASite`` where it
    holds files and no readable ``MANIFEST``."""
    manifest = out_dir / MANIFEST
    try:
        listed = json.loads(manifest.read_text(encoding="utf-8")) if manifest.is_file() else None
    except (OSError, ValueError):
        listed = None
    if isinstance(listed, list) and all(isinstance(x, str) for x in listed):
        return [x for x in listed if x and not Path(x).is_absolute() and ".." not in Path(x).parts]
    if out_dir.is_dir() and any(p.is_file() or p.is_symlink() for p in out_dir.rglob("*")):
        raise NotASite(f"--out {out_dir}: the folder holds files that no build of the site wrote (no readable "
                       f"{MANIFEST}), and the site removes an earlier build's pages: give a new or empty folder, "
                       f"or remove {out_dir} first")
    return []


def index_body(site: Site, have: set[str]) -> str:
    parts = ["<h1>jax-compat: the JAX ecosystem, night by night</h1>"]
    if site.history:  # its headline is the page's banner
        parts.append(f'{history_page.marks_table(site.history)}'
                     f'<p><a href="history.html">The history</a>: each break, the night it appeared, its first '
                     "bad commit and pull request, the night it was fixed.</p>")
    else:
        parts.append("<p>No nights were given (<code>--history</code>): no history page.</p>")
    s = site.survey
    if "survey.html" in have and s:
        parts.append(f'<p><a href="survey.html">The survey</a>: {html.esc(s.get("combinations", "?"))} combinations '
                     f"of jax × equinox off the matrix; case verdicts right: "
                     f"{100 * float(s.get('right_share', 0)):.2f}%.</p>")
    if "matrix.html" in have:
        cells = parse_cells(site.matrix)
        failing = sum(1 for c in cells if c.failing)
        many = "cell" if len(cells) == 1 else "cells"
        parts.append(f'<p><a href="matrix.html">The matrix</a> ({html.esc(site.matrix_from)}): {len(cells)} {many}, '
                     f"{failing} failing.</p>")
    parts.append('<p><a href="forecast.html">Warnings before the break</a>: the jax deprecations the ecosystem '
                 "still uses, and the release that removes each.</p>")
    return "".join(parts)


def forecast_body(site: Site) -> str:
    parts = ["<h1>Warnings before the break</h1><p>What the next releases of jax remove that the ecosystem's "
             "code still uses: tomorrow's breaks.</p>", "<h2>New warnings in the nightly candidate</h2>",
             _nightly_warnings(site), "<h2>In the survey</h2>", _survey_rows(site.survey_forecast),
             f"<h2>In the matrix ({html.esc(site.matrix_from or 'none')})</h2>", _matrix_forecast(site)]
    return "".join(parts)


def _nightly_warnings(site: Site) -> str:
    if not site.history:
        return "<p>No nights were given.</p>"
    seen: dict[str, dict] = {}
    for night in site.history.nights:
        for w in night.new_warnings:
            key = str(w.get("key") or w.get("message") or "")
            entry = seen.setdefault(key, {"w": w, "nights": []})
            entry["w"], entry["nights"] = w, entry["nights"] + [night.name]
    if not seen:
        return "<p>No night's candidate raised a new warning in a dependent's tests.</p>"
    newest = site.history.nights[-1].name
    rows = []
    for key, e in seen.items():
        w = e["w"]
        removed = w.get("removed_in") or w.get("removal_from") or ""
        rows.append(f"<tr><td>{html.esc(w.get('api') or key)}</td><td>{html.esc(w.get('category', ''))}</td>"
                    f"<td>{html.esc(removed or 'no removal announced')}</td>"
                    f"<td>{html.esc(', '.join(w.get('projects') or []))} ({html.esc(w.get('count', 0))} tests)</td>"
                    f"<td>{html.esc(e['nights'][0])} – {html.esc(e['nights'][-1])}"
                    f"{' (still, in the newest night)' if e['nights'][-1] == newest else ''}</td></tr>")
    return ('<table class="plain"><tr><th>what</th><th>category</th><th>jax removes it in</th><th>raised in</th>'
            f'<th>nights</th></tr>{"".join(rows)}</table>')


def _survey_rows(rows: list[dict]) -> str:
    if not rows:
        return "<p>No stored survey forecast (reports/survey.md).</p>"
    newest: dict[str, str] = {}
    for r in rows:  # survey.md lists each package's releases oldest first
        newest[r["package"]] = r["version"]
    out = []
    for r in sorted(rows, key=lambda r: (newest[r["package"]] != r["version"], r["package"])):
        still = newest[r["package"]] == r["version"]
        mark = " <b>(newest surveyed)</b>" if still else ""
        out.append(f"<tr><td>{html.esc(r['package'])} {html.esc(r['version'])}{mark}</td>"
                   f"<td><code>{html.esc(r['what'])}</code> ({html.esc(r['where'])})</td>"
                   f"<td>{html.esc(r['removal'] or 'not announced')}</td><td>{html.esc(r['warned_on'])}</td>"
                   f"<td>{html.esc(r['broke_on'] or '—')}</td></tr>")
    return ("<p>From the survey's stored report: the newest surveyed release of each package first (what the "
            "ecosystem still uses), then older ones.</p><table class=\"plain\"><tr><th>package</th><th>uses</th>"
            "<th>jax removes it in</th><th>warned on jax</th><th>broke on jax</th></tr>" + "".join(out) + "</table>")


def _matrix_forecast(site: Site) -> str:
    if site.matrix is None:
        return "<p>No matrix report (run <code>nox -s matrix</code>).</p>"
    items = []
    for cell in parse_cells(site.matrix):
        if cell.deprecations:
            lines = forecast(cell.deprecations, cell.versions, histories(cell.deprecations))
            items.append(f"<li><code>{html.esc(cell.id)}</code><ul>"
                         + "".join(f"<li>{html.esc(x)}</li>" for x in lines) + "</ul></li>")
    if not items:
        return "<p>No cell of this report recorded a jax deprecation hit by the ecosystem's code.</p>"
    return f"<ul>{''.join(items)}</ul>"

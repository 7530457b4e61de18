"""The HTML page for matrix.json: structure checked with the stdlib HTML parser (no jax, fast)."""

from __future__ import annotations

import json
from html.parser import HTMLParser

from jaxcompat.model.outcomes import CaseResult, CellResult
from jaxcompat.model.vocab import Outcome
from jaxcompat.report import html, reports
from jaxcompat.report.emit import emit
from jaxcompat.report.outputs import MatrixReport

XSS = "<script>alert(1)</script>"
ISSUE = "https://github.com/patrick-kidger/diffrax/issues/506"
OUTCOMES = ["pass", "reproduced", "regression", "stale", "mismatch", "skipped", "timeout", "crash", "flaky"]


def _cells() -> list[CellResult]:
    ok = CellResult(id="jax0.4.33-eqx0.11.7", python="3.11", backend="cpu", status="ok",
                    versions={"jax": "0.4.33", "jaxlib": "0.4.33", "equinox": "0.11.7", "numpy": "2.1.1"},
                    date="2024-09-19", timings={"total_s": 12.5},
                    notes=["optimistix left out: it does not co-install (<&> \"quoted\")"])
    ok.results = [
        CaseResult("cases/test_cb.py::test_error_if", "callback-error-deferral", "fail", "reproduced", 0.4,
                   "XlaRuntimeError: Unfortunately <a & b> 'q' \"qq\"\n" + "  File x, line 1\n" * 200,
                   "XlaRuntimeError", "upgrade equinox to >=0.11.8", [ISSUE, "javascript:alert(2)"]),
        CaseResult("cases/test_cb.py::test_control_sync", None, "pass", "pass", 0.1, ""),
        CaseResult("cases/test_inline.py::test_nested", None, "pass", "regression", 0.2,
                   f"AttributeError: {XSS} 'int' object has no attribute", "AttributeError"),
    ]
    every = CellResult(id="every-outcome", python="3.12", backend="cpu", status="ok",
                       versions={"jax": "0.5.3", "diffrax": "0.7.0"}, date="2025-03-28")
    every.results = [CaseResult(f"cases/test_all.py::test_{o}", None, "pass", o, 0.0, f"{o} message")
                     for o in OUTCOMES]
    broken = CellResult(id="jax0.4.13-eqx0.11.7", python="3.11", backend="cpu", status="import-error",
                        outcome="expected", failure="numpy2-import",
                        message=f"AttributeError: np.issubsctype was removed {XSS}")
    missing = CellResult(id="py3.14", python="3.14", backend="cpu", status="python-missing",
                         outcome="unavailable", message="Python 3.14 not found",
                         requested={"jax": "0.6.0"})
    return [ok, every, broken, missing]


def _data(cells=None, **meta) -> dict:
    cells = _cells() if cells is None else cells
    # through JSON, exactly as a reader of reports/matrix.json gets it
    return json.loads(json.dumps(reports.matrix_dict(cells, {"matrix_file": "matrix.toml", **meta})))


class Tree(HTMLParser):
    """Collects the elements (tag, attrs, path of enclosing tags) and the text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict, tuple[str, ...]]] = []
        self.stack: list[str] = []
        self.text: list[str] = []
        self.raw_data: list[tuple[tuple[str, ...], str]] = []

    VOID = {"br", "meta", "wbr", "link", "img", "hr", "input"}

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs), tuple(self.stack)))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass

    def handle_data(self, data):
        self.text.append(data)
        self.raw_data.append((tuple(self.stack), data))

    def all(self, tag, **attrs):
        return [a for t, a, _ in self.elements if t == tag and all(a.get(k) == v for k, v in attrs.items())]


def parse(page: str) -> Tree:
    t = Tree()
    t.feed(page)
    t.close()
    return t


def _grid_rows(page: str) -> tuple[list[dict], list[list[tuple[str, dict]]]]:
    """(column header th attrs, body rows as [(tag, attrs) of their direct cells])."""

    class Grid(HTMLParser):
        def __init__(self):
            super().__init__()
            self.section = None
            self.heads: list[dict] = []
            self.rows: list[list[tuple[str, dict]]] = []
            self.depth = 0  # nesting inside a grid cell

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag in ("thead", "tbody"):
                self.section = tag
            elif tag == "tr" and self.section == "tbody":
                self.rows.append([])
            elif tag in ("td", "th") and self.depth == 0:
                self.depth = 1
                if self.section == "thead":
                    self.heads.append(a)
                elif self.section == "tbody":
                    self.rows[-1].append((tag, a))
            elif tag in ("td", "th"):
                self.depth += 1

        def handle_endtag(self, tag):
            if tag in ("td", "th"):
                self.depth -= 1
            elif tag in ("thead", "tbody"):
                self.section = None

    g = Grid()
    g.feed(page)
    return g.heads, g.rows


def test_one_table_rows_are_cases_columns_are_cells():
    data = _data()
    page = html.render(data)
    tree = parse(page)
    assert len(tree.all("table")) == 1
    heads, rows = _grid_rows(page)
    cells = data["cells"]
    assert [h.get("data-cell") for h in heads[1:]] == [c["id"] for c in cells]
    cases = list(dict.fromkeys(r["case"] for c in cells for r in c["results"]))
    assert len(rows) == len(cases) == 3 + len(OUTCOMES)
    assert [r[0][1].get("data-case") for r in rows] == cases
    # row 0 holds one square per column (the bands start there); later rows skip the band columns
    assert len(rows[0]) == 1 + len(cells)
    assert all(len(r) == 1 + len(cells) - 2 for r in rows[1:])
    bands = [a for _, a in rows[0] if "band" in a.get("class", "")]
    assert [(b["data-cell"], b["rowspan"]) for b in bands] == [
        ("jax0.4.13-eqx0.11.7", str(len(cases))), ("py3.14", str(len(cases)))]


def test_every_square_carries_its_outcome():
    data = _data()
    _, rows = _grid_rows(html.render(data))
    seen = {}
    for row in rows:
        for tag, a in row[1:]:
            assert tag == "td"
            assert a.get("data-outcome"), a
            kind = a["data-outcome"]
            assert f"o-{kind}" in a["class"].split() or f"s-{kind}" in a["class"].split()
            seen.setdefault(a.get("data-cell"), []).append(kind)
    assert sorted(seen["every-outcome"]) == sorted(OUTCOMES + ["absent"] * 3)
    assert seen["jax0.4.33-eqx0.11.7"][:3] == ["reproduced", "pass", "regression"]
    assert seen["jax0.4.13-eqx0.11.7"] == ["import-error"]
    assert seen["py3.14"] == ["python-missing"]
    # each outcome has a visible text label, not only a colour
    page = html.render(data)
    for o in Outcome:
        assert f'<span class="lbl">{o.label}</span>' in page


def test_band_shows_status_and_known_failure():
    page = html.render(_data())
    text = " ".join(parse(page).text)
    assert "known: numpy2-import" in text
    assert "import error" in text and "no python" in text
    assert "Python 3.14 not found" in text


def test_escaping():
    page = html.render(_data())
    tree = parse(page)
    assert XSS not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert len(tree.all("script")) == 0  # the page itself uses no script either
    text = "".join(tree.text)
    assert XSS in text  # shown as text, exactly
    assert "Unfortunately <a & b> 'q' \"qq\"" in text
    assert "(<&> \"quoted\")" in text
    # no attribute value got broken open: every element's attributes parsed as known names
    known = {"class", "data-outcome", "data-cell", "data-case", "data-status", "title", "href", "rel",
             "rowspan", "id", "scope", "lang", "charset", "name", "content", "open"}
    for _, attrs, _ in tree.elements:
        assert set(attrs) <= known, attrs


def test_long_messages_are_in_scrollable_pre():
    page = html.render(_data())
    tree = parse(page)
    pres = tree.all("pre")
    assert pres and all("msg" in p.get("class", "") for p in pres)
    assert any(path[-1:] == ("pre",) and "File x, line 1" in data for path, data in tree.raw_data)
    assert "pre.msg" in page and "max-height" in page and "overflow: auto" in page


def test_details_carry_failure_fix_and_upstream():
    page = html.render(_data())
    tree = parse(page)
    assert tree.all("details") and tree.all("summary")
    links = [a["href"] for a in tree.all("a") if "href" in a]
    assert ISSUE in links
    assert not any(h.lower().startswith("javascript:") for h in links)
    text = " ".join(tree.text)
    assert "callback-error-deferral" in text and "upgrade equinox to >=0.11.8" in text
    # the unsafe "upstream" is shown as text only
    assert "javascript:alert(2)" in text
    # each non-pass square has its own <details>
    for tag, attrs, path in tree.elements:
        if tag == "td" and attrs.get("data-outcome") not in (None, "pass", "absent"):
            assert "details" not in path  # squares are not nested in other details
    squares = [a for a in tree.all("td") if a.get("data-outcome") not in (None, "pass", "absent")]
    assert len(squares) <= len(tree.all("details"))


def test_no_external_references():
    page = html.render(_data())
    tree = parse(page)
    assert not tree.all("link")
    assert not [a for a in tree.all("script") if "src" in a]
    for tag, attrs, _ in tree.elements:
        for key, value in attrs.items():
            if key == "src":
                raise AssertionError(f"external asset: <{tag} src={value}>")
            if key == "href" and value and not value.startswith("#"):
                assert tag == "a" and value == ISSUE, (tag, value)
    assert "@import" not in page and "url(" not in page


def test_header_verdict_counts_and_column_headers():
    data = _data()
    page = html.render(data)
    tree = parse(page)
    text = " ".join(tree.text)
    assert "FAILING" in text
    assert "jax-compat matrix — FAILING" in text  # <title>
    assert data["generated"] in text and "matrix.toml" in text
    counts = {a["data-outcome"] for a in tree.all("li") if "data-outcome" in a}
    assert set(data["summary"]["outcomes"]) == counts
    heads, _ = _grid_rows(page)
    first = heads[1]
    assert first["data-cell"] == "jax0.4.33-eqx0.11.7" and first["data-status"] == "ok"
    for needle in ("jaxlib", "0.4.33", "eqx", "0.11.7", "np", "2.1.1", "py3.11", "cpu", "2024-09-19"):
        assert needle in text
    # failing cells are linked from the header to their column
    failing = data["summary"]["failing_cells"]
    assert failing and all(f in text for f in failing)
    assert {a["href"] for a in tree.all("a") if a.get("href", "").startswith("#")} <= {
        f"#cell-{i}" for i in range(1, len(data["cells"]) + 1)}


def test_ok_verdict():
    cell = CellResult(id="a", python="3.11", backend="cpu", status="ok", versions={"jax": "0.4.33"})
    cell.results = [CaseResult("cases/test_x.py::test_y", None, "pass", "pass", 0.1, "")]
    tree = parse(html.render(_data([cell])))
    text = " ".join(tree.text)
    assert "OK" in text and "FAILING" not in text
    assert "x::y" in "".join(tree.text)  # short case name (with line-break opportunities)


def test_empty_results():
    page = html.render(_data([]))
    tree = parse(page)
    assert len(tree.all("table")) == 1
    assert "OK" in " ".join(tree.text)
    assert html.render({}) and html.render({"cells": []})


def test_single_cell_without_cases_shows_its_band():
    cell = CellResult(id="only", python="3.11", backend="cpu", status="unresolvable", outcome="cell-error",
                      message="No solution found when resolving dependencies")
    page = html.render(_data([cell]))
    heads, rows = _grid_rows(page)
    assert [h.get("data-cell") for h in heads[1:]] == ["only"]
    assert len(rows) == 1 and rows[0][1][1]["data-outcome"] == "unresolvable"
    assert "No solution found" in " ".join(parse(page).text)


def test_write_is_atomic_and_complete(tmp_path):
    path = tmp_path / "out" / "matrix.html"
    assert emit(MatrixReport("matrix", data=_data()), path.parent, ("html",)) == [path]  # report.emit writes it
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert [p.name for p in path.parent.iterdir()] == ["matrix.html"]


def test_interrupted_run_is_flagged():
    cell = CellResult(id="late", python="3.11", backend="cpu", status="not-run", outcome="interrupted",
                      message="the run was interrupted before this cell started")
    text = " ".join(parse(html.render(_data([cell], interrupted=True, unfinished=["late"]))).text)
    assert "interrupted" in text and "late" in text and "not run" in text

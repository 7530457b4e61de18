"""Report rendering: per-cell JSON and JUnit, consolidated matrix.json/md, terminal grid."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from jaxcompat.model.outcomes import CaseResult, CellResult
from jaxcompat.report import reports
from jaxcompat.report.matrixreport import write_cell, write_matrix


def _cells():
    ok = CellResult(id="jax0.4.33-eqx0.11.7", python="3.11", backend="cpu", status="ok",
                    versions={"jax": "0.4.33", "equinox": "0.11.7"}, date="2024-09-19",
                    timings={"total_s": 12.5})
    ok.results = [
        CaseResult("cases/test_cb.py::test_error_if", "callback-error-deferral", "fail", "reproduced", 0.4,
                   "XlaRuntimeError: Unfortunately…", "XlaRuntimeError", "upgrade equinox to >=0.11.8",
                   ["https://github.com/patrick-kidger/diffrax/issues/506"]),
        CaseResult("cases/test_cb.py::test_control_sync", None, "pass", "pass", 0.1, ""),
        CaseResult("cases/test_inline.py::test_nested", None, "pass", "regression", 0.2,
                   "AttributeError: 'int' object has no attribute 'block_until_ready'", "AttributeError"),
    ]
    broken = CellResult(id="jax0.4.13-eqx0.11.7", python="3.11", backend="cpu", status="import-error",
                        outcome="expected", failure="numpy2-import",
                        message="AttributeError: np.issubsctype was removed")
    missing = CellResult(id="py3.14", python="3.14", backend="cpu", status="python-missing",
                         outcome="unavailable", message="Python 3.14 not found")
    return [ok, broken, missing]


def test_matrix_json_schema(tmp_path):
    cells = _cells()
    write_matrix(cells, tmp_path, {"matrix_file": "matrix.toml"})
    data = json.loads((tmp_path / "matrix.json").read_text())
    assert data["summary"]["ok"] is False
    assert data["summary"]["failing_cells"] == ["jax0.4.33-eqx0.11.7"]
    cell = data["cells"][0]
    for key in ("id", "python", "backend", "status", "versions", "results"):
        assert key in cell
    for key in ("case", "failure", "expected", "outcome", "duration_s", "message"):
        assert key in cell["results"][0]
    assert reports.load_cell  # round trip below
    again = CellResult.from_dict(cell)
    assert again.results[0].outcome == "reproduced"


def test_markdown_grid_is_cases_by_cells(tmp_path):
    md = reports.markdown(_cells(), {"matrix_file": "matrix.toml"})
    assert "FAILING" in md
    assert "| `cb::error_if` | REPRO | import | nopy |" in md
    assert "| `inline::nested` | REGR! | import | nopy |" in md
    assert "known failure `numpy2-import`" in md


def test_junit(tmp_path):
    cells = _cells()
    root = ET.fromstring(reports.junit_xml(cells[0]))
    suite = root.find("testsuite")
    assert suite.get("tests") == "3" and suite.get("failures") == "1"
    failure = suite.find("testcase[@name='test_nested']/failure")
    assert failure.get("type") == "regression"
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["jax"] == "0.4.33"
    expected_err = ET.fromstring(reports.junit_xml(cells[1])).find("testsuite")
    assert expected_err.get("errors") == "0"


def test_cell_reports_are_written_atomically(tmp_path):
    cell = _cells()[0]
    write_cell(cell, tmp_path)
    assert json.loads((tmp_path / "cells" / f"{cell.id}.json").read_text())["id"] == cell.id
    assert not list((tmp_path / "cells").glob("*.tmp"))


def test_terminal_grid():
    text = reports.terminal_grid(_cells())
    assert "REPRO" in text and "REGR!" in text
    assert "import-error = known numpy2-import" in text
    assert "FAILING cells: jax0.4.33-eqx0.11.7" in text


def test_overview_leads_with_failures_by_cell_in_every_format(tmp_path):
    from jaxcompat.report import html

    cells = _cells()
    ov = reports.overview(cells)
    assert ov.hits == {"callback-error-deferral": ["jax0.4.33-eqx0.11.7"], "numpy2-import": ["jax0.4.13-eqx0.11.7"]}
    assert ov.whole_cell == {("numpy2-import", "jax0.4.13-eqx0.11.7")}
    assert ov.failing == [("jax0.4.33-eqx0.11.7", "inline::nested", "regression")]
    term = reports.terminal_overview(cells)
    assert term.index("numpy2-import") < term.index("FAILING the run (1)") and max(map(len, term.splitlines())) < 120
    md = reports.markdown(cells, {"matrix_file": "matrix.toml"})
    assert md.index("## Overview: known failures × cells") < md.index("inline::nested` | REGR!")
    write_matrix(cells, tmp_path, {"matrix_file": "matrix.toml"})
    page = html.render(json.loads((tmp_path / "matrix.json").read_text()))
    overview = page[page.index('<section class="overview">'):page.index("All cases × cells")]
    marks = overview[:overview.index('class="ovkey"')]  # the table, not its key
    assert marks.count(">✗</span>") == 1 and "inline::nested: regression" in marks  # the failing cell, why on hover
    assert marks.count(">■</span>") == 1 and marks.count(">●</span>") == 1  # whole cell vs one case


# -- the report schema (docs/report.schema.json) -------------------------------------------------

def _schema():
    from pathlib import Path

    import jsonschema  # installed with check-jsonschema (nox -s tests)

    schema = json.loads((Path(__file__).resolve().parents[1] / "docs" / "report.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema)


def test_the_schema_words_are_the_vocabulary():
    from jaxcompat.model.vocab import CellOutcome, CellStatus, Outcome, Phase

    defs = _schema().schema["$defs"]
    assert defs["case"]["properties"]["outcome"]["enum"] == [o.value for o in Outcome]
    assert defs["cell"]["properties"]["status"]["enum"] == [s.value for s in CellStatus]
    assert defs["cell"]["properties"]["outcome"]["enum"] == [o.value for o in CellOutcome]
    assert set(defs["case"]["properties"]["phase"]["enum"]) == {p.value for p in Phase} - {"call"}


def test_every_report_the_tool_writes_fits_the_schema(tmp_path):
    validator = _schema()
    cells = _cells()
    write_matrix(cells, tmp_path, {"matrix_file": "matrix.toml"})
    validator.validate(json.loads((tmp_path / "matrix.json").read_text()))
    for c in cells:  # check.json and cells/<id>.json: one cell
        validator.validate(json.loads(reports.cell_json(c)))
    broken = CellResult(id="c", python="3.11", backend="cpu", status="import-error", outcome="cell-error",
                        failed_imports={"equinox": "AttributeError: x"}, message="import equinox failed:\nx")
    validator.validate(json.loads(reports.cell_json(broken)))


def test_the_committed_reports_fit_the_schema():
    from pathlib import Path

    validator = _schema()
    committed = Path(__file__).resolve().parents[1] / "reports"
    for name in ("baseline.json", "checks.json"):
        validator.validate(json.loads((committed / name).read_text()))


def test_a_report_with_a_word_outside_the_vocabulary_does_not_fit():
    import jsonschema
    import pytest

    bad = json.loads(reports.cell_json(_cells()[0]))
    bad["results"][0]["outcome"] = "fine"
    with pytest.raises(jsonschema.ValidationError):
        _schema().validate(bad)

"""The reports of a run written: each cell's ``cells/<id>.json`` and ``.xml``, and the consolidated
report in its three forms, ``matrix.json`` (reports.py builds it), ``matrix.md`` (reports.py) and
the self-contained ``matrix.html`` (html.py reads the JSON), all through ``report.emit``."""

from __future__ import annotations

from pathlib import Path

from jaxcompat.model.outcomes import CellResult
from jaxcompat.report.emit import emit
from jaxcompat.report.outputs import CellReport, MatrixReport
from jaxcompat.report.reports import matrix_dict


def write_cell(cell: CellResult, reports_dir: Path) -> list[Path]:
    """``cells/<id>.json`` and ``cells/<id>.xml`` (JUnit), through ``report.emit``."""
    return emit(CellReport(cell.id, cell=cell), reports_dir / "cells", ("json", "junit"))


def write_matrix(cells: list[CellResult], reports_dir: Path, meta: dict, name: str = "matrix") -> list[Path]:
    """``<name>``.json, .md and .html, through ``report.emit``; the files written."""
    return emit(MatrixReport(name, cells=cells, meta=meta, data=matrix_dict(cells, meta)), reports_dir)

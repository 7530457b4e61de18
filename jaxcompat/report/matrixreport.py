"""The consolidated report of a run, in its three forms: ``matrix.json`` (reports.py builds it),
``matrix.md`` (reports.py) and the self-contained ``matrix.html`` (html.py reads the JSON). Kept
apart so that neither of those two modules needs the other's writer (html reads reports' summary,
reports never imports html)."""

from __future__ import annotations

import json
from pathlib import Path

from jaxcompat._util.atomic import write_text
from jaxcompat.model.outcomes import CellResult
from jaxcompat.report import html
from jaxcompat.report.reports import markdown, matrix_dict


def write_matrix(cells: list[CellResult], reports_dir: Path, meta: dict, name: str = "matrix") -> None:
    data = matrix_dict(cells, meta)
    write_text(reports_dir / f"{name}.json", json.dumps(data, indent=2) + "\n")
    write_text(reports_dir / f"{name}.md", markdown(cells, meta))
    html.write(data, reports_dir / f"{name}.html")

"""JSON: every record's data as the tools downstream read it (docs/report.schema.json)."""

from __future__ import annotations

import json

from jaxcompat.report import outputs
from jaxcompat.report.check import user_tests_json
from jaxcompat.report.reports import cell_json

suffix = ".json"
REMOVE_STALE = False


def _commits(r: outputs.CommitBisectReport) -> str:
    return json.dumps(r.result.to_dict(), indent=2, default=str) + "\n"


RENDER = {
    outputs.CraterReport: lambda r: json.dumps(r.said, indent=1) + "\n",
    outputs.CellReport: lambda r: cell_json(r.cell) + "\n",
    outputs.UserTestsReport: lambda r: user_tests_json(r.cell, r.comparison, project=r.project, warned=r.warned,
                                                       health=r.health),
    outputs.MatrixReport: lambda r: json.dumps(r.data, indent=2) + "\n",
    outputs.SurveyReport: lambda r: json.dumps(r.data, indent=1) + "\n",
    outputs.LatestReport: lambda r: json.dumps(r.data, indent=2) + "\n",
    outputs.CompatReport: lambda r: json.dumps(r.data, indent=1) + "\n",
    outputs.BisectReport: lambda r: json.dumps(r.data, indent=r.indent) + "\n",
    outputs.CommitBisectReport: _commits,
}

"""JSON: every record's data as the tools downstream read it (docs/report.schema.json). The
renderers are imported when used: the command line's start reads this registry only."""

from __future__ import annotations

import json

from jaxcompat.report import outputs

suffix = ".json"


def _cell(r: outputs.CellReport) -> str:
    from jaxcompat.report.reports import cell_json

    return cell_json(r.cell) + "\n"


def _user_tests(r: outputs.UserTestsReport) -> str:
    from jaxcompat.report.check import user_tests_json

    return user_tests_json(r.cell, r.comparison, project=r.project, warned=r.warned, health=r.health)


RENDER = {
    outputs.CraterReport: lambda r: json.dumps(r.said, indent=1) + "\n",
    outputs.CellReport: _cell,
    outputs.UserTestsReport: _user_tests,
    outputs.MatrixReport: lambda r: json.dumps(r.data, indent=2) + "\n",
    outputs.SurveyReport: lambda r: json.dumps(r.data, indent=1) + "\n",
    outputs.LatestReport: lambda r: json.dumps(r.data, indent=2) + "\n",
    outputs.CompatReport: lambda r: json.dumps(r.data, indent=1) + "\n",
    outputs.BisectReport: lambda r: json.dumps(r.data, indent=r.indent) + "\n",
    outputs.CommitBisectReport: lambda r: json.dumps(r.result.to_dict(), indent=2, default=str) + "\n",
}

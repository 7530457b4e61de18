"""JUnit XML (report/junit.py writes it): what CI test viewers show."""

from __future__ import annotations

from jaxcompat.report import crater, outputs, reports, usertests

suffix = ".xml"
REMOVE_STALE = False

RENDER = {
    outputs.CraterReport: lambda r: crater.junit(r.results),
    outputs.CellReport: lambda r: reports.junit_xml(r.cell),
    outputs.UserTestsReport: lambda r: usertests.junit(r.comparison.tests, f"{r.project} on {r.cell.id}"),
}

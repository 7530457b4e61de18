"""Markdown: what a person reads in a pull request or on GitHub."""

from __future__ import annotations

from jaxcompat.report import commitbisect as commitbisect_report
from jaxcompat.report import crater, outputs, reports, usertests
from jaxcompat.report import warnings as shown_warnings
from jaxcompat.report.survey import render_md as survey_md

suffix = ".md"
REMOVE_STALE = False


def _user_tests(r: outputs.UserTestsReport) -> str:
    return (usertests.markdown(r.comparison.tests, r.text, r.comparison.with_baseline)
            + ("\n" + shown_warnings.markdown(r.warned, projects=False) if r.warned else ""))


RENDER = {
    outputs.CraterReport: lambda r: crater.markdown(r.text, r.results, r.warned),
    outputs.UserTestsReport: _user_tests,
    outputs.MatrixReport: lambda r: reports.markdown(r.cells, r.meta),
    outputs.SurveyReport: lambda r: survey_md(r.summary, r.observations, r.rows, r.meta),
    outputs.LatestReport: lambda r: r.markdown + ("\n" + "\n".join(r.held) if r.held else ""),
    outputs.CompatReport: lambda r: r.markdown,
    outputs.CommitBisectReport: lambda r: commitbisect_report.markdown(r.result),
}

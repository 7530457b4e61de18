"""Markdown: what a person reads in a pull request or on GitHub (renderers imported when used)."""

from __future__ import annotations

from jaxcompat.report import outputs

suffix = ".md"


def _crater(r: outputs.CraterReport) -> str:
    from jaxcompat.report.crater import markdown

    return markdown(r.text, r.results, r.warned)


def _user_tests(r: outputs.UserTestsReport) -> str:
    from jaxcompat.report import warnings as shown_warnings
    from jaxcompat.report.usertests import markdown

    return (markdown(r.comparison.tests, r.text, r.comparison.with_baseline)
            + ("\n" + shown_warnings.markdown(r.warned, projects=False) if r.warned else ""))


def _matrix(r: outputs.MatrixReport) -> str:
    from jaxcompat.report.reports import markdown

    return markdown(r.cells, r.meta)


def _survey(r: outputs.SurveyReport) -> str:
    from jaxcompat.report.survey import render_md

    return render_md(r.summary, r.observations, r.rows, r.meta)


def _commits(r: outputs.CommitBisectReport) -> str:
    from jaxcompat.report.commitbisect import markdown

    return markdown(r.result)


RENDER = {
    outputs.CraterReport: _crater,
    outputs.UserTestsReport: _user_tests,
    outputs.MatrixReport: _matrix,
    outputs.SurveyReport: _survey,
    outputs.LatestReport: lambda r: r.markdown + ("\n" + "\n".join(r.held) if r.held else ""),
    outputs.CompatReport: lambda r: r.markdown,
    outputs.CommitBisectReport: _commits,
}

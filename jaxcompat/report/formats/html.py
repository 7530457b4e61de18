"""HTML: one self-contained page, no network, no script (renderers imported when used)."""

from __future__ import annotations

from jaxcompat.report import outputs

suffix = ".html"


def _crater(r: outputs.CraterReport) -> str:
    from jaxcompat.report.crater import html

    return html(r.text, r.results, r.warned, groups=r.groups, causes=r.causes, plan_text=r.plan_text,
                cost_=r.cost, gaps=r.gaps, ignored=r.ignored)


def _user_tests(r: outputs.UserTestsReport) -> str:
    from jaxcompat.report.usertests import html_page

    return html_page(r.cell.id, r.text, r.comparison.tests, r.comparison.with_baseline, cmp=r.comparison,
                     code=r.code, warned=r.warned)


def _matrix(r: outputs.MatrixReport) -> str:
    from jaxcompat.report.html import render

    return render(r.data)


def _survey(r: outputs.SurveyReport) -> str:
    from jaxcompat.report.survey_html import render

    return render(r.space, r.observations, r.rows, r.matrix_pairs, r.summary)


RENDER = {
    outputs.CraterReport: _crater,
    outputs.UserTestsReport: _user_tests,
    outputs.MatrixReport: _matrix,
    outputs.SurveyReport: _survey,
}

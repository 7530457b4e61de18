"""HTML: one self-contained page (no network, no script)."""

from __future__ import annotations

from jaxcompat.report import crater, outputs, survey_html, usertests
from jaxcompat.report import html as matrix_html

suffix = ".html"
REMOVE_STALE = False

RENDER = {
    outputs.CraterReport: lambda r: crater.html(r.text, r.results, r.warned),
    outputs.UserTestsReport: lambda r: usertests.html_page(r.cell.id, r.text, r.comparison.tests,
                                                           r.comparison.with_baseline),
    outputs.MatrixReport: lambda r: matrix_html.render(r.data),
    outputs.SurveyReport: lambda r: survey_html.render(r.space, r.observations, r.rows, r.matrix_pairs, r.summary),
}

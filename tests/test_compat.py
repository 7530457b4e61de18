"""The compatibility table (verified vs inferred, holes, a broken jax named) and ``pins``."""

import json

import pytest
from packaging.specifiers import SpecifierSet

from jaxcompat.commands import main
from jaxcompat.knowledge import compat
from jaxcompat.knowledge.config import load
from jaxcompat.model.compat import Release, Releases, Run
from jaxcompat.report import compat as compat_md
from tests.helpers import MINIMAL, failure_toml, make_tree

CASE = "cases/test_demo.py::test_bug"
RULES = (MINIMAL  # demo-bug: jax >= 0.4.32 with equinox < 0.11.8
         + failure_toml("jax-0427", CASE, '{ jax = "==0.4.27" }')
         + failure_toml("eqx-0120", CASE, '{ equinox = "==0.12.0" }')
         + failure_toml("optx-0011", CASE, '{ optimistix = "==0.0.11" }')
         + failure_toml("old-numpy", CASE, '{ jaxlib = "<0.4.26", numpy = ">=2" }')
         + failure_toml("usage", "cases/test_demo.py::test_control_ok", '{ equinox = ">=0" }') + "advisory = true\n")
JAX = ("0.4.26", "0.4.27", "0.4.28", "0.4.33")
EQX = ("0.11.7", "0.11.8", "0.11.9", "0.12.0", "0.12.1")


@pytest.fixture
def matrix(tmp_path):
    return load(make_tree(tmp_path, RULES))


def releases(jaxlib=None) -> Releases:
    def rel(v, jax=">=0.4.13", eqx=""):
        return Release(v, SpecifierSet(jax), SpecifierSet(eqx))

    return Releases(JAX, jaxlib or {j: j for j in JAX}, {
        "equinox": tuple(rel(v) for v in EQX),
        "diffrax": (rel("0.6.0", eqx=">=0.11.0"), rel("0.6.1", eqx=">=0.11.8")),
        "optimistix": (rel("0.0.10"), rel("0.0.11")),
        "lineax": (rel("0.0.7"),),
    })


def run(jax, eqx, *, source="survey", status="ok", failures=(), wrong=0, predicted=(), **more) -> Run:
    versions = {"jax": jax, "jaxlib": jax, "equinox": eqx, "diffrax": "0.6.1", "optimistix": "0.0.10",
                "lineax": "0.0.7", "chex": "0.1.87", "numpy": "1.26.4", **more}
    label = f"survey jax {jax} + equinox {eqx}" if source == "survey" else f"matrix cell jax{jax}-eqx{eqx}"
    return Run(source, label, "3.11", status, versions, tuple(failures), wrong, tuple(predicted))


def row(rows, jax):
    return next(r for r in rows if r.jax == jax)


def test_a_jax_release_broken_itself_is_named_as_the_cause_with_its_neighbours(matrix):
    rows = compat.table(releases(), matrix.failures, [])
    r = row(rows, "0.4.27")
    assert [fid for fid, _ in r.broken] == ["jax-0427"]
    assert r.instead == ["0.4.26", "0.4.28"] and r.ranges == {} and r.newest == []
    assert compat.cause(r).startswith("jax 0.4.27 itself: jax-0427, ") and compat.cause(r).endswith(
        "use 0.4.26 or 0.4.28"
    )
    # a rule that breaks only some equinox releases (demo-bug on jax 0.4.33) is not the jax's fault
    assert row(rows, "0.4.33").broken == [] and row(rows, "0.4.33").ranges["equinox"].inferred == [
        "0.11.8",
        "0.11.9",
        "0.12.1",
    ]


def test_a_jax_that_cannot_be_installed_says_so_and_names_the_neighbours(matrix):
    rows = compat.table(releases({"0.4.26": "0.4.26", "0.4.27": "0.4.27", "0.4.28": None, "0.4.33": "0.4.33"}),
                        matrix.failures, [])
    assert compat.cause(row(rows, "0.4.28")) == ("jax 0.4.28 cannot be installed from the package index on CPU; "
                                                  "use 0.4.26 or 0.4.33")


def test_a_hole_inside_a_range_is_listed_with_the_rule_and_the_run_that_saw_it(matrix):
    seen = run("0.4.33", "0.12.0", failures=["eqx-0120"])
    rng = row(compat.table(releases(), matrix.failures, [seen]), "0.4.33").ranges["equinox"]
    assert rng.inferred_ends == ("0.11.8", "0.12.1")
    assert [(h.version, h.rules) for h in rng.holes] == [("0.12.0", ("eqx-0120",))]
    assert rng.holes[0].seen == ("survey jax 0.4.33 + equinox 0.12.0: eqx-0120",)
    assert "0.12.0 (rule eqx-0120; seen in survey jax 0.4.33 + equinox 0.12.0: eqx-0120)" in compat_md._holes(rng)
    # outside the range (0.11.7, demo-bug) is no hole: the range starts after it
    assert "0.11.7" not in [h.version for h in rng.holes]


def test_verified_ends_come_from_runs_and_inferred_ones_from_the_rules_only(matrix):
    runs = [run("0.4.33", "0.11.9"), run("0.4.33", "0.11.8", source="matrix")]
    rng = row(compat.table(releases(), matrix.failures, runs), "0.4.33").ranges["equinox"]
    assert rng.verified_ends == ("0.11.8", "0.11.9") and rng.inferred_ends == ("0.11.8", "0.12.1")
    assert compat_md._ends(rng) == "0.11.8 ✓m – 0.11.9 ✓s"
    assert rng.inferred_span == "0.11.8–0.12.1"
    # no run for jax 0.4.26: nothing verified, the rules' range only
    empty = row(compat.table(releases(), matrix.failures, runs), "0.4.26").ranges["equinox"]
    assert empty.verified == {} and compat_md._ends(empty) == "—" and empty.inferred_ends == ("0.11.7", "0.12.1")


def test_a_failure_about_another_package_verifies_equinox_but_not_that_package(matrix):
    r = run("0.4.33", "0.12.1", failures=["optx-0011"], optimistix="0.0.11")
    t = row(compat.table(releases(), matrix.failures, [r]), "0.4.33")
    assert list(t.ranges["equinox"].verified) == ["0.12.1"]
    assert t.ranges["optimistix"].verified == {} and t.ranges["diffrax"].verified == {}
    assert t.newest == []  # not a clean run: no verified set


@pytest.mark.parametrize("bad", [
    dict(failures=["demo-bug"]),          # about jax + equinox
    dict(failures=["jax-0427"]),          # about the jax release alone
    dict(failures=["gone-rule"]),         # a failure no rule describes any more: about everything
    dict(wrong=1),                        # a wrong verdict: the run says nothing
    dict(status="import-error"),
    dict(predicted=["eqx-0120"]),         # today's rules predict a failure it never tried
])
def test_what_keeps_a_run_from_verifying_equinox(matrix, bad):
    assert not compat.verifies(run("0.4.33", "0.11.9", **bad), "equinox", matrix.failures)
    assert compat.verifies(run("0.4.33", "0.11.9"), "equinox", matrix.failures)


def test_an_advisory_failure_does_not_spoil_a_run_and_a_predicted_one_does(matrix, tmp_path):
    survey = {"combinations": [
        {"jax": "0.4.33", "equinox": "0.11.9", "python": "3.10", "status": "ok", "outcome": "ok",
         "failures": ["usage"], "wrong": [], "versions": {"jax": "0.4.33", "jaxlib": "0.4.33", "equinox": "0.11.9"}},
        {"jax": "0.4.33", "equinox": "0.12.1", "python": "3.10", "status": "ok", "outcome": "ok",
         "failures": [], "wrong": [], "versions": {"jax": "0.4.33", "equinox": "0.12.1", "optimistix": "0.0.11"}},
    ]}
    path = tmp_path / "survey.json"
    path.write_text(json.dumps(survey))
    a, b = compat.load_runs([path], matrix)
    assert a.failures == () and a.clean and a.label == "survey jax 0.4.33 + equinox 0.11.9"
    assert b.predicted == ("optx-0011",) and not b.clean


def test_matrix_cells_are_judged_again_by_todays_rules(matrix, tmp_path):
    cell = {"id": "jax0.4.33-eqx0.11.7", "python": "3.11", "backend": "cpu", "status": "ok",
            "versions": {"jax": "0.4.33", "jaxlib": "0.4.33", "equinox": "0.11.7"},
            "results": [{"case": CASE, "status": "failed", "outcome": "regression", "error_type": "XlaRuntimeError",
                         "error_types": ["XlaRuntimeError"], "message": "Unfortunately it broke"}]}
    gpu = {**cell, "id": "gpu", "backend": "cuda12"}
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps({"schema": 1, "cells": [cell, gpu]}))
    (r,) = compat.load_runs([path], matrix)  # the GPU cell says nothing about CPU
    assert (r.label, r.failures, r.wrong) == ("matrix cell jax0.4.33-eqx0.11.7", ("demo-bug",), 0)


def test_evidence_that_is_not_a_report_is_one_clear_error(matrix, tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(compat.EvidenceError, match="x.json: neither a survey.json"):
        compat.load_runs([bad], matrix)
    bad.write_text("{")
    with pytest.raises(compat.EvidenceError, match="x.json: not JSON"):
        compat.load_runs([bad], matrix)


def test_the_newest_clean_run_is_the_answer_with_every_pin_a_rule_names(matrix):
    runs = [run("0.4.33", "0.11.8"), run("0.4.33", "0.12.1", source="matrix"),
            run("0.4.33", "0.12.0", failures=["eqx-0120"])]
    r = row(compat.table(releases(), matrix.failures, runs), "0.4.33")
    assert [x.label for x in r.newest] == ["matrix cell jax0.4.33-eqx0.12.1"]
    reqs = compat.requirement_lines(r, matrix.failures)
    assert [q for q, _ in reqs] == ["jax==0.4.33", "jaxlib==0.4.33", "equinox==0.12.1", "diffrax==0.6.1",
                                    "optimistix==0.0.10", "lineax==0.0.7", "chex==0.1.87", "numpy==1.26.4"]
    assert reqs[0][1].startswith("verified: matrix cell jax0.4.33-eqx0.12.1 (Python 3.11")
    assert compat.answer(r, matrix.failures).startswith("equinox==0.12.1 diffrax==0.6.1")


def test_without_a_clean_run_the_answer_says_inferred_from_rules_only(matrix):
    r = row(compat.table(releases(), matrix.failures, []), "0.4.28")
    assert [q for q, _ in compat.requirement_lines(r)] == ["jax==0.4.28", "jaxlib==0.4.28", "equinox==0.12.1"]
    assert "inferred from rules only" in compat.answer(r)


def _write_compat(matrix, tmp_path, runs):
    rows = compat.table(releases(), matrix.failures, runs)
    path = tmp_path / "compat.json"
    path.write_text(json.dumps(compat.to_json(rows, ["reports/survey.json"], matrix.failures)))
    (tmp_path / "compat.md").write_text(compat_md.render_md(rows, ["reports/survey.json"], matrix.failures))
    return path


def test_pins_prints_a_verified_set_a_requirements_reader_accepts(matrix, tmp_path, capsys):
    from jaxcompat.env.candidate import read_requirements

    path = _write_compat(matrix, tmp_path, [run("0.4.33", "0.12.1")])
    out = tmp_path / "req.txt"
    assert main(["pins", "--jax", "0.4.33", "--compat", str(path), "-o", str(out)]) == 0
    text = out.read_text()
    assert "jax==0.4.33  " in text and "# verified: survey jax 0.4.33 + equinox 0.12.1" in text
    assert read_requirements(["-r", str(out)])[:3] == ["jax==0.4.33", "jaxlib==0.4.33", "equinox==0.12.1"]
    assert main(["pins", "--jax", "0.4.33", "--compat", str(path)]) == 0
    assert capsys.readouterr().out == text


def test_pins_exit_status_says_how_far_to_trust_them(matrix, tmp_path, capsys):
    path = _write_compat(matrix, tmp_path, [])
    assert main(["pins", "--jax", "0.4.28", "--compat", str(path)]) == 1  # inferred only
    assert "NOT VERIFIED" in capsys.readouterr().out
    assert main(["pins", "--jax", "0.4.27", "--compat", str(path)]) == 1  # broken itself, nothing printed
    captured = capsys.readouterr()
    assert captured.out == "" and "jax 0.4.27 itself: jax-0427" in captured.err
    assert main(["pins", "--jax", "0.3.0", "--compat", str(path)]) == 2
    assert "jax 0.3.0: not a jax release jax-compat knows (compat.json covers 4 releases, 0.4.26 … 0.4.33)" \
        in capsys.readouterr().err
    assert main(["pins", "--jax", "0.4.33", "--compat", str(tmp_path / "missing.json")]) == 2
    assert "generate it with `python -m jaxcompat compat`" in capsys.readouterr().err


def test_compat_md_says_what_generates_it_and_what_each_mark_means(matrix, tmp_path):
    _write_compat(matrix, tmp_path, [run("0.4.33", "0.11.9")])
    md = (tmp_path / "compat.md").read_text()
    assert "Generated by `python -m jaxcompat compat`" in md
    for mark in ("**✓s**", "**✓m**", "**~**", "**holes**", "**jax X itself**"):
        assert mark in md
    assert "- **jax 0.4.27**: jax 0.4.27 itself: jax-0427" in md
    assert "| 0.4.33 | 0.4.33 | 0.11.9 ✓s | 0.11.8–0.12.1 | 0.12.0 (rule eqx-0120) |" in md


def test_the_committed_table_matches_the_committed_evidence():
    """reports/compat.json names its sources, and every verified set in it is a clean run there."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    data = json.loads((root / "reports" / "compat.json").read_text())
    m = load(root / "matrix.toml")
    runs = compat.load_runs([root / s for s in data["sources"]], m)
    for r in data["rows"]:
        if not r["verified_set"]:
            continue
        label = r["requirements"][0]["evidence"].split("verified: ")[1].split(" (Python")[0].split(" and ")[0]
        (match,) = [x for x in runs if x.label == label]
        assert match.clean
        pinned = dict(q["requirement"].split("==") for q in r["requirements"])
        assert all(match.versions[d] == v for d, v in pinned.items())


def test_a_check_run_recorded_with_add_becomes_evidence_marked_c(matrix, tmp_path):
    check = {"id": "check-1234", "python": "3.10", "backend": "cpu", "status": "ok",
             "versions": {"jax": "0.4.33", "jaxlib": "0.4.33", "equinox": "0.12.1"},
             "deprecations": [{"package": "equinox", "where": "x.py:1", "message": "m", "category": "D", "case": None}],
             "results": [{"case": CASE, "status": "passed", "outcome": "pass", "message": "noise",
                          "traceback": "  File <root>/x.py", "fix": "f", "upstream": ["u"]}]}
    report = tmp_path / "check.json"
    report.write_text(json.dumps(check))
    reports = tmp_path / "reports"
    assert compat.record(report, reports) == ["check-1234"]
    assert compat.record(report, reports) == ["check-1234"]  # the same id again: replaced, not doubled
    stored = json.loads((reports / compat.CHECKS).read_text())
    (cell,) = stored["cells"]
    assert cell["results"] == [{"case": CASE, "status": "passed", "outcome": "pass"}] and "deprecations" not in cell
    (r,) = compat.load_runs(compat.default_evidence(reports), matrix)
    assert (r.source, r.label, r.clean) == ("check", "check run check-1234 of jax 0.4.33 + equinox 0.12.1", True)
    rng = row(compat.table(releases(), matrix.failures, [r]), "0.4.33").ranges["equinox"]
    assert compat_md._ends(rng) == "0.12.1 ✓c"
    report.write_text('{"cells": []}')
    with pytest.raises(compat.EvidenceError, match="check.json: not a report of cells"):
        compat.record(report, reports)


def test_inferred_pins_name_the_rules_that_depend_on_what_is_left_unpinned(matrix, tmp_path, capsys):
    r = row(compat.table(releases(), matrix.failures, []), "0.4.26")
    # jaxlib 0.4.26 is outside old-numpy's jaxlib<0.4.26; optimistix 0.0.11 applies whatever the jax
    assert compat.cautions(r, matrix.failures) == ["avoid optimistix==0.0.11 (optx-0011)"]
    older = Releases(("0.4.25",), {"0.4.25": "0.4.25"}, releases().packages)
    r = row(compat.table(older, matrix.failures, []), "0.4.25")
    # a bound on a package jax installs anyway becomes a constraint line, not a caution
    assert compat.requirement_lines(r, matrix.failures)[-1] == ("numpy<2", "inferred from rules only: avoids old-numpy")
    assert compat.cautions(r, matrix.failures) == ["avoid optimistix==0.0.11 (optx-0011)"]
    path = _write_compat(matrix, tmp_path, [])
    assert main(["pins", "--jax", "0.4.26", "--compat", str(path)]) == 1
    assert "# caution: avoid optimistix==0.0.11 (optx-0011)\n" in capsys.readouterr().out
    # a verified set pins every version it ran: nothing left to caution about
    r = row(compat.table(releases(), matrix.failures, [run("0.4.33", "0.12.1")]), "0.4.33")
    assert compat.cautions(r, matrix.failures) == []


def test_the_survey_maps_range_ends_ignore_advisory_failures():
    from jaxcompat.knowledge.survey import Observation
    from jaxcompat.model.outcomes import CaseResult, CellResult
    from jaxcompat.model.survey import Combo
    from jaxcompat.operations import survey

    seen = CaseResult(case=CASE, failure="usage", expected="fail", outcome="reproduced", duration_s=0.1, message="")
    cell = CellResult(id="survey-jax0.6.2-eqx0.12.2", python="3.10", backend="cpu", status="ok",
                      results=[seen], requested={"jax": "0.6.2", "equinox": "0.12.2"})
    o = Observation(Combo("0.6.2", "0.12.2"), cell)
    assert (
        survey._mark(o, {"usage"}) == "clean" and survey._mark(o) == "failed" and survey._mark(None) == "not surveyed"
    )

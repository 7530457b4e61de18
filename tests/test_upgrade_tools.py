"""check (candidate), bisect, compare and latest: their logic, without installing anything."""

from __future__ import annotations

import json

import pytest

from jaxcompat.env.candidate import CandidateError, candidate_cell, read_requirements
from jaxcompat.knowledge.config import load
from jaxcompat.model.outcomes import CaseResult, CellResult, parse_cells
from jaxcompat.operations import bisect as bisect_mod
from jaxcompat.operations.latest import load_baseline, refresh_baseline, report_latest, update_baseline
from jaxcompat.report import bisect as bisect_report
from jaxcompat.report.candidate import verdict
from jaxcompat.report.compare import compare, render
from jaxcompat.report.emit import emit
from tests.helpers import MINIMAL, make_tree

# -- check -------------------------------------------------------------------------------------

def test_candidate_cell_pins_and_companions():
    cell = candidate_cell(["jax==0.4.35", "equinox==0.11.6", "diffrax>=0.6"], python="3.11")
    assert cell.pins["jax"] == "0.4.35" and "jaxlib" not in cell.pins  # decided from jax's metadata
    assert cell.pins["equinox"] == "0.11.6" and cell.pins["diffrax"] == ">=0.6"
    assert cell.pins["optimistix"] == "*" and cell.pins["chex"] == "*"
    assert cell.exact_pins() == {"jax": "0.4.35", "equinox": "0.11.6"}
    assert cell.id.startswith("check-")


@pytest.mark.parametrize(
    "bad",
    [
        "jax==0.4.33; rm -rf ~",
        "jax==0.4.33 && rm -rf ~",
        "$(reboot)",
        "jax @ ftp://evil.example/jax.whl",
        "jax @ file:///no/such/jax-0.4.33-py3-none-any.whl",
        'jax==0.4.33; python_version<"3.12"',
    ],
)
def test_candidate_rejects_non_requirements(bad):
    with pytest.raises(CandidateError):
        candidate_cell([bad], python="3.11")


def test_candidate_rejects_duplicates_and_nothing():
    with pytest.raises(CandidateError):
        candidate_cell(["jax==0.4.33", "JAX==0.4.31"], python="3.11")
    with pytest.raises(CandidateError):
        candidate_cell([], python="3.11")


def test_requirements_file(tmp_path):
    f = tmp_path / "req.txt"
    f.write_text("# candidate\njax==0.4.35  # pinned\n\nequinox==0.11.8\n")
    assert read_requirements(["-r", str(f), "chex"]) == ["jax==0.4.35", "equinox==0.11.8", "chex"]
    with pytest.raises(CandidateError):
        read_requirements(["-r", str(tmp_path / "missing.txt")])


def _case(case, outcome, failure=None, message=""):
    return CaseResult(case, failure, "fail" if failure else "pass", outcome, 0.1, message)


ADVISORY = MINIMAL + '''
[[failure]]
id = "pitfall"
cases = ["cases/test_demo.py::test_control_ok"]
affects = { jax = ">=0" }
advisory = true
error = "Failed"
match = "x"
upstream = ["https://github.com/patrick-kidger/equinox/issues/645"]
fix = "use the other API"
'''


def test_verdict_safe_unsafe_and_advisory(tmp_path):
    matrix = load(make_tree(tmp_path, ADVISORY))
    cell = CellResult(id="c", python="3.11", backend="cpu", status="ok", versions={"jax": "0.4.35"})
    cell.results = [_case("cases/test_demo.py::test_control_ok", "reproduced", "pitfall"),
                    _case("cases/test_demo.py::test_other", "pass")]
    text, safe = verdict(cell, matrix)
    assert safe and "advisories" in text and "use the other API" in text
    cell.results.append(_case("cases/test_demo.py::test_bug", "reproduced", "demo-bug"))
    text, safe = verdict(cell, matrix)
    assert not safe and "upgrade equinox to >=0.11.8" in text and "what to pin instead" in text
    cell.results[-1] = _case("cases/test_demo.py::test_bug", "regression", None, "TypeError: new")
    text, safe = verdict(cell, matrix)
    assert not safe and "no known explanation" in text and "TypeError: new" in text
    cell.results[-1] = _case("cases/test_demo.py::test_bug", "stale", "demo-bug")
    text, safe = verdict(cell, matrix)
    assert not safe and "did not happen" in text


def test_verdict_for_a_cell_that_cannot_install(tmp_path):
    matrix = load(make_tree(tmp_path))
    cell = CellResult(id="c", python="3.11", backend="cpu", status="unresolvable", outcome="cell-error",
                      message="error: No solution found\n  because jax==9 does not exist")
    text, safe = verdict(cell, matrix)
    assert not safe and "unresolvable" in text and "jax==9" in text


# -- bisect ------------------------------------------------------------------------------------

def _fake_index(monkeypatch, versions, yanked=()):
    info = {v: {"date": "2024-01-01", "yanked": v in yanked} for v in versions}
    monkeypatch.setattr(bisect_mod.releases, "release_info", lambda dist, cache, need=None: info)
    monkeypatch.setattr(bisect_mod.releases, "versions",
                        lambda dist, cache, include_yanked=False, refresh=False: list(versions))
    monkeypatch.setattr(bisect_mod, "co_installable", lambda package, versions, pins, cache: versions)


def _fake_runs(behaviour):
    """behaviour: version -> 'pass' | 'fail' (the documented error) | 'other' (another error) |
    'uninstallable'. An ``observe`` (bisect's seam for real cells) and the environments it built."""
    built = []

    def observe(reqs, cell_id, cases):
        version = next(r.split("==", 1)[1] for r in reqs if r.startswith("equinox=="))
        built.append(version)
        kind = behaviour[version]
        res = CellResult(id=cell_id, python="3.11", backend="cpu", status="ok", versions={"equinox": version})
        if kind == "uninstallable":
            res.status, res.message = "unresolvable", "No solution found"
        else:
            err, msg = {"pass": ("", ""), "fail": ("XlaRuntimeError", "Unfortunately you do not appear"),
                        "other": ("ImportError", "cannot import name 'x'")}[kind]
            res.results = [CaseResult("cases/test_demo.py::test_bug", None, "pass",
                                      "pass" if kind == "pass" else "regression", 0.1, msg, err,
                                      error_types=[err] if err else [])]
        return res

    return observe, built


VERSIONS = [f"0.11.{i}" for i in range(13)]


def _bisect(tmp_path, observe, target="demo-bug", good=None, bad=None, pins=("jax==0.4.33",)):
    matrix = load(make_tree(tmp_path))
    return bisect_mod.bisect(matrix, target, "equinox", good=good, bad=bad, pins=list(pins),
                             python="3.11", state_dir=tmp_path, observe=observe, progress=lambda m: None)


def test_bisect_finds_the_affected_range_without_good_or_bad(monkeypatch, tmp_path):
    _fake_index(monkeypatch, VERSIONS)
    observe, built = _fake_runs({v: "fail" if i < 7 else "pass" for i, v in enumerate(VERSIONS)})
    r = _bisect(tmp_path, observe)
    assert (r.first_bad, r.last_good) == ("0.11.0", None)
    assert (r.fixed, r.last_affected) == ("0.11.7", "0.11.6")
    assert r.message == ("demo-bug along equinox: present from 0.11.0, the oldest equinox release that can "
                         "say; fixed in 0.11.7 (last affected 0.11.6)")
    assert r.environments == len(built) <= 3 + 2 * 4  # a present release, the ends, log2(13) each side
    assert "environments built" in bisect_report.render(r)


def test_bisect_skips_steps_that_cannot_say(monkeypatch, tmp_path):
    _fake_index(monkeypatch, VERSIONS)
    behaviour = {v: "pass" for v in VERSIONS}
    behaviour.update({"0.11.0": "uninstallable", "0.11.1": "other", "0.11.2": "other"})  # too old to say
    behaviour.update({v: "fail" for v in ("0.11.6", "0.11.7", "0.11.8", "0.11.9")})
    behaviour["0.11.8"] = "uninstallable"
    behaviour["0.11.4"] = "other"
    observe, _ = _fake_runs(behaviour)
    r = _bisect(tmp_path, observe)
    assert (r.first_bad, r.last_good) == ("0.11.6", "0.11.5")
    assert (r.fixed, r.last_affected) == ("0.11.10", "0.11.9")
    assert "introduced in 0.11.6 (last clean 0.11.5); fixed in 0.11.10 (last affected 0.11.9)" in r.message
    assert "0.11.0" in r.skipped or "0.11.1" in r.skipped


def test_bisect_skips_yanked_unless_named(monkeypatch, tmp_path):
    _fake_index(monkeypatch, VERSIONS, yanked={"0.11.5"})
    observe, built = _fake_runs({v: "pass" if i < 5 else "fail" for i, v in enumerate(VERSIONS)})
    r = _bisect(tmp_path, observe, pins=())
    assert "0.11.5" not in built and r.first_bad == "0.11.6" and r.fixed is None
    assert "not fixed up to 0.11.12" in r.message
    r = _bisect(tmp_path, observe, good="0.11.5", bad="0.11.8", pins=())
    assert r.first_bad == "0.11.5"


def test_bisect_reports_no_change(monkeypatch, tmp_path):
    _fake_index(monkeypatch, VERSIONS)
    observe, _ = _fake_runs({v: "pass" for v in VERSIONS})
    r = _bisect(tmp_path, observe)
    assert r.first_bad is None and "no change" in r.message


def test_bisect_candidates_co_install_by_metadata(monkeypatch, tmp_path):
    from packaging.specifiers import SpecifierSet

    declared = {("equinox", "0.11.0", "jax"): ">=0.4.13", ("equinox", "0.11.11", "jax"): ">=0.4.38"}
    monkeypatch.setattr(bisect_mod.resolution, "declared",
                        lambda d, v, on, cache: SpecifierSet(declared.get((d, v, on), "")))
    assert bisect_mod.co_installable("equinox", ["0.11.0", "0.11.11"], ["jax==0.4.33"], tmp_path) == ["0.11.0"]


def test_bisect_unknown_target(tmp_path):
    matrix = load(make_tree(tmp_path))
    with pytest.raises(bisect_mod.BisectError):
        bisect_mod.target_failure("no-such-thing", matrix)


# -- compare and latest ------------------------------------------------------------------------

def _run(outcome="pass", jax="0.4.35", status="ok"):
    return parse_cells({"cells": [{"id": "latest", "status": status, "versions": {"jax": jax},
                                 "results": [{"case": "cases/a.py::test_x", "outcome": outcome, "message": "boom"}]}]})


def test_compare_reports_moves():
    d = compare(_run("pass", "0.4.35"), _run("regression", "0.4.36"))
    assert d.regressed and d.versions == [("latest", "jax", "0.4.35", "0.4.36")]
    assert d.moved[0][2:4] == ("pass", "regression")
    text = render(d)
    assert "REGRESSION" in text and "jax 0.4.35 -> 0.4.36" in text
    fixed = compare(_run("reproduced"), _run("stale"))
    assert fixed.fixed and fixed.regressed  # a stale rule fails the run too
    assert compare(_run(), _run()).empty


def test_compare_cells_added_and_removed():
    old = parse_cells({"cells": [{"id": "a", "results": []}]})
    new = parse_cells({"cells": [{"id": "b", "results": []}]})
    d = compare(old, new)
    assert d.added_cells == ["b"] and d.removed_cells == ["a"] and not d.regressed


def test_latest_report_writes_diff_and_issue_body(tmp_path):
    result = CellResult(id="latest", python="3.12", backend="cpu", status="ok", versions={"jax": "0.10.2"})
    result.results = [CaseResult("cases/a.py::test_x", None, "pass", "regression", 0.2, "TypeError: new break")]
    said, text, regressed = report_latest(result, _run("pass", "0.10.1"))
    emit(said, tmp_path)
    assert regressed and "jax 0.10.1 -> 0.10.2" in text
    body = (tmp_path / "latest-issue.md").read_text()
    assert "TypeError: new break" in body and "nox -s latest" in body
    assert "Since the baseline" in (tmp_path / "latest.md").read_text()
    update_baseline(tmp_path / "baseline.json", [result.to_dict()])
    update_baseline(tmp_path / "baseline.json", [result.to_dict()])
    assert [c["id"] for c in json.loads((tmp_path / "baseline.json").read_text())["cells"]] == ["latest"]



def test_every_outcome_that_fails_the_run_reaches_the_nightly_issue_body(tmp_path):
    from jaxcompat.model.outcomes import FAILING_OUTCOMES

    result = CellResult(id="latest", python="3.12", backend="cpu", status="ok", versions={"jax": "0.10.2"})
    result.results = [CaseResult(f"cases/a.py::test_{o}", None, "pass", o, 0.1, f"E: {o} here")
                      for o in sorted(FAILING_OUTCOMES)]
    said, _, regressed = report_latest(result, _run("pass", "0.10.1"))
    emit(said, tmp_path)
    body = (tmp_path / "latest-issue.md").read_text()
    assert regressed and "flaky" in FAILING_OUTCOMES
    assert all(f"`cases/a.py::test_{o}` | {o} |" in body for o in FAILING_OUTCOMES)

def test_resolver_trap_suggests_the_nearest_release_outside_the_range(monkeypatch, tmp_path):
    from jaxcompat.env.candidate import escape_pins

    matrix = load(make_tree(tmp_path))  # demo-bug: jax >= 0.4.32, equinox < 0.11.8
    monkeypatch.setattr("jaxcompat.env.releases.versions",
                        lambda dist, cache, **kw: {"equinox": VERSIONS, "jax": ["0.4.31", "0.4.33", "0.4.35"]}[dist])
    res = CellResult(
        id="c",
        python="3.11",
        backend="cpu",
        status="ok",
        versions={"jax": "0.4.33", "equinox": "0.11.6"},
        results=[CaseResult("cases/test_demo.py::test_bug", "demo-bug", "fail", "reproduced", 0.1, "", "")],
    )
    # the user pinned only diffrax: equinox was the resolver's choice -> upgrade it past the bug
    assert escape_pins(res, matrix, ["diffrax==0.6.0"], tmp_path) == ["jax==0.4.31", "equinox==0.11.8"]
    # the user pinned jax exactly: only equinox can move
    assert escape_pins(res, matrix, ["jax==0.4.33"], tmp_path) == ["equinox==0.11.8"]


def _suite(outcomes: dict[str, str], jax="0.12.0.1") -> list[CellResult]:
    return parse_cells({"cells": [{"id": "latest", "status": "ok", "versions": {"jax": jax},
                                 "results": [{"case": c, "outcome": o, "message": f"E: {o}"}
                                             for c, o in outcomes.items()]}]})


def test_cases_added_to_the_suite_since_the_baseline_are_one_line_not_one_change_each():
    old = {f"cases/a.py::test_{i}": "pass" for i in range(3)}
    added = {f"cases/new.py::test_{i}": ("skipped" if i % 10 == 0 else "pass") for i in range(42)}
    d = compare(_suite(old), _suite({**old, **added}), match_single=True)
    assert len(d.new_cases) == 42 and not d.moved and not d.regressed and not d.empty
    text = render(d, "baseline", "tonight's newest releases")
    assert "absent" not in text and text.count("\n") == 1
    assert "+ 42 case(s) not in the baseline (added to the suite since), none failing the run: 37 pass, 5 skipped" \
        in text
    # a new case that fails the run is news of its own, listed as a regression
    d = compare(_suite(old), _suite({**old, "cases/new.py::test_x": "regression"}), match_single=True)
    assert d.regressed and [m.case for m in d.moved] == ["cases/new.py::test_x"] and not d.new_cases
    assert "REGRESSION" in render(d)
    # and a case the baseline had that did not run tonight is said once too
    d = compare(_suite(old), _suite(dict(list(old.items())[:1])), match_single=True)
    assert len(d.gone_cases) == 2 and "- 2 case(s) of the baseline not run in this run" in render(d)


def test_refresh_baseline_writes_only_when_tonight_differs(tmp_path):
    path = tmp_path / "baseline.json"
    update_baseline(path, [c.to_dict() for c in _suite({"cases/a.py::test_x": "pass"}, jax="0.11.2")])
    path.write_text(path.read_text().replace('"schema": 1', '"schema": 1, "other": "kept"'))
    same = _suite({"cases/a.py::test_x": "pass"}, jax="0.11.2")[0]
    before = path.read_text()
    assert not refresh_baseline(path, same, load_baseline(path)) and path.read_text() == before
    tonight = _suite({"cases/a.py::test_x": "pass", "cases/b.py::test_y": "pass"}, jax="0.12.0.1")[0]
    assert refresh_baseline(path, tonight, load_baseline(path))
    data = json.loads(path.read_text())
    assert data["other"] == "kept" and data["cells"][0]["versions"]["jax"] == "0.12.0.1"
    assert compare(load_baseline(path), [tonight], match_single=True).empty  # the next night: no change


def test_latest_refresh_baseline_on_the_command_line(tmp_path, monkeypatch, capsys):
    from jaxcompat.commands import main
    from jaxcompat.operations import latest

    make_tree(tmp_path)
    baseline = tmp_path / "baseline.json"
    update_baseline(baseline, [c.to_dict() for c in _suite({"cases/a.py::test_x": "pass"})])
    tonight = _suite({"cases/a.py::test_x": "pass", **{f"cases/n.py::test_{i}": "pass" for i in range(42)}})[0]
    monkeypatch.setattr(latest, "run_latest", lambda *a, **k: tonight)
    argv = ["latest", "--matrix", str(tmp_path / "matrix.toml"), "--reports", str(tmp_path / "reports"),
            "--state", str(tmp_path / "state"), "--baseline", str(baseline), "--refresh-baseline"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "+ 42 case(s) not in the baseline" in out and "absent" not in out
    assert f"baseline updated: {baseline}" in out
    assert "+ 42 case(s) not in the baseline" in (tmp_path / "reports" / "latest.md").read_text()
    assert main(argv) == 0  # the next night, the same releases: nothing to report, nothing to propose
    out = capsys.readouterr().out
    assert "No change between baseline and tonight's newest releases." in out
    assert f"baseline unchanged (tonight matches it): {baseline}" in out


def test_the_nightly_never_blesses_a_regression(tmp_path, monkeypatch, capsys):
    """Regression (084bcdf: --refresh-baseline stored tonight's regressed result, and the proposal
    would have made it the new normal: the next night said "No change")."""
    from jaxcompat.commands import main
    from jaxcompat.operations import latest

    make_tree(tmp_path)
    baseline = tmp_path / "baseline.json"
    update_baseline(baseline, [c.to_dict() for c in _suite({"cases/a.py::test_x": "pass",
                                                            "cases/a.py::test_y": "pass"})])
    tonight = _suite({"cases/a.py::test_x": "regression", "cases/a.py::test_y": "pass",
                      "cases/b.py::test_new": "pass", "cases/b.py::test_bad": "regression"}, jax="0.12.0.1")[0]
    monkeypatch.setattr(latest, "run_latest", lambda *a, **k: tonight)
    argv = ["latest", "--matrix", str(tmp_path / "matrix.toml"), "--reports", str(tmp_path / "reports"),
            "--state", str(tmp_path / "state"), "--baseline", str(baseline), "--refresh-baseline"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "kept out of the baseline" in out and "cases/a.py::test_x: pass -> regression" in out
    stored = {r["case"]: r["outcome"] for r in json.loads(baseline.read_text())["cells"][0]["results"]}
    assert stored == {"cases/a.py::test_x": "pass", "cases/a.py::test_y": "pass", "cases/b.py::test_new": "pass"}
    md = (tmp_path / "reports" / "latest.md").read_text()
    assert "## Kept out of the baseline" in md and "cases/b.py::test_bad" in md
    assert main(argv) == 1  # the next night: still flagged, never "No change"
    assert "No change" not in capsys.readouterr().out

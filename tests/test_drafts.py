"""Error signatures, regions, drafted rules and the edge search: their logic, on synthetic
observations (no jax, no network). The recorded real runs are replayed in test_unknown_failure.py."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from packaging.version import Version

from jaxcompat.knowledge import config, drafts, signature
from jaxcompat.knowledge.outcomes import classify
from jaxcompat.model.outcomes import CellResult, RawResult
from jaxcompat.operations import edges, region
from jaxcompat.operations.bisect import Target
from jaxcompat.report import draftrules
from jaxcompat.report import region as region_report
from jaxcompat.report.edges import COVERAGE_HEADING, splice_coverage
from tests.helpers import specs_equal

ROOT = Path(__file__).resolve().parents[1]
TB = ('  File "<root>/cases/test_weak_type_closure.py", line 40, in test_x\n    f(x)\n'
      '  File "{site}/equinox/_closure_convert.py", line 44, in _fn\n    raise ValueError(...)\n')


def _raw(case, status="failed", message="", error="ValueError", site="/e/lib/python3.11/site-packages"):
    return RawResult(case=case, status=status, error_types=[error, "Exception"] if status == "failed" else [],
                     message=message, traceback=TB.format(site=site) if status == "failed" else "")


# -- signatures -------------------------------------------------------------------------------

def test_a_signature_ignores_what_varies_between_runs():
    a = signature.of(_raw("c", message="ValueError: not enough values to unpack (expected 2, got 1)"))
    b = signature.of(_raw("c", message="ValueError: not enough values to unpack (expected 2, got 0)",
                          site="<env>/lib/python3.10/site-packages"))
    assert a == b
    assert a.frame == "equinox/_closure_convert.py:_fn" and a.package == "equinox"
    assert a.message == "not enough values to unpack (expected <n>, got <n>)"
    assert signature.parse(a.key) == a
    other = signature.of(_raw("c", message="ValueError: something else"))
    assert other != a


def test_addresses_and_paths_are_normalised_and_the_pattern_matches_the_originals():
    msg = "TypeError: <function f at 0x7f3a2c> got shape (3, 4) from /home/u/venv/lib/x.py"
    sig = signature.of(_raw("c", message=msg, error="TypeError"))
    assert "0x" not in sig.message and "/home" not in sig.message
    assert re.search(sig.pattern(), msg)
    assert re.search(sig.pattern(), msg.replace("0x7f3a2c", "0x1").replace("(3, 4)", "(10, 2)"))


def test_a_case_frame_and_a_crash_have_signatures_too():
    r = RawResult(case="c", status="failed", error_types=["AssertionError"], message="AssertionError: boom",
                  traceback='  File "/any/where/cases/test_a.py", line 3, in test_b\n')
    assert signature.of(r).frame == "cases/test_a.py:test_b" and signature.of(r).package == ""
    crash = signature.of(RawResult(case="c", status="crash", message="killed by signal 11 (SIGSEGV)"))
    assert crash.error == "crash" and crash.message == "killed by signal <n> (SIGSEGV)"


def test_trailing_punctuation_that_changes_between_releases_is_not_part_of_the_message():
    a = signature.of(_raw("c", message="ValueError: called with different arguments provided:\n\nCalled with: x"))
    b = signature.of(_raw("c", message="ValueError: called with different arguments provided."))
    assert a == b and re.search(a.pattern(), "ValueError: called with different arguments provided.")


def test_an_unreadable_signature_is_a_clear_error():
    with pytest.raises(ValueError, match="Type: message"):
        signature.parse("no type here")


# -- drafts -----------------------------------------------------------------------------------

CASE = "cases/test_weak_type_closure.py::test_filter_closure_convert_weak_example"
MSG = "ValueError: Closure-converted function called with different dynamic arguments to the example"


def _matrix_without(rule: str):
    m = config.load(ROOT / "matrix.toml")
    return m, replace(m, failures=tuple(f for f in m.failures if f.id != rule))


def _cell(jax, eqx, fails: bool, cid=None, matrix=None):
    versions = {"jax": jax, "jaxlib": jax, "equinox": eqx}
    raw = _raw(CASE, message=MSG) if fails else _raw(CASE, status="passed")
    failures = matrix.failures if matrix else ()
    return CellResult(id=cid or f"c-{jax}-{eqx}", python="3.11", backend="cpu", status="ok", versions=versions,
                      results=[classify(raw, failures, versions, "cpu")])


def test_a_draft_is_a_valid_rule_that_turns_exactly_its_regressions_into_reproduced(tmp_path):
    full, without = _matrix_without("weak-type-closure")
    cells = [_cell("0.4.33", "0.11.6", True, matrix=without), _cell("0.4.35", "0.11.5", True, matrix=without),
             _cell("0.4.31", "0.11.6", False, matrix=without)]
    groups = drafts.unexplained(cells)
    assert len(groups) == 1
    g = next(iter(groups.values()))
    assert g.cases == {CASE} and g.id == "draft-equinox-closure-convert-fn-valueerror"
    affects = drafts.box(g, cells)
    assert affects == [{"jax": ">=0.4.33,<=0.4.35", "equinox": ">=0.11.5,<=0.11.6"}]
    path = draftrules.write(tmp_path / draftrules.FILE, [drafts.draft(g, affects, "a test")], without)
    text = path.read_text()
    assert "upstream = []" in text and "search upstream for: equinox" in text
    merged = config.merge_rules(without, path)  # --rules works at once
    assert merged.failure(g.id).errors == ("ValueError",)
    report = drafts.verify(cells, without, path)
    assert report == {"drafts": [g.id], "turned_reproduced": 2, "other_changes": [], "relabelled": []}


def test_a_box_contradicted_by_a_clean_observation_falls_back_to_the_combinations():
    _, without = _matrix_without("weak-type-closure")
    cells = [_cell("0.4.33", "0.11.4", True, matrix=without), _cell("0.4.35", "0.11.6", True, matrix=without),
             _cell("0.4.34", "0.11.5", False, matrix=without)]
    g = next(iter(drafts.unexplained(cells).values()))
    assert drafts.box(g, cells) == [{"jax": "==0.4.33", "equinox": "==0.11.4"},
                                    {"jax": "==0.4.35", "equinox": "==0.11.6"}]


def test_a_draft_file_keeps_other_drafts_and_drops_promoted_ones(tmp_path):
    full, without = _matrix_without("weak-type-closure")
    cells = [_cell("0.4.33", "0.11.6", True, matrix=without)]
    g = next(iter(drafts.unexplained(cells).values()))
    path = tmp_path / draftrules.FILE
    draftrules.write(path, [drafts.draft(g, [{"jax": "==0.4.33"}], "x"),
                            {**drafts.draft(g, [{"jax": "==0.4.1"}], "y"), "id": "draft-other"}], without)
    assert {d["id"] for d in draftrules.read(path)} == {g.id, "draft-other"}
    draftrules.write(path, [{**drafts.draft(g, [{"jax": "==0.4.1"}], "y"), "id": "weak-type-closure"}], full)
    assert "weak-type-closure" not in {d["id"] for d in draftrules.read(path)}


# -- regions ----------------------------------------------------------------------------------

JAX = ["0.4.13", "0.4.20", "0.4.30", "0.4.31", "0.4.33", "0.4.35", "0.4.38", "0.5.0"]
EQX = ["0.10.6", "0.11.0", "0.11.4", "0.11.5", "0.11.6", "0.11.7", "0.11.8", "0.12.0"]


def _oracle(present, importable=lambda j, e: True, log=None):
    def observe(reqs, cell_id, cases):
        pins = dict(r.split("==") for r in reqs)
        j, e = pins["jax"], pins.get("equinox", "0.11.6")
        if log is not None:
            log.append((j, e))
        if not importable(j, e):
            return CellResult(id=cell_id, python="3.11", backend="cpu", status="import-error",
                              message="AttributeError: gone")
        versions = {"jax": j, "equinox": e}
        raw = _raw(CASE, message=MSG) if present(j, e) else _raw(CASE, status="passed")
        return CellResult(id=cell_id, python="3.11", backend="cpu", status="ok", versions=versions,
                          results=[classify(raw, (), versions, "cpu")])
    return observe


def _target():
    sig = signature.of(_raw(CASE, message=MSG))
    return Target.of_signature(sig, [CASE], {"jax": "0.4.33", "equinox": "0.11.6"})


def _bound_both(without, observe, tmp_path):
    """The region along jax and equinox from (0.4.33, 0.11.6), observed by ``observe``."""
    return region.bound(without, _target(), {"jax": "0.4.33", "equinox": "0.11.6"}, axes=["jax", "equinox"],
                        python="3.11", state_dir=tmp_path, observe=observe, candidates={"jax": JAX, "equinox": EQX},
                        dates={"jax": {}, "equinox": {}}, progress=lambda m: None)


def test_a_region_is_bounded_along_each_package_and_confirmed_a_rectangle(tmp_path):
    log: list = []
    inside = lambda j, e: Version(j) >= Version("0.4.31") and Version(e) < Version("0.11.7")  # noqa: E731
    importable = lambda j, e: not (Version(j) >= Version("0.5.0") and Version(e) < Version("0.11.0"))  # noqa: E731
    _, without = _matrix_without("weak-type-closure")
    reg = _bound_both(without, _oracle(inside, importable, log), tmp_path)
    assert reg.clause == {"jax": ">=0.4.31", "equinox": "<0.11.7"}
    jb, eb = reg.bounds
    assert (jb.last_good, jb.first_bad, jb.fixed) == ("0.4.30", "0.4.31", None)
    assert (eb.last_good, eb.first_bad, eb.last_affected, eb.fixed) == (None, "0.10.6", "0.11.6", "0.11.7")
    assert reg.shape == "rectangle"
    assert reg.environments == len(set(log)) < len(JAX) + len(EQX)
    assert "rectangle" in region_report.render(reg)


def test_a_region_that_is_not_a_rectangle_says_so(tmp_path):
    # present only on the two axes through (0.4.33, 0.11.6): a cross, not a box
    cross = lambda j, e: (j == "0.4.33" or e == "0.11.6") and Version(j) >= Version("0.4.31")  # noqa: E731
    _, without = _matrix_without("weak-type-closure")
    reg = _bound_both(without, _oracle(cross), tmp_path)
    assert reg.shape == "not a rectangle"


def test_a_bound_names_the_releases_between_its_sides_that_could_not_say(tmp_path):
    present = lambda j, e: Version(j) < Version("0.4.33")  # noqa: E731
    importable = lambda j, e: j not in ("0.4.33",)  # noqa: E731 - cannot say just above the bound
    _, without = _matrix_without("weak-type-closure")
    reg = region.bound(without, _target(), {"jax": "0.4.30", "equinox": "0.11.6"}, axes=["jax"], python="3.11",
                       state_dir=tmp_path, observe=_oracle(present, importable), candidates={"jax": JAX},
                       dates={"jax": {}}, progress=lambda m: None)
    (b,) = reg.bounds
    assert (b.last_affected, b.fixed, b.unsure) == ("0.4.31", "0.4.35", ["0.4.33"])
    assert "0.4.33 could not say" in region_report.describe(b)


def test_release_granularity_equality():
    assert specs_equal(">=0.4.32", ">=0.4.33", ["0.4.31", "0.4.33", "0.4.34"])  # 0.4.32 not a candidate
    assert not specs_equal(">=0.4.32", ">=0.4.33", ["0.4.31", "0.4.32", "0.4.33"])


# -- the edge search --------------------------------------------------------------------------

def _search(truth, cols, stride=3):
    """Run the plan against an oracle until it has nothing left to ask; return it and the cost."""
    plan = edges.Plan([edges.Column(e, list(js)) for e, js in cols.items()], stride=stride)
    asked = 0
    while steps := plan.next_steps():
        for c in steps:
            col = next(x for x in plan.columns if x.equinox == c.equinox)
            col.seen[c.jax] = truth(c.jax, c.equinox)
            asked += 1
    return plan, asked


def test_the_edge_search_finds_every_edge_and_implies_the_rest():
    js = [f"0.4.{i}" for i in range(13, 45)]
    cols = {f"0.11.{k}": js for k in range(0, 10)}

    def truth(j, e):
        i, k = int(j.split(".")[2]), int(e.split(".")[2])
        out = "clean"
        if 26 <= i and k < 4:
            out = "unpack"
        if i >= 32 and k < 7:
            out += "+weak"
        if i >= 40:
            out = "<import-error>"
        return out

    plan, asked = _search(truth, cols, stride=6)
    cov = plan.coverage()
    assert cov["open"] == 0 and cov["unseen"] == 0
    assert cov["observed"] + cov["implied"] == cov["pairs"] == asked + cov["implied"]
    assert asked < cov["pairs"] / 2  # far fewer environments than pairs
    for col in plan.columns:  # every true edge was found
        true_edges = [
            (a, b) for a, b in zip(js, js[1:], strict=False) if truth(a, col.equinox) != truth(b, col.equinox)
        ]
        assert col.edges() == true_edges


def test_a_region_seen_in_one_column_is_followed_into_its_neighbours():
    js = [f"0.4.{i}" for i in range(13, 45)]
    cols = {f"0.11.{k}": js for k in range(0, 4)}

    def truth(j, e):  # an island, clean at both ends of every column; a seed lands in it in 0.11.0 only
        lo = 25 if e == "0.11.0" else 27
        return "island" if lo <= int(j.split(".")[2]) <= 29 else "clean"

    plan, _ = _search(truth, cols, stride=6)
    assert plan.columns[0].edges() == [("0.4.24", "0.4.25"), ("0.4.29", "0.4.30")]
    for col in plan.columns[1:]:
        assert col.edges() == [("0.4.26", "0.4.27"), ("0.4.29", "0.4.30")]


def test_an_island_between_seeds_that_no_column_lands_in_stays_unseen_and_is_counted_as_implied():
    """The limit of the search, stated: a region narrower than the stride, in no seed's way."""
    js = [f"0.4.{i}" for i in range(13, 45)]
    plan, _ = _search(lambda j, e: "island" if j == "0.4.27" else "clean", {"0.11.0": js}, stride=6)
    assert plan.columns[0].edges() == [] and plan.coverage()["implied"] == len(js) - plan.coverage()["observed"]


# -- the command line -------------------------------------------------------------------------

def test_bisect_from_a_report_without_unexplained_failures_says_so(tmp_path, capsys):
    from jaxcompat.commands import main

    full, _ = _matrix_without("weak-type-closure")
    cell = _cell("0.4.33", "0.11.6", True, matrix=full)  # explained: the rule is there
    report = tmp_path / "check.json"
    report.write_text(__import__("json").dumps(cell.to_dict()))
    assert main(["bisect", "--from", str(report), "--reports", str(tmp_path)]) == 0
    assert "nothing to bound" in capsys.readouterr().out


def test_bisect_from_something_that_is_not_a_report_is_a_clear_error(tmp_path, capsys):
    from jaxcompat.commands import main

    bad = tmp_path / "x.json"
    bad.write_text('{"cells": []}')
    assert main(["bisect", "--from", str(bad), "--reports", str(tmp_path)]) == 2
    assert "not a cell report" in capsys.readouterr().err


def test_without_rule_names_an_unknown_rule_clearly(tmp_path, capsys):
    from jaxcompat.commands import main

    assert main(["bisect", "--without-rule", "no-such-rule", "--from", "x", "--reports", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no-such-rule" in err and "weak-type-closure" in err


def test_the_cost_of_the_search_adds_up_over_runs_and_projects_the_rest(tmp_path):
    edges._ledger(tmp_path, {"date": "2026-11-25", "jobs": 2, "environments": 80, "seconds": 2400.0})
    edges._ledger(tmp_path, {"date": "2026-11-26", "jobs": 2, "environments": 20, "seconds": 600.0})
    cost = {"left": 10, "pairs": 120, "observed": 80}
    line = edges.cost_line(cost, 2, tmp_path, space_pairs=1200)
    assert "100 environments in 50 min over 2 run(s)" in line
    assert "~10 more (~5 min here)" in line
    assert "0.75 environments per pair: ~900 environments, ~7.5 h here, ~0.9 h on the 8 CI shards" in line


def test_a_result_reused_from_another_environment_names_no_machine_path():
    from jaxcompat.model.outcomes import CaseResult
    from jaxcompat.report.scrub import Scrubber

    tb = 'File "/state/envs/survey-jax0.4.22-eqx0.11.4/lib/python3.10/site-packages/x.py", line 1'
    cell = CellResult(id="bisect-jax-0.4.22", python="3.10", backend="cpu", status="ok",
                      results=[CaseResult(case="c", failure=None, expected="pass", outcome="regression",
                                          duration_s=0.0, message="", traceback=tb)])
    Scrubber({"/state/envs/bisect-jax-0.4.22": "<env>"}, envs_dir=Path("/state/envs")).cell(cell)
    assert cell.results[0].traceback == 'File "<env>/lib/python3.10/site-packages/x.py", line 1'


def test_the_coverage_and_cost_go_into_survey_md_and_replace_an_earlier_section(tmp_path):
    md = tmp_path / "survey.md"
    assert not splice_coverage(md, "## Coverage (edge search)\n\nfirst\n")  # no report: nothing written
    md.write_text("# jax-compat survey\n\n- right: 3/3\n\n## What each combination showed\n\n| a |\n")
    assert splice_coverage(md, "## Coverage (edge search)\n\nfirst\n")
    assert splice_coverage(md, "## Coverage (edge search)\n\n598 pairs, second\n")
    text = md.read_text()
    assert text.count(COVERAGE_HEADING) == 1 and "second" in text and "first" not in text
    assert text.index("second") < text.index("## What each combination showed") and text.endswith("| a |\n")
    (tmp_path / "survey-edges.json").write_text('{"coverage_md": "## Coverage (edge search)\\n\\nx"}')
    assert edges.stored_coverage(tmp_path).endswith("x") and edges.stored_coverage(tmp_path / "none") == ""

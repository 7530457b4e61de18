"""The survey's sampling, scoring and the warning-before-the-break forecast (offline, no jax)."""

from packaging.specifiers import SpecifierSet

from jaxcompat.knowledge.config import load
from jaxcompat.knowledge.deprecations import forecast, names
from jaxcompat.knowledge.outcomes import reclassify
from jaxcompat.knowledge.survey import Observation
from jaxcompat.model.deprecations import Deprecation
from jaxcompat.model.outcomes import CaseResult, CellResult
from jaxcompat.model.survey import Combo, Space
from jaxcompat.operations import survey
from jaxcompat.report.survey import render_md
from tests.helpers import MINIMAL, make_tree

JAX = ["0.4.30", "0.4.31", "0.4.33", "0.4.34", "0.4.35"]
EQX = ["0.11.5", "0.11.6", "0.11.7", "0.11.8", "0.11.9"]


def _space() -> Space:
    pairs = {(j, e) for j in JAX for e in EQX if not (e == "0.11.9" and j == "0.4.30")}
    return Space(JAX, EQX, pairs)


def test_sample_takes_both_sides_of_every_bound_and_leaves_matrix_cells_out(tmp_path):
    matrix = load(make_tree(tmp_path))  # demo-bug: jax >= 0.4.32, equinox < 0.11.8; cell a: 0.4.33/0.11.7
    combos = survey.sample(matrix, _space(), limit=12, seed=1)
    pairs = {(c.jax, c.equinox) for c in combos}
    assert ("0.4.33", "0.11.7") not in pairs  # in matrix.toml
    assert {("0.4.31", "0.11.7")} <= pairs  # jax side: just outside the bound (inside is the matrix cell)
    assert {("0.4.35", "0.11.7"), ("0.4.35", "0.11.8")} <= pairs  # equinox side, both sides
    assert len(combos) == 12 and combos == survey.sample(matrix, _space(), limit=12, seed=1)
    assert all((c.jax, c.equinox) in _space().pairs for c in combos)


def test_bounds_are_adjacent_releases():
    assert survey._bounds(SpecifierSet(">=0.4.32"), JAX) == [("0.4.33", "0.4.31")]
    assert survey._bounds(SpecifierSet("<0.11.8"), EQX) == [("0.11.7", "0.11.8")]


def test_shards_partition_the_sample():
    combos = [Combo(j, "0.11.8") for j in JAX]
    parts = [survey.shard(combos, f"{i}/3") for i in (1, 2, 3)]
    assert sorted(c.id for p in parts for c in p) == sorted(c.id for c in combos) and all(parts)


def _cell(jax, eqx, outcome="pass", error="", message="", status="ok"):
    results = [] if status != "ok" else [CaseResult("cases/test_demo.py::test_bug", None, "pass", outcome, 0.1,
                                                    message, error, error_types=[error] if error else [])]
    return CellResult(id=f"survey-jax{jax}-eqx{eqx}", python="3.11", backend="cpu", status=status,
                      versions={"jax": jax, "equinox": eqx}, requested={"jax": jax, "equinox": eqx},
                      results=results, message=message)


def test_stored_observations_are_judged_by_todays_rules(tmp_path):
    matrix = load(make_tree(tmp_path))
    seen = _cell("0.4.35", "0.11.7", outcome="regression", error="XlaRuntimeError", message="Unfortunately …")
    assert reclassify(seen, matrix.failures).results[0].outcome == "reproduced"
    clean = _cell("0.4.31", "0.11.7")
    assert reclassify(clean, matrix.failures).results[0].outcome == "pass"
    wrong = _cell("0.4.35", "0.11.8", outcome="regression", error="ValueError", message="boom")
    obs = [Observation(Combo("0.4.35", "0.11.7"), reclassify(seen, matrix.failures)),
           Observation(Combo("0.4.31", "0.11.7"), reclassify(clean, matrix.failures)),
           Observation(Combo("0.4.35", "0.11.8"), reclassify(wrong, matrix.failures))]
    s = survey.score(obs)
    assert (s["right"], s["verdicts"], s["clean_combinations"]) == (2, 3, 2)
    assert s["wrong"] == [{"case": "cases/test_demo.py::test_bug", "outcome": "regression",
                           "error_type": "ValueError", "combinations": ["jax 0.4.35 + equinox 0.11.8"]}]
    md = render_md(s, obs, [], {"seed": 0, "limit": 3})
    assert "2/3 = 66.67%" in md and "Wrong verdicts, by cause" in md


def test_an_unexplained_import_error_is_a_wrong_verdict_until_a_rule_explains_it(tmp_path):
    text = MINIMAL + '''
[[failure]]
id = "eqx-import"
title = "t"
stage = "import"
affects = { jax = ">=0.4.34", equinox = "<0.11.8" }
error = ["AttributeError"]
match = "pp_eqn_rules"
upstream = ["https://github.com/patrick-kidger/equinox/issues/869"]
fix = "upgrade equinox"
'''
    matrix = load(make_tree(tmp_path, text))
    cell = _cell("0.4.35", "0.11.5", status="import-error",
                 message="import equinox failed:\nAttributeError: jax.core.pp_eqn_rules was removed")
    assert reclassify(cell, matrix.failures).outcome == "expected"
    assert reclassify(cell, load(make_tree(tmp_path)).failures).outcome == "cell-error"


def test_a_removal_forecast_turns_into_the_real_failure_one_release_later():
    # jax 0.9.2: equinox hits a deprecation that announces its removal ...
    before = [{"package": "equinox", "where": "equinox/_ad.py:12", "category": "DeprecationWarning",
               "message": "jax.core.get_aval is deprecated. Use jax.typeof. It was deprecated in "
                          "JAX v0.8.2 and will be removed in JAX v0.10.0."}]
    (dep,) = [Deprecation.from_dict(d) for d in before]
    assert forecast(before, {"equinox": "0.13.2"}) == [
        "equinox 0.13.2 uses jax.core.get_aval (equinox/_ad.py:12), which jax removes in 0.10.0"]
    assert dep.removed_in() == "0.10.0"
    # ... and on jax 0.10.0 the same equinox fails with exactly that API (survey.md's "broke on")
    later = "import equinox failed:\nAttributeError: module 'jax.core' has no attribute 'get_aval'"
    assert names(dep.api, later) and not names(dep.api, "ValueError: something else")


def test_a_partial_run_is_laid_over_the_stored_observation():
    base = _cell("0.4.35", "0.11.7", outcome="pass")
    base.results.append(CaseResult("cases/test_old.py::test_x", None, "pass", "pass", 0.1, "", ""))
    extra = _cell("0.4.35", "0.11.7", outcome="regression", error="ValueError", message="new case fails")
    merged = survey.overlay(base, extra)
    assert {r.case: r.outcome for r in merged.results} == {"cases/test_old.py::test_x": "pass",
                                                           "cases/test_demo.py::test_bug": "regression"}


def test_a_crash_explained_by_a_rule_stays_a_crash_when_judged_again(tmp_path):
    from jaxcompat.knowledge.outcomes import classify
    from jaxcompat.model.outcomes import RawResult
    from tests.helpers import CRASH_RULE

    failures = load(make_tree(tmp_path, CRASH_RULE)).failures
    versions = {"jax": "0.4.23", "jaxlib": "0.4.23", "numpy": "2.1.1"}
    seen = classify(RawResult("cases/test_demo.py::test_bug", "crash", message="killed by signal SIGSEGV (11)"),
                    failures, versions, "cpu")
    assert seen.outcome == "reproduced"
    assert classify(seen.raw(), failures, versions, "cpu").outcome == "reproduced"


def test_a_harness_error_is_not_an_observation_and_runs_again(tmp_path):
    """uv missing (or a bug of ours) stopped the tool before it looked at the releases: the
    survey and the edge search must not count it as what the combination does."""
    from jaxcompat.model.outcomes import LEGACY_HARNESS_PREFIX as HARNESS_ERROR
    from jaxcompat.operations import edges
    from jaxcompat.report.matrixreport import write_cell

    ours = _cell("0.4.31", "0.11.7", status="run-error",
                 message=f"{HARNESS_ERROR} RuntimeError: uv not found: install it with `python3 -m pip install uv`")
    theirs = _cell("0.4.33", "0.11.7", status="run-error", message="pytest exited with code 3 before running any case")
    for c in (ours, theirs):
        write_cell(c, tmp_path)
    assert survey._unfinished(tmp_path / "cells" / f"{ours.id}.json")
    assert not survey._unfinished(tmp_path / "cells" / f"{theirs.id}.json")
    (tmp_path / "tree").mkdir()
    matrix = load(make_tree(tmp_path / "tree"))
    assert [o.combo for o in survey.load_observations(matrix, tmp_path)] == [Combo("0.4.33", "0.11.7")]
    plan = edges.Plan([edges.Column("0.11.7", ["0.4.31", "0.4.33"])])
    edges.observe_stored(plan, tmp_path)
    assert set(plan.columns[0].seen) == {"0.4.33"}


def test_report_only_with_nothing_stored_refuses_and_names_the_folder(tmp_path, capsys):
    err = survey.nothing_stored(tmp_path / "survey", "survey")  # the survey command prints it, exit 2
    assert "no stored observation" in err
    assert str(tmp_path / "survey" / "cells") in err and "left as they are" in err


def test_a_match_lost_in_the_clipped_middle_of_a_stored_message_stays_reproduced(tmp_path):
    """Seen on the edge search (jax 0.4.33 + equinox 0.11.5): the rule's pattern met the full
    message when the case ran, the stored copy keeps only both ends, and judging it again had
    called it unexplained and drafted a rule for it. A different error type still is a mismatch."""
    from jaxcompat.knowledge.outcomes import CLIP_MARK, MESSAGE_LIMIT, classify
    from jaxcompat.model.outcomes import RawResult

    failures = load(make_tree(tmp_path)).failures  # demo-bug: XlaRuntimeError matching "Unfortunately"
    versions = {"jax": "0.4.33", "equinox": "0.11.7"}
    full = "XlaRuntimeError: head\n" + "x" * MESSAGE_LIMIT + "\nUnfortunately …\n" + "y" * MESSAGE_LIMIT
    seen = classify(RawResult("cases/test_demo.py::test_bug", "failed", message=full,
                              error_types=["XlaRuntimeError"]), failures, versions, "cpu")
    assert seen.outcome == "reproduced" and CLIP_MARK in seen.message and "Unfortunately" not in seen.message
    again = reclassify(CellResult(id="c", python="3.11", backend="cpu", status="ok", versions=versions,
                                  results=[seen]), failures)
    assert (again.results[0].outcome, again.results[0].failure) == ("reproduced", "demo-bug")
    other = classify(RawResult("cases/test_demo.py::test_bug", "failed", message=full,
                               error_types=["ValueError"]), failures, versions, "cpu")
    assert reclassify(CellResult(id="c", python="3.11", backend="cpu", status="ok", versions=versions,
                                 results=[other]), failures).results[0].outcome == "mismatch"


def test_the_surveys_compat_rows_are_the_one_compatibility_table(tmp_path):
    """The survey's "which equinox for which jax" is the compatibility table's rows
    (knowledge.compat.table) on the same walk of the release space, its ends marked by what the
    survey saw; the space itself is that walk's pairs."""
    from packaging.specifiers import SpecifierSet

    from jaxcompat.knowledge import compat
    from jaxcompat.model.compat import Release, Releases

    (tmp_path / "tree").mkdir()
    matrix = load(make_tree(tmp_path / "tree"))  # demo-bug: jax>=0.4.32 with equinox<0.11.8
    eqx = tuple(Release(v, SpecifierSet(">=0.4.30")) for v in ("0.11.6", "0.11.7", "0.11.8", "0.11.9"))
    dfx = (Release("0.6.0", SpecifierSet(">=0.4.30"), SpecifierSet(">=0.11.0")),)
    rel = Releases(("0.4.31", "0.4.33", "0.4.14"), {"0.4.31": "0.4.31", "0.4.33": "0.4.33", "0.4.14": None},
                          {"equinox": eqx, "diffrax": dfx, "optimistix": (), "lineax": ()})
    sp = Space(["0.4.31", "0.4.33", "0.4.14"], [e.version for e in eqx],
                      {(j, e.version) for j in ("0.4.31", "0.4.33") for e in eqx})
    seen = [Observation(Combo("0.4.33", "0.11.8"),
                               CellResult(id="x", python="3.11", backend="cpu", status="ok"))]
    rows = {r["jax"]: r for r in survey.compat_rows(matrix, rel, sp, seen)}
    table = {r.jax: r for r in compat.table(rel, matrix.failures, [])}
    assert rows["0.4.31"]["equinox"] == list(table["0.4.31"].ranges["equinox"].inferred_ends) == ["0.11.6", "0.11.9"]
    assert rows["0.4.33"]["equinox"] == ["0.11.8", "0.11.9"]  # the rule takes 0.11.6 and 0.11.7 out
    assert rows["0.4.33"]["observed"] == {"0.11.8": "clean", "0.11.9": "not surveyed"}
    assert rows["0.4.33"]["diffrax"] == ["0.6.0", "0.6.0"] and rows["0.4.33"]["lineax"] is None
    assert rows["0.4.14"] == {"jax": "0.4.14", "installable": False}

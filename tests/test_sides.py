"""Sides that differ only in the candidate (issue 39 part 2): the candidate is held at the
baseline's resolved versions for every package it does not name (uv --constraint), a constraint
its own requirements conflict with is let go, every remaining difference is a confounder listed
beside the verdict (check.json, crater.json), and broken tests are re-run with each confounder
held at the baseline's version. Fakes only: no resolver, no jax."""

from __future__ import annotations

import subprocess as sp
from pathlib import Path

from jaxcompat.env import envs, sides, testtarget
from jaxcompat.knowledge.config import load
from jaxcompat.model.crater import DependentResult
from jaxcompat.model.matrix import Cell
from jaxcompat.model.outcomes import RawResult
from jaxcompat.model.sides import Confounder, Sides
from jaxcompat.model.usertests import Observed
from jaxcompat.model.vocab import DependentVerdict
from jaxcompat.operations import crater, usertests
from jaxcompat.report import check as check_report
from jaxcompat.report import usertests as user_report
from jaxcompat.report.crater import summary, verdict_text
from jaxcompat.report.sides import sides_lines
from jaxcompat.run import userrun
from tests.helpers import make_tree

BASELINE = {"jax": "0.4.31", "jaxlib": "0.4.31", "numpy": "2.0.1", "ml-dtypes": "0.4.0", "equinox": "0.11.4",
            "jaxtyping": "0.2.33", "pytest": "8.3.2", "scipy": "1.14.1"}
CANDIDATE = Cell(id="c", python="3.11", backend="cpu", pins={"jax": "0.4.33", "equinox": "*"}, added=("equinox",))


def test_the_candidate_is_held_at_the_baselines_versions_but_for_what_it_names():
    held = sides.hold(CANDIDATE, BASELINE)
    assert set(sides.named(CANDIDATE)) >= {"jax", "jaxlib"}
    assert "equinox" not in sides.named(CANDIDATE)  # a companion the suite added is held, not named
    assert held.held == ("equinox==0.11.4", "jaxtyping==0.2.33", "ml-dtypes==0.4.0", "numpy==2.0.1",
                         "pytest==8.3.2", "scipy==1.14.1")
    assert sides.hold(held, {"numpy": "1.0"}) is held  # already held: unchanged
    user_named = Cell(id="u", python="3.11", backend="cpu", pins={"jax": "0.4.33", "numpy": "2.1.1"})
    assert {"numpy", "jax", "jaxlib"}.isdisjoint(c.split("==")[0] for c in sides.hold(user_named, BASELINE).held)


def test_a_held_cell_resolves_with_constraints_and_lets_go_of_those_the_resolver_names(tmp_path, monkeypatch):
    """uv's own message names the conflicting constraint (jax 0.4.33 needs ml-dtypes>=0.4.1? no:
    here a fake one): only that one is dropped, the rest stay held; the note says which."""
    seen: list[list[str]] = []

    def fake_run(argv, **kw):
        held = Path(argv[argv.index("--constraint") + 1]).read_text().split() if "--constraint" in argv else []
        seen.append(held)
        if "ml-dtypes==0.4.0" in held:
            return sp.CompletedProcess(argv, 1, "", "  × No solution found when resolving dependencies:\n  ╰─▶ "
                                       "Because jax==0.4.33 depends on ml-dtypes>=0.4.1 and you require "
                                       "ml-dtypes==0.4.0, we can conclude that your requirements are unsatisfiable.")
        return sp.CompletedProcess(argv, 0, "jax==0.4.33\njaxlib==0.4.33\nml-dtypes==0.5.0\nnumpy==2.0.1\n", "")

    monkeypatch.setattr(envs, "run_tool", fake_run)
    cell = sides.hold(CANDIDATE, BASELINE)
    text, notes = envs.solve(cell, "python3", "2024-09-13", ("pytest",), tmp_path / "w", tmp_path / "locks")
    assert len(seen) == 2 and "ml-dtypes==0.4.0" in seen[0]
    assert "ml-dtypes==0.4.0" not in seen[1] and "numpy==2.0.1" in seen[1] and "equinox==0.11.4" in seen[1]
    assert "numpy==2.0.1" in text
    assert any("ml-dtypes" in n and "conflict" in n for n in notes)
    # held and not held are two locks (the spec holds the constraints)
    assert envs.spec_hash(cell, "py", None, ()) != envs.spec_hash(CANDIDATE, "py", None, ())
    # a message naming none of the held packages lets go of all of them (the candidate still resolves)
    assert sides.conflicting(cell, "× No solution found: jax==0.4.33 is yanked") == {
        c.split("==")[0] for c in cell.held}


def test_every_difference_beyond_the_candidate_is_a_confounder():
    cand = {**BASELINE, "jax": "0.4.33", "jaxlib": "0.4.33", "ml-dtypes": "0.5.0", "opt-einsum": "3.4.0"}
    found = sides.compare(sides.hold(CANDIDATE, BASELINE), BASELINE, cand)
    assert [(c.dist, c.baseline, c.candidate) for c in found.confounders] == [
        ("ml-dtypes", "0.4.0", "0.5.0"), ("opt-einsum", "", "3.4.0")]
    assert found.dropped == ["ml-dtypes"] and found.held == 6 and found.named == ["jax", "jaxlib"]
    same = sides.compare(sides.hold(CANDIDATE, BASELINE), BASELINE, {**BASELINE, "jax": "0.4.33", "jaxlib": "0.4.33"})
    assert not same.confounders and "differ only in the candidate's packages (jax, jaxlib)" in sides_lines(same)[0]
    assert Sides.from_dict(found.to_dict()) == found


def _raw(name: str, ok: bool) -> RawResult:
    return RawResult(case=name, status="passed" if ok else "failed", error_types=[] if ok else ["AssertionError"],
                     message="" if ok else "AssertionError: dtype", traceback="" if ok else "tb")


def test_compare_holds_the_candidate_and_names_the_confounder_that_breaks(tmp_path, monkeypatch):
    """The baseline is resolved first and the candidate held at it; what still differs (numpy,
    pytest) is re-run one by one held at the baseline's version: numpy is the cause, pytest not."""
    from jaxcompat.model.stages import Resolved
    from jaxcompat.run import cell as cells

    matrix = load(make_tree(tmp_path))
    (tmp_path / "p" / "tests").mkdir(parents=True)
    (tmp_path / "p" / "tests" / "test_x.py").write_text("def test_a():\n    pass\n")
    target = testtarget.locate(str(tmp_path / "p" / "tests"))
    lock = "".join(f"{d}=={v}\n" for d, v in BASELINE.items())
    monkeypatch.setattr(cells, "resolved", lambda cell, *a, **k: Resolved(cell, "python3", lock))
    observed: list[tuple[str, tuple[str, ...]]] = []
    name = "tests/test_x.py::test_a"

    def fake_observe(cell, matrix_, state_dir, target_, nodeids=None):
        observed.append((cell.id, cell.held))
        versions = dict(BASELINE) if cell.id == "b" else {**BASELINE, "jax": "0.4.33", "jaxlib": "0.4.33",
                                                          "numpy": "2.1.1", "pytest": "8.3.3"}
        versions.update({d: v for d, v in cell.pins.items() if d in ("numpy", "pytest")})
        ok = cell.id == "b" or versions["numpy"] == "2.0.1"
        return Observed(results={name: _raw(name, ok)}, versions=versions, locked=versions)

    monkeypatch.setattr(userrun, "observe", fake_observe)
    base = Cell(id="b", python="3.11", backend="cpu", pins={"jax": "0.4.31"})
    cmp = usertests.compare(CANDIDATE, base, target, matrix, tmp_path / "state",
                            decided=cells.resolve_cell(base, matrix, tmp_path / "state"))
    assert observed[0][0] == "c" and "numpy==2.0.1" in observed[0][1]  # the candidate ran held
    # what check.json's user_tests_run says was run and installed, on the record itself
    assert cmp.cells == {"candidate": "c", "baseline": "b"}
    assert cmp.test_dependencies == list(target.deps.sources)
    by = {c.dist: c for c in cmp.sides.confounders}
    assert set(by) == {"numpy", "pytest"}
    assert by["numpy"].held_run == "the cause" and "1 of 1" in by["numpy"].detail
    assert by["pytest"].held_run == "not the cause"
    assert ("c-held-numpy", tuple(h for h in observed[0][1] if not h.startswith("numpy"))) in observed
    text = user_report.verdict(cmp, target.describe())
    assert "confounders: 2 package(s)" in text and "numpy 2.0.1 → 2.1.1: the cause" in text
    # check.json's user_tests_run
    assert check_report.summary(cmp)["held_at_baseline"]["confounders"][0]["dist"] == "numpy"


def test_the_crater_lists_each_dependents_confounders_beside_its_verdict():
    found = Sides(named=["jax", "jaxlib"], held=40,
                  confounders=[Confounder("equinox", "0.11.4", "0.11.6", "not the cause", "0 of 3 …")])
    r = DependentResult("optimistix", DependentVerdict.BROKEN, version="v0.0.8", sides=found.to_dict())
    again = DependentResult.from_dict(r.to_dict())
    assert again.sides == r.sides
    plan = {"candidate": ["jax==0.4.33"], "baseline": ["jax==0.4.31"]}
    text = verdict_text([again], [], plan, crater.cost([again], 1, 1.0))
    assert "confounders: 1 package(s)" in text and "equinox 0.11.4 → 0.11.6: not the cause" in text
    assert summary([again], plan, [], {})["confounded"] == {"optimistix": ["equinox"]}

"""Added packages and learned requirements (jaxcompat/learned.py), on recorded metadata and
import results: no network, no jax.

The recording: jax 0.4.23 with equinox 0.11.2, resolved as of 2023-12-15. The suite adds
diffrax, optimistix, lineax and chex. optimistix's newest release by then reads an equinox
attribute that equinox 0.11.2 lacks, although its metadata declares ``equinox>=0.11.0``;
diffrax imports optimistix, so it fails the same way.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from jaxcompat import learned
from jaxcompat.candidate import candidate_cell, verdict
from jaxcompat.cell import lock_versions
from jaxcompat.config import load
from jaxcompat.outcomes import CaseResult, CellResult
from jaxcompat.packages import ECOSYSTEM

ROOT = Path(__file__).resolve().parents[1]
USER = {"jax": "0.4.23", "jaxlib": "0.4.23", "equinox": "0.11.2"}
OPTIMISTIX = ["0.0.7", "0.0.6", "0.0.5"]  # newest first, as of the cell's date
DATES = {"optimistix": {"0.0.5": "2023-10-11", "0.0.6": "2023-11-09", "0.0.7": "2023-12-14"},
         "equinox": {"0.11.0": "2023-09-27", "0.11.2": "2023-11-23", "0.11.3": "2024-01-05"}}
TB_OPTX = '''Traceback (most recent call last):
  File "<string>", line 6, in <module>
  File "<env>/lib/python3.10/site-packages/optimistix/__init__.py", line 3, in <module>
    from . import internal as internal
  File "<env>/lib/python3.10/site-packages/optimistix/_misc.py", line 41, in <module>
    eqx.internal.ClosureConvert,
AttributeError: module 'equinox.internal' has no attribute 'ClosureConvert'
'''
TB_DIFFRAX = TB_OPTX.replace('  File "<string>", line 6, in <module>\n',
                             '  File "<string>", line 6, in <module>\n  File "<env>/lib/python3.10/site-'
                             'packages/diffrax/__init__.py", line 1, in <module>\n    import optimistix\n')


def _lock(optx: str | None, diffrax: str = "0.5.0") -> str:
    pins = {**USER, "diffrax": diffrax, "lineax": "0.0.4", "chex": "0.1.85", "numpy": "1.26.2"}
    if optx:
        pins["optimistix"] = optx
    return "".join(f"{d}=={v}\n" for d, v in pins.items())


class Recorded:
    """The index and the interpreter, as recorded: which optimistix the resolver picks once some
    are avoided, and what importing each environment printed."""

    def __init__(self, imports_ok: set[str], user_error: str = ""):
        self.imports_ok, self.user_error = imports_ok, user_error
        self.locked: list[tuple[str, ...]] = []
        self.probed: list[str] = []

    def lock(self, cell) -> str:
        self.locked.append(cell.avoid)
        left = [v for v in OPTIMISTIX if f"optimistix!={v}" not in cell.avoid]
        return _lock(left[0] if left and "optimistix" in cell.pins else None)

    def imports(self, cell, lock_text: str, modules: list[str]) -> dict[str, str]:
        optx = lock_versions(lock_text).get("optimistix")
        self.probed.append(optx or "-")
        out = {}
        for m in modules:
            if m == "equinox" and self.user_error:
                out[m] = self.user_error
            elif optx and optx not in self.imports_ok and m in ("optimistix", "diffrax"):
                out[m] = TB_OPTX if m == "optimistix" else TB_DIFFRAX
            else:
                out[m] = "ok"
        return out

    def world(self) -> learned.World:
        return learned.World(self.lock, self.imports, lambda d: DATES.get(d, {}),
                             lambda d, v, on: ">=0.11.0" if (d, on) == ("optimistix", "equinox") else "")


def _cell():
    cell = candidate_cell(["jax==0.4.23", "equinox==0.11.2"], python="3.10")
    return replace(cell, pins={**cell.pins, "jaxlib": "0.4.23"}, date="2023-12-15")


def test_an_added_package_that_does_not_import_is_walked_back_and_the_verdict_is_the_users():
    rec = Recorded(imports_ok={"0.0.6", "0.0.5"})
    cell = _cell()
    assert cell.added == ("diffrax", "optimistix", "lineax", "chex")
    s = learned.settle(cell, rec.lock(cell), rec.world(), lock_versions, ECOSYSTEM)

    # walked back one release: the newest that imports, and the cell re-locked with it
    assert lock_versions(s.lock_text)["optimistix"] == "0.0.6"
    assert rec.probed == ["0.0.7", "0.0.6"]
    assert "optimistix!=0.0.7" in s.cell.avoid and "optimistix!=0.0.6" not in s.cell.avoid
    assert s.cell.optional() == ["diffrax", "optimistix!=0.0.7", "lineax", "chex"]
    assert not s.user_failed
    # what was skipped, and why, in the interpreter's own words
    skipped = s.added["optimistix"].skipped
    assert [x["version"] for x in skipped] == ["0.0.7"]
    assert skipped[0]["frame"] == "optimistix/_misc.py:41"
    assert "has no attribute 'ClosureConvert'" in skipped[0]["error"]
    assert s.added["optimistix"].version == "0.0.6" and not s.added["optimistix"].left_out
    assert s.added["diffrax"].skipped == []  # diffrax failed only through optimistix's frame
    # the real requirement: equinox 0.11.2 predates optimistix 0.0.7, so it needs a newer one
    [rec_] = s.learned
    assert (rec_.package, rec_.release, rec_.requires, rec_.declares) == ("optimistix", "0.0.7", "equinox>0.11.2", ">=0.11.0")
    assert rec_.tried[0] == {"with": USER, "imports": "error"}
    assert "optimistix 0.0.7 needs equinox>0.11.2" in skipped[0]["reason"] and "declares equinox>=0.11.0" in skipped[0]["reason"]

    # the verdict is judged on the user's pins alone: the cases that ran pass, so it is safe
    matrix = load(ROOT / "matrix.toml")
    versions = {**USER, **{d: v for d, v in lock_versions(s.lock_text).items() if d in ECOSYSTEM}}
    result = CellResult(id=cell.id, python="3.10", backend="cpu", status="ok", versions=versions,
                        added={d: a.to_dict() for d, a in s.added.items()},
                        results=[CaseResult("cases/test_x.py::test_y", None, "pass", "pass", 0.1, "")])
    text, safe = verdict(result, matrix)
    assert safe
    head, added_line, skip_line = text.splitlines()[:3]
    assert "equinox==0.11.2" in head and "optimistix" not in head and "diffrax" not in head
    assert "added by the suite" in added_line and "optimistix==0.0.6" in added_line
    assert skip_line.strip().startswith("- optimistix 0.0.7 skipped: optimistix 0.0.7 needs equinox>0.11.2")
    # check.json carries the same record
    assert json.loads(json.dumps(result.to_dict()))["added"]["optimistix"]["skipped"][0]["version"] == "0.0.7"


def test_what_is_learned_is_applied_by_the_next_resolution_and_survives_a_round_trip(tmp_path):
    rec = Recorded(imports_ok={"0.0.6", "0.0.5"})
    cell = _cell()
    s = learned.settle(cell, rec.lock(cell), rec.world(), lock_versions, ECOSYSTEM)
    learned.record(tmp_path, s.learned)
    records = learned.known(tmp_path, committed=tmp_path / "none.json")
    assert [r.release for r in records] == ["0.0.7"]
    # the next cell with the same pins avoids the release before it is locked: nothing to walk
    fresh = _cell()
    prepared, notes = learned.prepare(fresh, records)
    assert prepared.avoid == ("optimistix!=0.0.7",) and "needs equinox>0.11.2" in notes[0]
    rec2 = Recorded(imports_ok={"0.0.6", "0.0.5"})
    again = learned.settle(prepared, rec2.lock(prepared), rec2.world(), lock_versions, ECOSYSTEM)
    assert rec2.probed == ["0.0.6"] and not again.learned
    # a cell whose equinox meets the real requirement is not constrained
    newer = replace(fresh, pins={**fresh.pins, "equinox": "0.11.3"})
    assert learned.prepare(newer, records) == (newer, [])
    # a user's own pin is never avoided, only packages the suite added
    named = candidate_cell(["jax==0.4.23", "equinox==0.11.2", "optimistix"], python="3.10")
    assert learned.prepare(named, records)[0].avoid == ()


def test_no_release_imports_the_package_is_left_out_never_a_cell_error():
    rec = Recorded(imports_ok=set())
    cell = _cell()
    s = learned.settle(cell, rec.lock(cell), rec.world(), lock_versions, ECOSYSTEM)
    assert "optimistix" not in lock_versions(s.lock_text)
    assert [x["version"] for x in s.added["optimistix"].skipped] == OPTIMISTIX
    assert s.added["optimistix"].left_out.startswith("no release imports with your pins")
    text = "\n".join(learned.Added(**{**s.added["optimistix"].to_dict()}).skipped[0].values())
    assert "ClosureConvert" in text


def test_when_the_users_own_pins_fail_nothing_is_walked_and_the_verdict_names_them():
    err = "Traceback...\nAttributeError: module 'jax.interpreters.xla' has no attribute 'xla_call_p'"
    rec = Recorded(imports_ok=set(), user_error=err)
    cell = _cell()
    s = learned.settle(cell, rec.lock(cell), rec.world(), lock_versions, ECOSYSTEM)
    assert s.user_failed == {"equinox": err} and not s.learned and rec.probed == ["0.0.7"]
    result = CellResult(id=cell.id, python="3.10", backend="cpu", status="import-error",
                        versions={**USER, "optimistix": "0.0.7"}, added={"optimistix": {"version": "0.0.7"}},
                        message=f"import equinox failed:\n{err}\nimport optimistix failed:\n{err}")
    text, safe = verdict(result, load(ROOT / "matrix.toml"))
    assert not safe
    assert "✗ your pins do not work together: import equinox failed (jax==0.4.23, jaxlib==0.4.23, equinox==0.11.2)" in text
    # a failure only in an added package is never "the candidate does not work"
    only_added = replace(result, message=f"import optimistix failed:\n{err}")
    text2, _ = verdict(only_added, load(ROOT / "matrix.toml"))
    assert "does not work" not in text2 and "not your pins" in text2


@pytest.mark.parametrize("mutate, key", [
    (lambda r: r.update(requires="equinox"), "learned[0].requires"),
    (lambda r: r.update(release="latest"), "learned[0].release"),
    (lambda r: r.update(package="Optimistix"), "learned[0].package"),
    (lambda r: r.pop("error"), "learned[0].error"),
    (lambda r: r.update(colour="red"), "learned[0].colour"),
    (lambda r: r.update(tried=[{"with": {}, "imports": "maybe"}]), "learned[0].tried"),
])
def test_a_bad_learned_file_names_the_file_the_key_and_the_fix(tmp_path, mutate, key):
    rec = {"package": "optimistix", "release": "0.0.7", "requires": "equinox>0.11.2", "declares": ">=0.11.0",
           "error": "AttributeError: x", "frame": "optimistix/_misc.py:41", "tried": [], "observed": "2026-01-01"}
    mutate(rec)
    path = tmp_path / "learned.json"
    path.write_text(json.dumps({"schema": 1, "learned": [rec]}))
    with pytest.raises(learned.LearnedError) as e:
        learned.load(path)
    assert str(path) in str(e.value) and key in str(e.value) and "fix:" in str(e.value)


def test_the_committed_learned_file_is_valid():
    learned.load(learned.DATA)

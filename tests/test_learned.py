"""Added packages and learned requirements (jaxcompat/knowledge/learned.py), on recorded metadata and
import results: no network, no jax.

The recording (a real run, `python -m jaxcompat check jax==0.4.30 equinox==0.11.2`): resolved as
of 2024-06-19, the suite adds diffrax, optimistix, lineax and chex. optimistix's newest release by
then, 0.0.7, reads ``eqx.StrictConfig``, which equinox first defines in 0.11.3, although its
metadata declares ``equinox>=0.11.1``; diffrax imports optimistix, so it fails the same way.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from jaxcompat.env.candidate import candidate_cell
from jaxcompat.knowledge import learned
from jaxcompat.knowledge.config import load
from jaxcompat.model.learned import Added, Learned
from jaxcompat.model.outcomes import CaseResult, CellResult
from jaxcompat.plugin.packages import ECOSYSTEM
from jaxcompat.report.candidate import verdict
from jaxcompat.report.learned import markdown, table
from jaxcompat.run.cell import lock_versions

ROOT = Path(__file__).resolve().parents[1]
USER = {"jax": "0.4.30", "jaxlib": "0.4.30", "equinox": "0.11.2"}
OPTIMISTIX = ["0.0.7", "0.0.6", "0.0.5"]  # newest first, as of the cell's date
DATES = {"optimistix": {"0.0.5": "2023-10-13", "0.0.6": "2023-12-27", "0.0.7": "2024-05-12"},
         "equinox": {"0.11.1": "2023-10-13", "0.11.2": "2023-11-13", "0.11.3": "2024-01-10"}}
SITE = "<env>/lib/python3.10/site-packages"
TB_OPTX = f'''Traceback (most recent call last):
  File "<string>", line 6, in <module>
  File "{SITE}/optimistix/__init__.py", line 3, in <module>
    from jaxcompat.knowledge import compat as compat
    from jaxcompat import internal as internal
  File "{SITE}/optimistix/_solver/backtracking.py", line 13, in <module>
    from .._search import AbstractSearch, FunctionInfo
  File "{SITE}/optimistix/_search.py", line 42, in <module>
    class FunctionInfo(eqx.Module, strict=eqx.StrictConfig(allow_abstract_name=True)):
AttributeError: module 'equinox' has no attribute 'StrictConfig'
'''
TB_DIFFRAX = TB_OPTX.replace('  File "<string>", line 6, in <module>\n',
                             f'  File "<string>", line 6, in <module>\n  File "{SITE}/diffrax/_adjoint.py", '
                             'line 14, in <module>\n    import optimistix.internal as optxi\n')


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
        return learned.World(
            self.lock,
            self.imports,
            lambda d: DATES.get(d, {}),
            lambda d, v, on: ">=0.11.1" if (d, on) == ("optimistix", "equinox") else "",
            lambda d, name, after: "0.11.3" if (d, name, after) == ("equinox", "StrictConfig", "0.11.2") else None,
        )


def _cell():
    cell = candidate_cell(["jax==0.4.30", "equinox==0.11.2"], python="3.10")
    return replace(cell, pins={**cell.pins, "jaxlib": "0.4.30"}, date="2024-06-19")


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
    assert skipped[0]["frame"] == "optimistix/_search.py:42"
    assert "has no attribute 'StrictConfig'" in skipped[0]["error"]
    assert s.added["optimistix"].version == "0.0.6" and not s.added["optimistix"].left_out
    assert s.added["diffrax"].skipped == []  # diffrax failed only through optimistix's frame
    # the real requirement: equinox 0.11.2 predates optimistix 0.0.7, so it needs a newer one:
    # the first whose code defines the name
    [rec_] = s.learned
    assert (rec_.package, rec_.release, rec_.requires, rec_.declares) == (
        "optimistix",
        "0.0.7",
        "equinox>=0.11.3",
        ">=0.11.1",
    )
    assert rec_.tried[0] == {"with": USER, "imports": "error"}
    assert (
        "optimistix 0.0.7 needs equinox>=0.11.3" in skipped[0]["reason"]
        and "declares equinox>=0.11.1" in skipped[0]["reason"]
    )

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
    assert skip_line.strip().startswith("- optimistix 0.0.7 skipped: optimistix 0.0.7 needs equinox>=0.11.3")
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
    prepared, applied = learned.prepare(fresh, records)
    assert prepared.avoid == ("optimistix!=0.0.7",) and applied == records
    rec2 = Recorded(imports_ok={"0.0.6", "0.0.5"})
    again = learned.settle(prepared, rec2.lock(prepared), rec2.world(), lock_versions, ECOSYSTEM, applied)
    assert rec2.probed == ["0.0.6"] and not again.learned
    # the trap is still named in the verdict, from the record
    [skip] = again.added["optimistix"].skipped
    assert skip["version"] == "0.0.7" and "needs equinox>=0.11.3" in skip["reason"] and "[learned]" in skip["reason"]
    # a cell whose equinox meets the real requirement is not constrained
    newer = replace(fresh, pins={**fresh.pins, "equinox": "0.11.3"})
    assert learned.prepare(newer, records) == (newer, [])
    # a release the resolver could not pick anyway is not reported: uploaded after the cell's
    # date, or ruled out by its own metadata (equinox 0.11.0 < its declared >=0.11.1)
    assert learned.prepare(fresh, records, lambda d, v: DATES[d][v])[0].avoid == ("optimistix!=0.0.7",)
    earlier = replace(fresh, date="2024-04-04")
    assert learned.prepare(earlier, records, lambda d, v: DATES[d][v]) == (earlier, [])
    older = replace(fresh, pins={**fresh.pins, "equinox": "0.11.0"})
    assert learned.prepare(older, records) == (older, [])
    # a user's own pin is never avoided, only packages the suite added
    named = candidate_cell(["jax==0.4.30", "equinox==0.11.2", "optimistix"], python="3.10")
    assert learned.prepare(named, records)[0].avoid == ()


def test_no_release_imports_the_package_is_left_out_never_a_cell_error():
    rec = Recorded(imports_ok=set())
    cell = _cell()
    s = learned.settle(cell, rec.lock(cell), rec.world(), lock_versions, ECOSYSTEM)
    assert "optimistix" not in lock_versions(s.lock_text)
    assert [x["version"] for x in s.added["optimistix"].skipped] == OPTIMISTIX
    assert s.added["optimistix"].left_out.startswith("no release imports with your pins")
    text = "\n".join(Added(**{**s.added["optimistix"].to_dict()}).skipped[0].values())
    assert "StrictConfig" in text


def test_when_the_users_own_pins_fail_nothing_is_walked_and_the_verdict_names_them():
    err = "Traceback...\nAttributeError: module 'jax.interpreters.xla' has no attribute 'xla_call_p'"
    rec = Recorded(imports_ok=set(), user_error=err)
    cell = _cell()
    s = learned.settle(cell, rec.lock(cell), rec.world(), lock_versions, ECOSYSTEM)
    assert s.user_failed == {"equinox": err} and not s.learned and rec.probed == ["0.0.7"]
    result = CellResult(
        id=cell.id,
        python="3.10",
        backend="cpu",
        status="import-error",
        versions={**USER, "optimistix": "0.0.7"},
        added={"optimistix": {"version": "0.0.7"}},
        message=f"import equinox failed:\n{err}\nimport optimistix failed:\nTraceback...\nOther: not this one",
    )
    text, safe = verdict(result, load(ROOT / "matrix.toml"))
    assert not safe
    assert (
        "✗ your pins do not work together: import equinox failed (jax==0.4.30, jaxlib==0.4.30, equinox==0.11.2)" in text
    )
    assert "xla_call_p" in text and "not this one" not in text  # equinox's own error, not the added package's
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


REQ_TABLE = '''
[[requirement]]
package = "optimistix"
release = "0.0.7"
requires = "equinox>=0.11.4"
note = "checked by hand: needs more than StrictConfig"
'''


def test_a_requirement_table_in_matrix_toml_overrides_the_learned_record(tmp_path):
    import tomllib

    from jaxcompat.knowledge.config import parse

    matrix = parse(tomllib.loads(REQ_TABLE), tmp_path / "matrix.toml")
    [k] = matrix.requirements
    learned.record(tmp_path, [Learned("optimistix", "0.0.7", "equinox>=0.11.3", ">=0.11.1",
                                      "AttributeError: x", "optimistix/_search.py:42")])
    [r] = learned.known(tmp_path, committed=tmp_path / "none.json", by_hand=matrix.requirements)
    assert (r.requires, r.declares, r.frame) == ("equinox>=0.11.4", ">=0.11.1", "matrix.toml [[requirement]]")
    # with equinox 0.11.3 the hand-written bound still avoids the release; the learned one would not
    cell = replace(_cell(), pins={**_cell().pins, "equinox": "0.11.3"})
    assert learned.prepare(cell, [r])[0].avoid == ("optimistix!=0.0.7",)


@pytest.mark.parametrize("edit, key", [
    (lambda t: t.replace('requires = "equinox>=0.11.4"', 'requires = "equinox"'), "requirement[0].requires"),
    (lambda t: t.replace('release = "0.0.7"', 'release = "soon"'), "requirement[0].release"),
    (lambda t: t.replace('note = "checked by hand: needs more than StrictConfig"', ''), "requirement[0].note"),
    (lambda t: t + 'colour = "red"\n', "requirement[0]"),
])
def test_a_bad_requirement_table_names_the_file_the_key_and_the_fix(tmp_path, edit, key):
    import tomllib

    from jaxcompat.knowledge.config import parse
    from jaxcompat.model.matrix import ConfigError

    with pytest.raises(ConfigError) as e:
        parse(tomllib.loads(edit(REQ_TABLE)), tmp_path / "matrix.toml")
    assert e.value.key.startswith(key) and e.value.fix and "matrix.toml" in str(e.value)


def test_the_compatibility_table_lists_what_was_learned():
    r = Learned("optimistix", "0.0.7", "equinox>=0.11.3", ">=0.11.1",
                "AttributeError: module 'equinox' has no attribute 'StrictConfig'", "optimistix/_search.py:42")
    text = markdown([r])
    assert "| optimistix 0.0.7 | equinox>=0.11.3 | equinox>=0.11.1 |" in text and "StrictConfig" in text
    assert markdown([]) == ""
    assert table([r]).splitlines() == ["optimistix==0.0.7 needs equinox>=0.11.3 (declares equinox>=0.11.1)",
                                       "    AttributeError: module 'equinox' has no attribute 'StrictConfig'  "
                                       "[optimistix/_search.py:42]", "    tried with -"]
    assert table([]) == "no learned requirements"

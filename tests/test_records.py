"""The one converter of records to and from JSON (jaxcompat/model/records.py): what a record
declares on its fields is what it stores, a stored report of any version reads, and a record that
cannot be read says which key and why."""

from __future__ import annotations

import glob
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from jaxcompat.model.crater import DependentResult
from jaxcompat.model.outcomes import CaseResult, CellResult
from jaxcompat.model.records import Record, RecordError, attr
from jaxcompat.model.usertests import UserTest
from jaxcompat.model.vocab import CellStatus, Phase, UserTestSide, UserTestStatus
from jaxcompat.model.warnings import NewWarning

REPO = Path(__file__).resolve().parents[1]


@dataclass
class _Inner(Record):
    word: Phase = Phase.CALL
    n: int = 0


@dataclass
class _Outer(Record):
    name: str
    klass: str = attr("", key="class")
    inner: _Inner | None = None
    inners: list[_Inner] = field(default_factory=list)
    quiet: list[str] = attr(default_factory=list, omit=True)
    cache: dict = attr(default_factory=dict, store=False)
    _extra = ("size",)

    @property
    def size(self) -> int:
        return len(self.inners)


def test_a_record_stores_its_fields_in_order_as_declared():
    rec = _Outer("a", "k", _Inner(Phase.SETUP, 2), [_Inner()], cache={"x": 1})
    assert rec.to_dict() == {"name": "a", "class": "k", "inner": {"word": Phase.SETUP, "n": 2},
                             "inners": [{"word": Phase.CALL, "n": 0}], "size": 1}
    assert list(rec.to_dict()) == ["name", "class", "inner", "inners", "size"]  # quiet omitted, cache never
    assert _Outer("a", quiet=["q"]).to_dict()["quiet"] == ["q"]


def test_a_record_reads_back_what_it_stored():
    rec = _Outer("a", "k", _Inner(Phase.SETUP, 2), [_Inner(Phase.TEARDOWN)], ["q"])
    back = _Outer.from_dict(json.loads(json.dumps(rec.to_dict())))
    assert back == rec and back.inner.word is Phase.SETUP and back.inners[0].word is Phase.TEARDOWN


def test_reading_is_lenient_where_a_report_of_another_version_differs():
    back = _Outer.from_dict({"name": "a", "later_key": 1, "inners": None})
    assert back == _Outer("a")  # an unknown key left to its readers, a null or a missing key: the default


def test_a_record_that_cannot_be_read_names_the_key_path():
    with pytest.raises(RecordError, match=r"^inners\[1\]\.word: 'sideways' is not a Phase; use one of: "):
        _Outer.from_dict({"name": "a", "inners": [{}, {"word": "sideways"}]})
    with pytest.raises(KeyError, match="name: missing"):  # the readers catch KeyError or ValueError
        _Outer.from_dict({"class": "k"})
    with pytest.raises(ValueError, match="expected a table of _Inner, got list"):
        _Outer.from_dict({"name": "a", "inner": [1]})


def test_a_record_whose_keys_forget_a_field_refuses_to_store():
    @dataclass
    class Forgot(Record):
        a: int = 0
        b: int = 0
        _keys = ("a",)

    with pytest.raises(TypeError, match=r"Forgot\._keys lacks \['b'\]"):
        Forgot().to_dict()


def test_the_records_keep_what_their_reports_always_stored():
    test = UserTest("t.py::x", UserTestSide.PASSED, None, UserTestStatus.PASS)
    assert list(test.to_dict())[-1] == "class" and "baseline" not in test.to_dict() and "phase" not in test.to_dict()
    cell = CellResult("c", "3.11", "cpu", CellStatus.OK, results=[CaseResult("t.py::x", phase=Phase.CALL)])
    assert "sources" not in cell.to_dict() and "phase" not in cell.to_dict()["results"][0]
    warning = NewWarning("k", "DeprecationWarning", "m", tests={"b": ["t2"], "a": ["t1"]})
    assert list(warning.to_dict())[-4:] == ["removal_from", "count", "projects", "tests"]
    assert warning.to_dict()["projects"] == ["a", "b"] and "fix" not in warning.to_dict()


@pytest.mark.parametrize("pattern", ["reports/crater/*/dependents/*.json", "reports/baseline.json"])
def test_a_stored_report_read_and_written_again_is_a_fixed_point(pattern):
    for path in sorted(glob.glob(str(REPO / pattern))):
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        records = [CellResult.from_dict(c) for c in data["cells"]] if "schema" in data else [
            DependentResult.from_dict(data)]
        for rec in records:
            once = rec.to_dict()
            assert type(rec).from_dict(json.loads(json.dumps(once))).to_dict() == once, path


def test_a_judged_result_stored_without_its_tests_is_unreadable_not_safe(tmp_path):
    """A part of a split dependent whose stored file lost its ``tests`` (damaged, hand-made) was
    merged as if nothing broke: exit 0 where the part says broken (red team 5). It is unreadable
    now: the merge says the part has no result and cannot judge (exit 2)."""
    import shutil
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    run = tmp_path / "crater" / "split-lineax"
    shutil.copytree(root / "reports/crater/split-lineax/dependents", run / "dependents")
    part = run / "dependents" / "lineax.part1-of-2.json"
    stored = json.loads(part.read_text(encoding="utf-8"))
    assert stored["verdict"] == "broken"
    with pytest.raises(RecordError, match="without its tests"):
        DependentResult.from_dict({k: v for k, v in stored.items() if k != "tests"})
    part.write_text(json.dumps({k: v for k, v in stored.items() if k != "tests"}), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "jaxcompat", "crater", "--report-only", "--reports", str(tmp_path),
                           "--name", "split-lineax", "--dependents", str(root / "reports/crater/seeds/core.toml")],
                          cwd=root, capture_output=True, text=True)
    assert done.returncode == 2, done.stdout + done.stderr
    assert json.loads((run / "crater.json").read_text(encoding="utf-8"))["exit"] == 2

"""A long suite on many machines (issue 39 part 7): a dependent's test files dealt into parts, each
a unit of ``--shard``, merged back into one dependent by ``--report-only``. Fast, no jax."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from jaxcompat.knowledge.dependents import parse
from jaxcompat.model.crater import DependentResult, Plan, exit_status
from jaxcompat.model.dependents import Dependent, DependentSource, part_of
from jaxcompat.model.matrix import ConfigError
from jaxcompat.model.usertests import UserTest
from jaxcompat.model.vocab import DependentVerdict, UserTestStatus
from jaxcompat.operations import crater, craterparts
from jaxcompat.report.crater import cost_line

FILES = [f"tests/test_{c}.py" for c in "abcdefg"]


def _dep(name: str, split: int = 1) -> Dependent:
    return Dependent(name, DependentSource(version="1.0"), split=split)


# -------------------------------------------------------------------- the file and the deal


@pytest.mark.parametrize("value", [0, -1, 65, 2.5, True, "2"])
def test_a_bad_split_names_the_file_the_key_and_the_fix(value):
    with pytest.raises(ConfigError) as e:
        parse({"dependent": [{"name": "diffrax", "version": "latest", "split": value}]}, "deps.toml")
    said = str(e.value)
    assert "deps.toml" in said and "dependent[diffrax].split" in said and "fix: write split = 4" in said


def test_split_is_read_and_defaults_to_the_whole_suite():
    deps = parse({"dependent": [{"name": "diffrax", "version": "latest", "split": 3},
                                {"name": "lineax", "version": "latest"}]})
    assert [(d.name, d.split) for d in deps.dependents] == [("diffrax", 3), ("lineax", 1)]


def test_the_deal_is_deterministic_and_balanced_by_durations():
    durations = {f: float(i + 1) for i, f in enumerate(FILES)}  # 1..7 s, 28 s in all
    parts = craterparts.deal(FILES, 2, durations)
    assert parts == craterparts.deal(list(reversed(FILES)), 2, dict(reversed(list(durations.items()))))
    assert sorted(f for p in parts for f in p) == sorted(FILES)  # every file exactly once
    loads = [sum(durations[f] for f in p) for p in parts]
    assert abs(loads[0] - loads[1]) <= 2 and all(p == sorted(p) for p in parts)
    three = craterparts.deal(FILES, 3, durations)
    assert max(sum(durations[f] for f in p) for p in three) <= 10  # the ideal is 28 / 3 = 9.3


def test_files_are_found_sorted_and_weighed_by_size_without_durations(tmp_path):
    for i, f in enumerate(FILES):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("x" * (100 * (i + 1)))
    (tmp_path / "tests" / "helpers.py").write_text("")
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "test_not_theirs.py").write_text("")
    assert craterparts.suite_files(tmp_path, ("tests",)) == FILES
    assert craterparts.suite_files(tmp_path, ()) == FILES  # the whole source, hidden folders left out
    assert craterparts.suite_files(tmp_path, ("tests/test_a.py::test_one", "tests/test_b.py")) == [
        "tests/test_a.py::test_one", "tests/test_b.py"]
    weights = craterparts.weights_of(tmp_path, FILES)
    assert weights["tests/test_g.py"] == 700.0
    assert craterparts.weights_of(tmp_path, FILES, {FILES[0]: 1.0}) == weights  # durations only when all have one
    dep = replace(_dep("diffrax", 2), tests=("tests",), part=1)
    mine, every = craterparts.part_tests(dep, tmp_path)
    other, _ = craterparts.part_tests(replace(dep, part=2), tmp_path)
    assert every == FILES and sorted(mine + other) == FILES and not set(mine) & set(other)


# -------------------------------------------------------------------- shards deal parts


@pytest.mark.parametrize("n", [1, 2, 3, 8])
def test_shards_deal_whole_dependents_and_parts_each_once(n):
    units = craterparts.units([_dep("diffrax", 3), _dep("lineax"), _dep("optax", 2)])
    assert [u.unit for u in units] == ["diffrax.part1-of-3", "diffrax.part2-of-3", "diffrax.part3-of-3", "lineax",
                                       "optax.part1-of-2", "optax.part2-of-2"]
    dealt = [u.unit for i in range(1, n + 1) for u in crater.shard(units, f"{i}/{n}")]
    assert sorted(dealt) == sorted(u.unit for u in units)
    if n >= 3:  # no more parts than shards: each part of diffrax on a shard of its own
        where = {u.unit: i for i in range(1, n + 1) for u in crater.shard(units, f"{i}/{n}")}
        assert len({where[f"diffrax.part{k}-of-3"] for k in (1, 2, 3)}) == 3
    assert part_of("diffrax.part2-of-3") == ("diffrax", 2, 3) and part_of("diffrax") is None


# -------------------------------------------------------------------- merging parts


def _part(k: int, n: int, files: list[str], verdict=DependentVerdict.SAFE, seconds=60.0, broken=False):
    deal = craterparts.deal(files, n, {})
    mine = deal[k - 1]
    tests = [UserTest(f"{f}::test_x", "failed" if broken else "passed", "passed",
                                UserTestStatus.BROKEN if broken else UserTestStatus.PASS) for f in mine]
    return DependentResult(f"diffrax.part{k}-of-{n}", verdict, version="0.6.0", seconds=seconds,
                                  ran={"candidate": len(tests), "baseline": len(tests)}, tests=tests, only=mine,
                                  part=[k, n], split_files=list(files), environments=2,
                                  plan=Plan(("jax==0.4.33",), ("jax==0.4.31",)).key)


def test_parts_merge_into_one_dependent_with_its_cost():
    merged = craterparts.merge([_part(1, 2, FILES, seconds=120.0), _part(2, 2, FILES, seconds=90.0)])
    assert len(merged) == 1
    m = merged[0]
    assert m.name == "diffrax" and m.verdict == DependentVerdict.SAFE and m.ran == {"candidate": 7, "baseline": 7}
    assert len(m.tests) == 7 and m.only == FILES and m.seconds == 210.0 and m.part_seconds == [120.0, 90.0]
    assert exit_status(merged) == 0
    c = crater.cost(merged, 8, 210.0)
    assert c["split"]["diffrax"] == {"parts": 2, "serial_minutes": 3.5, "on_shards_minutes": 2.0,
                                     "part_minutes": [2.0, 1.5]}
    assert c["on_shards_minutes"] == 2.0  # the parts on two shards, not 3.5 min on one
    assert "diffrax split in 2 parts: 3.5 min here" in cost_line(c) and "2.0 min on 2 shards" in \
        cost_line(c)


def test_a_broken_part_breaks_the_merged_dependent():
    broken = _part(2, 2, FILES, verdict=DependentVerdict.BROKEN, broken=True)
    merged = craterparts.merge([_part(1, 2, FILES), broken])
    assert merged[0].verdict == DependentVerdict.BROKEN and exit_status(merged) == 1


@pytest.mark.parametrize("parts, words", [
    ([1], "no result stored for part2-of-2"),
    ([1, 2, 3], "different splits"),
])
def test_parts_that_do_not_make_the_whole_are_never_safe(parts, words):
    results = [_part(k, 2, FILES) for k in parts if k <= 2] + [_part(1, 3, FILES) for k in parts if k == 3]
    merged = craterparts.merge(results)
    assert merged[0].verdict == DependentVerdict.NOT_RUN and words in merged[0].cause
    assert exit_status(merged) == 2


def test_parts_dealt_differently_or_of_other_commits_are_never_safe():
    other = _part(2, 2, FILES)
    other.only = other.only[:-1]  # a machine that saw one file fewer
    merged = craterparts.merge([_part(1, 2, FILES), other])
    assert merged[0].verdict == DependentVerdict.NOT_RUN and "dealt differently" in merged[0].cause
    moved = replace(_part(2, 2, FILES), version="0.6.1")
    merged = craterparts.merge([_part(1, 2, FILES), moved])
    assert "different releases or commits" in merged[0].cause and exit_status(merged) == 2


def test_a_part_not_judged_is_said_in_the_merged_verdict():
    crashed = replace(_part(2, 2, FILES), verdict=DependentVerdict.CRASHED, cause="boom", tests=[], ran={})
    merged = craterparts.merge([_part(1, 2, FILES), crashed])
    assert merged[0].verdict == DependentVerdict.CRASHED and "diffrax.part2-of-2: boom" in merged[0].cause
    assert exit_status(merged) == 2


# -------------------------------------------------------------------- --report-only over parts


def _stored(tmp_path: Path, parts: list[int]) -> Path:
    out = tmp_path / "reports" / "crater"
    plan = Plan(("jax==0.4.33",), ("jax==0.4.31",))
    units = craterparts.units([_dep("diffrax", 2), _dep("lineax")])
    for s in ("1/2", "2/2"):
        crater.store_plan(out, plan, units, s)
    for k in parts:
        (out / crater.RESULTS / f"diffrax.part{k}-of-2.json").write_text(
            json.dumps(replace(_part(k, 2, FILES), run_id=plan.run_id).to_dict()))
    whole = DependentResult("lineax", DependentVerdict.SAFE, version="0.0.5", plan=plan.key, run_id=plan.run_id,
                                   ran={"candidate": 4, "baseline": 4})
    (out / crater.RESULTS / "lineax.json").write_text(json.dumps(whole.to_dict()))
    (tmp_path / "dependents.toml").write_text('[[dependent]]\nname = "diffrax"\nversion = "latest"\nsplit = 2\n'
                                              '[[dependent]]\nname = "lineax"\nversion = "latest"\n')
    return out


def _merge(tmp_path, capsys):
    from jaxcompat.commands import main

    code = main(["crater", "--report-only", "--reports", str(tmp_path / "reports"), "--state",
                 str(tmp_path / "state"), "--dependents", str(tmp_path / "dependents.toml")])
    return code, capsys.readouterr(), json.loads((tmp_path / "reports" / "crater" / "crater.json").read_text())


def test_report_only_merges_every_part_into_one_dependent(tmp_path, capsys):
    _stored(tmp_path, [1, 2])
    code, said, data = _merge(tmp_path, capsys)
    assert code == 0 and "breaks none of the 2 dependents" in said.out, said.out
    assert {d["name"]: d["verdict"] for d in data["dependents"]} == {"diffrax": "safe", "lineax": "safe"}
    assert data["cost"]["split"]["diffrax"]["parts"] == 2 and "diffrax split in 2 parts" in said.out


def test_report_only_with_a_part_missing_names_it_and_exits_2(tmp_path, capsys):
    _stored(tmp_path, [1])
    code, said, data = _merge(tmp_path, capsys)
    assert code == 2 and "breaks none" not in said.out
    assert "diffrax.part2-of-2" in said.out
    diffrax = next(d for d in data["dependents"] if d["name"] == "diffrax")
    assert diffrax["verdict"] == "not-run" and diffrax["cause"].startswith("diffrax.part2-of-2: no result stored")


def test_report_only_with_a_corrupt_part_names_it_and_exits_2(tmp_path, capsys):
    out = _stored(tmp_path, [1, 2])
    (out / crater.RESULTS / "diffrax.part2-of-2.json").write_text('{"name": "diffrax.part2-of-2", "ver')
    code, said, _ = _merge(tmp_path, capsys)
    assert code == 2 and "diffrax.part2-of-2.json" in said.out and "could not be read" in said.out
    assert "breaks none" not in said.out


def test_an_earlier_stored_run_weighs_the_deal(tmp_path):
    for f in FILES:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("x" * 1000 if f == FILES[0] else "x")  # by size: test_a alone in a part
    earlier = [_part(1, 2, FILES), _part(2, 2, FILES)]
    many = [UserTest(f"{FILES[1]}::test_{i}", "passed", "passed", UserTestStatus.PASS) for i in range(20)]
    earlier[0].tests += many  # test_b ran 21 tests there: it is the heavy one now
    out = tmp_path / "reports"
    craterparts.store_weights(out, craterparts.merge(earlier))
    dep = craterparts.weighed([_dep("diffrax", 2), _dep("lineax")], out)
    assert dict(dep[0].weights)[FILES[1]] == 21.0 and dep[1].weights == ()
    broken = replace(earlier[1], verdict=DependentVerdict.CRASHED, tests=[])
    craterparts.store_weights(tmp_path / "other", craterparts.merge([earlier[0], broken]))
    assert craterparts.weighed([_dep("diffrax", 2)], tmp_path / "other")[0].weights == ()  # only a judged whole
    one, _ = craterparts.part_tests(replace(dep[0], tests=("tests",), part=1), tmp_path)
    two, _ = craterparts.part_tests(replace(dep[0], tests=("tests",), part=2), tmp_path)
    assert FILES[1] in one + two and [FILES[1]] in (one, two)  # test_b alone; the rest together

"""Which run a crater merge takes (red team 7, R3 and R3b): the shards of one run share an id
(``--run ID``, ``$JAXCOMPAT_RUN_ID``, CI's ``GITHUB_RUN_ID``); without one, the shards that ran at
the same time. Never the UTC day, which split one run started either side of midnight (a false
"could not judge", exit 2) and joined two runs of one day (an earlier run's shard merged as current:
"breaks none", exit 0, for a dependent the later run never judged). Fast, no jax: the real crater
over fake dependents (tests/fake_crater.py, its clock faked with $FAKE_CLOCK)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from datetime import datetime
from pathlib import Path

import pytest

from jaxcompat.model.crater import DependentResult, Plan
from jaxcompat.model.dependents import Dependent, DependentSource
from jaxcompat.model.vocab import DependentVerdict
from jaxcompat.operations import crater

REPO = Path(__file__).resolve().parent.parent
DRIVER = REPO / "tests" / "fake_crater.py"
SIDES = ("--baseline", "jax==0.4.31", "jax==0.4.33")
NAMES = ("alpha", "beta")  # alpha falls to shard 1/2, beta to 2/2 (dealt by name)
NO_ID = ("GITHUB_RUN_ID", crater.RUN_ENV)  # the suite may run in CI: its run id is not these runs'


def _tree(tmp: Path) -> Path:
    (tmp / "matrix.toml").write_text('[settings]\ncases_dir = "cases"\n')
    (tmp / "cases").mkdir()
    (tmp / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (tmp / "dependents.toml").write_text("".join(f'[[dependent]]\nname = "{n}"\nversion = "latest"\n\n'
                                                 for n in NAMES))
    for name in NAMES:
        root = tmp / "src" / name
        (root / "tests").mkdir(parents=True)
        (root / "pyproject.toml").write_text(f'[project]\nname = "{name}"\nversion = "1.0"\n')
        (root / "tests" / "test_mod.py").write_text(textwrap.dedent("def test_fine():\n    pass\n"))
    return tmp


def _crater(tmp: Path, *args: str, reports: str = "reports", clock: str = "", env: dict | None = None,
            driver: Path = DRIVER) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in NO_ID}
    return subprocess.run([sys.executable, str(driver), "crater", "--matrix", str(tmp / "matrix.toml"),
                           "--reports", str(tmp / reports), "--state", str(tmp / "state"),
                           "--dependents", str(tmp / "dependents.toml"), *args],
                          capture_output=True, text=True, timeout=300,
                          env={**environ, "FAKE_SOURCES": str(tmp / "src"), "FAKE_CLOCK": clock, **(env or {})})


def _verdicts(folder: Path) -> dict[str, str]:
    return {d["name"]: d["verdict"] for d in json.loads((folder / "crater.json").read_text())["dependents"]}


def test_a_run_started_either_side_of_midnight_is_one_run_and_an_earlier_run_of_the_day_is_not(tmp_path):
    """R3: shard 1/2 started 23:59 UTC, 2/2 at 00:01, in parallel on two machines, no run id: one
    run, merged by its verdict (was exit 2, "of another run: day …"). R3b: later that day a second
    run's shard 1/2 ran and its 2/2 never did: the first run's shard 2/2 (beta "safe") is not
    merged as this run's (was exit 0, "breaks none")."""
    tmp = _tree(tmp_path)
    merged = tmp / "merged" / "crater"
    for i, clock in ((1, "2026-11-26T23:59:00+00:00,2026-11-27T00:30:00+00:00"),
                     (2, "2026-11-27T00:01:00+00:00,2026-11-27T00:31:00+00:00")):
        part = _crater(tmp, *SIDES, "--shard", f"{i}/2", reports=f"shard{i}", clock=clock)
        assert part.returncode == 2, part.stdout + part.stderr  # a shard's own report holds half the run
        shutil.copytree(tmp / f"shard{i}" / "crater" / "dependents", merged / "dependents", dirs_exist_ok=True)
    merge = _crater(tmp, "--report-only", reports="merged")
    assert merge.returncode == 0, merge.stdout + merge.stderr
    assert "breaks none" in merge.stdout and "left out" not in merge.stdout
    assert "merged: the shards without a run id that ran at the same time as the one started last " \
           "(2026-11-27 00:01 UTC)" in merge.stdout
    assert _verdicts(merged) == {"alpha": "safe", "beta": "safe"}
    # 10:00: a second run of the same plan; its shard 1/2's artifact arrives, its 2/2's never does
    part = _crater(tmp, *SIDES, "--shard", "1/2", reports="later", clock="2026-11-27T10:00:00+00:00,"
                   "2026-11-27T10:20:00+00:00")
    shutil.copytree(tmp / "later" / "crater" / "dependents", merged / "dependents", dirs_exist_ok=True)
    merge = _crater(tmp, "--report-only", reports="merged")
    out = merge.stdout + merge.stderr
    assert merge.returncode == 2 and "breaks none" not in out, out
    assert ("✗ left out, a shard of another run: plans/shard-2-of-2.json (of another run: it has no run id and ran "
            "from 2026-11-27 00:01 UTC to 2026-11-27 00:31 UTC, ended before the shards merged started;") in out
    assert "(2026-11-27 10:00 UTC)" in out and "no stored result" in out
    assert _verdicts(merged) == {"alpha": "safe", "beta": "not-run"}


def _shard(out: Path, monkeypatch, run: str, shard: str, start: str, end: str) -> None:
    """A shard's artifact as the crater leaves it: its plan (started ``start``, of the run ``run``),
    its dependent's result (safe), its end (``end``)."""
    plan = Plan(("jax==0.4.33",), ("jax==0.4.31",), run=run)
    times = iter([datetime.fromisoformat(start), datetime.fromisoformat(end)])
    monkeypatch.setattr(crater, "_now", lambda: next(times))
    crater.store_plan(out, plan, [Dependent(n, DependentSource(version="1.0")) for n in NAMES], shard)
    name = NAMES[int(shard[0]) - 1]
    res = DependentResult(name, DependentVerdict.SAFE, version="1.0", plan=plan.key, run_id=plan.run_id,
                          ran={"candidate": 2, "baseline": 2})
    (out / crater.RESULTS / f"{name}.json").write_text(json.dumps(res.to_dict()))
    crater.finish_plan(out, shard)


def _merge(tmp_path: Path, capsys, *args: str) -> tuple[int, str]:
    from jaxcompat.commands import main

    code = main(["crater", "--report-only", "--reports", str(tmp_path / "reports"), "--state",
                 str(tmp_path / "state"), "--dependents", str(tmp_path / "dependents.toml"), *args])
    said = capsys.readouterr()
    return code, said.out + said.err


@pytest.mark.parametrize("run", ["nightly-7", ""])
def test_shards_run_one_after_another_are_one_run_by_their_id_only(tmp_path, monkeypatch, capsys, run):
    """By hand on one machine, 2/2 five hours after 1/2: one run where both were given one id;
    without, they read as two runs (exit 2, the fix named), never as one by a guess."""
    for name in NO_ID:
        monkeypatch.delenv(name, raising=False)
    _tree(tmp_path)
    out = tmp_path / "reports" / "crater"
    of = crater.run_of({}, run)
    _shard(out, monkeypatch, of, "1/2", "2026-11-27T09:00:00+00:00", "2026-11-27T09:10:00+00:00")
    _shard(out, monkeypatch, of, "2/2", "2026-11-27T14:00:00+00:00", "2026-11-27T14:10:00+00:00")
    code, said = _merge(tmp_path, capsys)
    if run:
        assert code == 0 and "breaks none" in said, said
        assert "merged: run nightly-7 (the run id of the shard that started last" in said
    else:
        assert code == 2 and "breaks none" not in said, said
        assert "plans/shard-1-of-2.json (of another run: it has no run id and ran from 2026-11-27 09:00 UTC" in said
        assert "shards of one run run one after another share an id: --run ID or $JAXCOMPAT_RUN_ID" in said


def test_a_merge_takes_the_run_named_and_else_the_last_started(tmp_path, monkeypatch, capsys):
    for name in NO_ID:
        monkeypatch.delenv(name, raising=False)
    _tree(tmp_path)
    out = tmp_path / "reports" / "crater"
    _shard(out, monkeypatch, "run nightly-7", "2/2", "2026-11-27T01:00:00+00:00", "2026-11-27T01:10:00+00:00")
    _shard(out, monkeypatch, "run nightly-7", "1/2", "2026-11-27T01:00:00+00:00", "2026-11-27T01:10:00+00:00")
    assert _merge(tmp_path, capsys, "--run", "nightly-7")[0] == 0
    # the next night's shard 1/2 (its plan file in place of the last one's), its 2/2 missing
    _shard(out, monkeypatch, "run nightly-8", "1/2", "2026-11-28T01:00:00+00:00", "2026-11-28T01:10:00+00:00")
    code, said = _merge(tmp_path, capsys)
    assert code == 2 and "merged: run nightly-8" in said, said
    assert "plans/shard-2-of-2.json (of another run: run nightly-7, not run nightly-8)" in said
    monkeypatch.setenv(crater.RUN_ENV, "nightly-8")  # as --run nightly-8
    code, said = _merge(tmp_path, capsys)
    assert code == 2 and "merged: run nightly-8 (as --run asked)" in said, said
    monkeypatch.delenv(crater.RUN_ENV)
    code, said = _merge(tmp_path, capsys, "--run", "nightly-9")
    assert code == 2 and "--run nightly-9: no shard plan under" in said and "has that run id" in said, said
    assert not list(out.glob("crater.*"))  # nothing merged, no earlier merge's report left looking current


def test_the_run_id_given_is_stored_with_the_shard_s_plan_first_of_all(tmp_path):
    """--run before $JAXCOMPAT_RUN_ID before the CI run's id; the plan says when its shard ran."""
    assert crater.run_of({"GITHUB_RUN_ID": "5", crater.RUN_ENV: "x"}, "y") == "run y"
    assert crater.run_of({"GITHUB_RUN_ID": "5", crater.RUN_ENV: "x"}) == "run x"
    assert crater.run_of({"GITHUB_RUN_ID": "5", crater.RUN_ENV: ""}) == "ci-run 5"
    assert crater.run_of({}) == ""
    tmp = _tree(tmp_path)
    part = _crater(tmp, *SIDES, "--shard", "3/3", "--run", "nightly-7", env={"GITHUB_RUN_ID": "5"})
    assert part.returncode == 2, part.stdout + part.stderr  # shard 3/3 of two dependents holds none
    plan = json.loads((tmp / "reports" / "crater" / crater.RESULTS / crater.PLANS / "shard-3-of-3.json").read_text())
    assert plan["of"] == "run nightly-7" and plan["written"] <= plan["finished"]


@pytest.mark.parametrize("args, env, said", [
    (["--run", ""], {}, "argument --run: an empty run id: write the id every shard of one run shares"),
    (["--run", "a b"], {}, "argument --run: 'a b' is not a run id"),
    (["--run", "x" * 101], {}, "is not a run id"),
    ([], {crater.RUN_ENV: "../x"}, "error: $JAXCOMPAT_RUN_ID: '../x' is not a run id"),
    (["--report-only", "--run", "-x"], {}, "argument --run"),
])
def test_a_bad_run_id_is_refused_before_anything_runs(tmp_path, args, env, said):
    tmp = _tree(tmp_path)
    proc = _crater(tmp, *args, *SIDES, env=env)
    assert proc.returncode == 2 and said in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp / "state").exists() and not (tmp / "reports").exists()


def test_a_shard_stopped_hard_long_ago_carries_no_later_run_into_tonight_s():
    """Red team 9 (C1): a shard killed hard records no end; read as running on for ever it joined every
    later shard without an id into one run, and an earlier night's finished shard was merged as
    tonight's (exit 0 for a dependent tonight never judged). It joins only the run it started in."""
    from jaxcompat.operations.crater import this_run

    def plan(written: str, finished: str | None = None) -> dict:
        return {"written": written, **({"finished": finished} if finished else {})}

    read = [("all.json", plan("2026-11-20T01:00:00+00:00")),  # killed a week ago
            ("shard-2-of-2.json", plan("2026-11-25T01:00:00+00:00", "2026-11-25T01:10:00+00:00")),  # two nights ago
            ("shard-1-of-2.json", plan("2026-11-27T01:00:00+00:00", "2026-11-27T01:10:00+00:00"))]  # tonight
    assert this_run(read)[0] == {"shard-1-of-2.json"}
    # one still running beside tonight's (no end yet) is tonight's; one started tonight and killed, too
    running = [("old.json", read[1][1]), ("a.json", read[2][1]), ("b.json", plan("2026-11-27T01:05:00+00:00"))]
    assert this_run(running)[0] == {"a.json", "b.json"}

"""A wheelhouse (``dist/`` after ``python -m build``: built wheels, no project) as a candidate,
through the command line: ``check ./dist`` or ``check NAME @ file:///ABS/dist`` is the wheel of that
distribution in it (the newest version), pinned as that file and dated by it; a folder that names
no single wheel is a clear exit-2 error naming the folder and the fix, before anything installs.
Offline: tiny wheels in tmp_path, the cell's run faked."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import jaxcompat.operations.check as check_operation
from jaxcompat.commands import main
from jaxcompat.env import candidatekinds, resolution, sources
from jaxcompat.env.candidate import candidate_cell, package_of, parse_requirement
from jaxcompat.model.outcomes import CellResult
from tests.test_sources import make_wheel


@pytest.fixture
def dist(tmp_path, monkeypatch):
    """dist/ with two builds of equinox (0.10.0 is the newer, though "0.9.0" sorts after it as text)."""
    folder = tmp_path / "dist"
    make_wheel(folder, "equinox", "0.9.0", mtime="2026-11-01")
    make_wheel(folder, "equinox", "0.10.0", mtime="2026-11-20")
    monkeypatch.chdir(tmp_path)
    return folder


def _check(tmp_path, monkeypatch, capsys, *requirements: str) -> tuple[int, str, dict]:
    seen: dict = {}

    def fake(c, matrix, **kw):
        seen.update(c.pins)
        return CellResult(c.id, "3.12", "cpu", "ok")
    monkeypatch.setattr(check_operation, "run_cell", fake)
    code = main(["check", *requirements, "--python", "3.12", "--no-verify-escapes",
                 "--reports", str(tmp_path / "reports"), "--state", str(tmp_path / "state")])
    said = capsys.readouterr()
    return code, said.out + said.err, seen


@pytest.mark.parametrize("given", [["./dist"], ["equinox @ {uri}"], ["equinox", "@", "{uri}"]])
def test_a_wheelhouse_is_the_newest_wheel_of_the_distribution_in_it(given, dist, tmp_path, monkeypatch, capsys):
    args = [g.format(uri=dist.as_uri()) for g in given]
    code, out, pins = _check(tmp_path, monkeypatch, capsys, *args)
    assert pins["equinox"] == f"@ {(dist / 'equinox-0.10.0-py3-none-any.whl').as_uri()}", out


def test_its_name_key_and_date_are_the_chosen_wheels(dist):
    req = parse_requirement("./dist")
    assert req.name == "equinox" and req.url == (dist / "equinox-0.10.0-py3-none-any.whl").as_uri()
    assert package_of("./dist") == "equinox"
    ref = sources.direct_ref(parse_requirement(f"equinox @ {dist.as_uri()}"))
    assert ref.kind is candidatekinds.wheel  # from the boundary on, it is that wheel
    assert sources.direct_ref(type(req)(f"equinox @ {dist.as_uri()}")).kind is candidatekinds.wheelhouse
    cell = candidate_cell(["./dist"], python="3.12", companions=False)
    date, why = resolution.resolution_date(cell, Path("/nonexistent"))
    assert date == "2026-11-21"
    assert why == ["resolved as of 2026-11-21: equinox from equinox-0.10.0-py3-none-any.whl, dated by its file "
                   "(2026-11-20)"]
    assert sources.identity(cell.pins, cell.index)["direct"]["equinox"] == \
        sources.content_digest(sources.DirectRef("equinox", req.url, candidatekinds.wheel))
    assert not sources.moving(cell.pins, cell.index)


def test_a_wheelhouse_of_several_distributions_asks_which(dist, tmp_path, monkeypatch, capsys):
    make_wheel(dist, "diffrax", "0.7.0")
    code, out, pins = _check(tmp_path, monkeypatch, capsys, "./dist")
    assert code == 2 and not pins
    assert (f"'./dist': {dist} holds wheels of 2 distributions (diffrax, equinox): name the one to check, "
            f"e.g. diffrax @ {dist.as_uri()}") in out
    assert not (tmp_path / "state").exists()
    code, out, pins = _check(tmp_path, monkeypatch, capsys, f"diffrax @ {dist.as_uri()}")
    assert pins["diffrax"] == f"@ {(dist / 'diffrax-0.7.0-py3-none-any.whl').as_uri()}", out


def test_a_wheelhouse_without_the_named_wheel_or_with_two_of_it_is_exit_2(dist, tmp_path, monkeypatch, capsys):
    code, out, pins = _check(tmp_path, monkeypatch, capsys, f"optimistix @ {dist.as_uri()}")
    assert code == 2 and not pins
    assert (f"optimistix @ {dist.as_uri()}: no wheel of optimistix in {dist} (it holds equinox): "
            f"build one there (python -m build --wheel), or name one of those") in out
    linux = dist / "equinox-0.10.0-cp312-cp312-manylinux_2_17_x86_64.whl"
    shutil.copy(dist / "equinox-0.10.0-py3-none-any.whl", linux)
    code, out, pins = _check(tmp_path, monkeypatch, capsys, "./dist")
    assert code == 2 and not pins
    assert (f"equinox @ {dist.as_uri()}: 2 wheels of equinox 0.10.0 in {dist} "
            f"({linux.name}, equinox-0.10.0-py3-none-any.whl): "
            f"give the one to check, e.g. equinox @ {linux.as_uri()}") in out
    assert not (tmp_path / "state").exists()


def test_a_project_folder_holding_wheels_is_still_a_project(dist, tmp_path):
    (dist / "pyproject.toml").write_text('[project]\nname = "equinox"\nversion = "0.10.0"\n')
    assert parse_requirement("./dist").url == dist.as_uri()
    assert sources.direct_ref(parse_requirement("./dist")).kind is candidatekinds.folder
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="a folder without a project name"):
        parse_requirement("./empty")

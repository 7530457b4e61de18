"""jaxlib from jax's own metadata, and the Python a combination installs on (offline, fake index)."""

import io
import json
import tarfile

import pytest
from packaging.specifiers import SpecifierSet

from jaxcompat.env import resolution
from jaxcompat.model.matrix import Cell


def _file(name, date="2024-01-01", requires="", yanked=False):
    return {"filename": name, "url": name, "requires_python": requires, "yanked": yanked, "date": date}


@pytest.fixture
def index(tmp_path):
    jaxlib = {
        "0.4.13": [_file(f"jaxlib-0.4.13-cp3{m}-cp3{m}-manylinux2014_x86_64.whl", "2025-12-05", ">=3.8")
                   for m in (9, 10, 11)],
        "0.4.36": [_file("jaxlib-0.4.36-cp310-cp310-manylinux2014_x86_64.whl", "2024-12-05", ">=3.10")],
        "0.5.1": [_file("jaxlib-0.5.1-cp311-cp311-manylinux2014_x86_64.whl", "2025-02-24", ">=3.10")],
        "0.11.2": [_file(f"jaxlib-0.11.2-cp3{m}-cp3{m}-manylinux_2_27_x86_64.whl", "2026-09-17", ">=3.12")
                   for m in (12, 13)],
        "0.12.0.1": [_file(f"jaxlib-0.12.0.1-cp3{m}-cp3{m}-manylinux_2_27_x86_64.whl", "2026-10-21", ">=3.12")
                     for m in (12, 13)],
    }
    jax = {"0.4.14": [_file("jax-0.4.14.tar.gz", "2023-07-27", ">=3.9")],
           "0.4.37": [_file("jax-0.4.37-py3-none-any.whl", "2024-12-09", ">=3.10")],
           "0.5.2": [_file("jax-0.5.2-py3-none-any.whl", "2025-03-04", ">=3.10")],
           "0.12.0.1": [_file("jax-0.12.0.1-py3-none-any.whl", "2026-10-21", ">=3.12")]}
    for dist, files in (("jaxlib", jaxlib), ("jax", jax)):
        (tmp_path / f"project-{dist}.json").write_text(json.dumps({"url": "x", "files": files}))
        (tmp_path / f"releases-{dist}.json").write_text(json.dumps(
            {v: {"date": fs[0]["date"], "yanked": False} for v, fs in files.items()}))
    for version, spec in (("0.4.37", "<=0.4.37,>=0.4.36"), ("0.5.2", "<=0.5.2,>=0.5.1"),
                          ("0.12.0.1", "<=0.12.0.1,>=0.11.2"), ("0.4.14", "==0.4.14")):
        (tmp_path / f"jax-{version}-jaxlib.txt").write_text(spec)
    return tmp_path


METADATA = """Metadata-Version: 2.1
Name: jax
Requires-Dist: jaxlib<=0.5.2,>=0.5.1
Requires-Dist: jaxlib==0.5.1; extra == "minimum-jaxlib"
Requires-Dist: jaxlib==0.5.1; extra == "cuda12"
"""


def test_unconditional_requirement_wins_over_extras():
    assert resolution.jaxlib_spec_from_metadata(METADATA) == SpecifierSet("<=0.5.2,>=0.5.1")


def test_old_jax_names_jaxlib_only_in_its_cpu_extra():
    text = 'Requires-Dist: jaxlib==0.4.20; extra == "cpu"\nRequires-Dist: jaxlib==0.4.19; extra == "cuda"\n'
    assert resolution.jaxlib_spec_from_metadata(text) == SpecifierSet("==0.4.20")


def test_sdist_without_requires_dist_reads_setup_py():
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, text in (("jax-0.4.13/PKG-INFO", "Name: jax\n"),
                           ("jax-0.4.13/setup.py", "_current_jaxlib_version = '0.4.13'\n")):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    assert resolution._jaxlib_spec_from_sdist(buf.getvalue()) == SpecifierSet("==0.4.13")


@pytest.mark.parametrize("jax, expected", [("0.4.37", "0.4.36"), ("0.5.2", "0.5.1"), ("0.12.0.1", "0.12.0.1")])
def test_jaxlib_is_what_jax_asks_for_not_its_number(index, jax, expected):
    cell = Cell(id="c", python="3.12", backend="cpu", pins={"jax": jax})
    assert resolution.complete(cell, index).pins["jaxlib"] == expected


def test_jaxlib_as_of_the_date(index):
    # jax 0.12.0.1 accepts jaxlib >= 0.11.2: as of a date before 0.12.0.1, pip took 0.11.2
    spec = SpecifierSet("<=0.12.0.1,>=0.11.2")
    assert resolution.pick_jaxlib("0.12.0.1", spec, index, "2026-10-01") == "0.11.2"


def test_a_jaxlib_never_published_is_said_so(index):
    cell = Cell(id="c", python="3.11", backend="cpu", pins={"jax": "0.4.14"})
    with pytest.raises(
        resolution.ResolutionError, match=r"jax 0\.4\.14 asks for jaxlib==0\.4\.14.*no such jaxlib was ever published"
    ):
        resolution.complete(cell, index)


def test_python_from_requires_python_and_wheel_tags(index):
    assert resolution.python_fits("3.12", {"jax": "0.4.37", "jaxlib": "0.4.36"}, index) == \
        "jaxlib 0.4.36 has wheels for Python 3.10 only"
    assert "requires Python >=3.12" in resolution.python_fits("3.11", {"jax": "0.12.0.1"}, index)
    assert resolution.python_fits("3.13", {"jax": "0.12.0.1", "jaxlib": "0.12.0.1"}, index) == ""


def test_auto_python_is_the_lowest_that_fits(index, monkeypatch):
    monkeypatch.setattr(resolution, "find_python", lambda v: f"/usr/bin/python{v}")
    cell = Cell(id="c", python="auto", backend="cpu", pins={"jax": "0.12.0.1"})
    done = resolution.complete(cell, index)
    assert done.python == "3.12" and done.pins["jaxlib"] == "0.12.0.1"
    old = Cell(id="o", python="auto", backend="cpu", pins={"jax": "0.4.13", "jaxlib": "0.4.13"})
    (index / "project-jax.json").write_text(json.dumps({"url": "x", "files": {
        "0.4.13": [_file("jax-0.4.13.tar.gz", "2023-06-22", ">=3.8")]}}))
    assert resolution.complete(old, index).python == "3.10"


def test_no_python_fits(index, monkeypatch):
    monkeypatch.setattr(resolution, "find_python", lambda v: f"/usr/bin/python{v}")
    cell = Cell(id="c", python="auto", backend="cpu", pins={"jax": "0.12.0.1", "jaxlib": "0.4.36"})
    with pytest.raises(resolution.ResolutionError, match="no Python from 3.10, 3.11, 3.12, 3.13 installs"):
        resolution.complete(cell, index)

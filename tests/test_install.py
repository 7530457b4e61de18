"""jax-compat as an installed tool: the wheel carries the data (matrix.toml, cases/, conftest.py,
the pytest config) in jaxcompat/bundle/; run from it, reports go to ./reports and environments
to the user's cache; run from the checkout, everything stays as it was. The build and the runs
here are offline (the build backend is imported, nothing is downloaded)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from jaxcompat._util.layout import PACKAGE, layout
from jaxcompat.run.runner import plugin_path, run_cases
from tests.helpers import failure_toml

REPO = Path(__file__).resolve().parent.parent


def _fake_package(tmp_path: Path, bundled: bool) -> Path:
    package = tmp_path / "site" / "jaxcompat"
    (package / "bundle").mkdir(parents=True)
    if bundled:
        (package / "bundle" / "matrix.toml").write_text("")
    return package


def test_the_checkout_keeps_its_reports_and_state_wherever_the_command_starts(tmp_path):
    where = layout(PACKAGE, cwd=tmp_path, env={}, home=tmp_path / "home")
    assert where.bundled is False and where.root == REPO
    assert where.reports == REPO / "reports" and where.state == REPO / ".jaxcompat"
    assert layout(PACKAGE, cwd=tmp_path, env={"JAXCOMPAT_STATE": "/srv/jc"}).state == Path("/srv/jc")


def test_an_installed_wheel_reads_its_bundle_and_writes_to_the_cwd_and_the_user_cache(tmp_path):
    package, cwd, home = _fake_package(tmp_path, bundled=True), tmp_path / "project", tmp_path / "home"
    where = layout(package, cwd=cwd, env={}, home=home)
    assert where.bundled is True and where.root == package / "bundle"
    assert where.reports == cwd / "reports"
    assert where.state == home / ".cache" / "jax-compat"
    assert layout(package, cwd=cwd, env={"XDG_CACHE_HOME": "/xdg"}, home=home).state == Path("/xdg/jax-compat")
    # a relative XDG_CACHE_HOME is invalid by the XDG spec: ignored
    assert layout(package, cwd=cwd, env={"XDG_CACHE_HOME": "rel"}, home=home).state == home / ".cache" / "jax-compat"
    override = {"XDG_CACHE_HOME": "/xdg", "JAXCOMPAT_STATE": "/srv/jc"}
    assert layout(package, cwd=cwd, env=override, home=home).state == Path("/srv/jc")


def test_a_package_without_bundled_data_is_the_checkout(tmp_path):
    package = _fake_package(tmp_path, bundled=False)
    where = layout(package, cwd=tmp_path / "elsewhere", env={}, home=tmp_path / "home")
    assert where.bundled is False and where.root == package.parent
    assert where.reports == package.parent / "reports" and where.state == package.parent / ".jaxcompat"


def test_the_cell_imports_the_plugin_from_a_root_without_the_package(tmp_path):
    """Bundled data sits inside the package, not next to it: the cell's pytest gets a PYTHONPATH
    folder holding only a link to this package (any PYTHONPATH of this process is dropped here)."""
    root = tmp_path / "bundle"
    (root / "cases").mkdir(parents=True)
    (root / "cases" / "test_x.py").write_text("def test_ok():\n    pass\n")
    (root / "conftest.py").write_text((REPO / "conftest.py").read_text())
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = "--strict-markers"\n')
    run = run_cases(sys.executable, root, ["cases"], backend="cpu", imports=[], timeout_s=60,
                    workdir=tmp_path / "work", extra_env={"PYTHONPATH": ""})
    assert [(r.case, r.status) for r in run.results] == [("cases/test_x.py::test_ok", "passed")]
    shim = plugin_path(root, tmp_path / "work")
    assert shim is not None and sorted(p.name for p in shim.iterdir()) == ["jaxcompat"]
    assert (shim / "jaxcompat").resolve() == PACKAGE
    assert plugin_path(REPO, tmp_path / "work2") is None  # the checkout: pytest's cwd has it


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    try:
        import hatchling  # noqa: F401 - the build backend pyproject.toml names
    except ImportError:
        pytest.fail("hatchling is not installed (nox -s tests installs pyproject's build requirements)")
    out = tmp_path_factory.mktemp("dist")
    build = subprocess.run([sys.executable, "-c", "import sys, hatchling.build as b; print(b.build_wheel(sys.argv[1]))",
                            str(out)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert build.returncode == 0, build.stderr
    return out / build.stdout.strip().splitlines()[-1]


def test_the_wheel_carries_the_mechanism_the_data_and_the_console_script(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        entry_points = z.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
        bundled_pyproject = z.read("jaxcompat/bundle/pyproject.toml").decode()
    cases = {p.name for p in (REPO / "cases").glob("*.py")}
    assert cases and {n.rsplit("/", 1)[1] for n in names if n.startswith("jaxcompat/bundle/cases/")} == cases
    assert {"jaxcompat/bundle/matrix.toml", "jaxcompat/bundle/conftest.py", "jaxcompat/commands/__init__.py",
            "jaxcompat/plugin/pytest_plugin.py", "jaxcompat/_util/layout.py"} <= names
    assert bundled_pyproject == (REPO / "pyproject.toml").read_text()  # the pytest config, as is
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    # nothing outside the package: a conftest.py or matrix.toml at the top of site-packages would be a mess
    assert {n.split("/")[0] for n in names} == {"jaxcompat", wheel.name.split("-")[0] + "-" + wheel.name.split("-")[1]
                                                + ".dist-info"}
    assert "jax-compat = jaxcompat.commands:main" in entry_points


@pytest.mark.integration
def test_the_unpacked_wheel_run_elsewhere_uses_its_bundle_the_cwd_and_the_user_cache(wheel, tmp_path):
    site, cwd, cache = tmp_path / "site", tmp_path / "project", tmp_path / "xdg"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
    cwd.mkdir()
    rules = cwd / "rules.toml"
    rules.write_text(failure_toml("my-weak-type", "cases/test_weak_type_closure.py", '{ jax = ">=0.4.32" }'))
    env = {**{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "JAXCOMPAT_STATE")},
           "PYTHONPATH": str(site), "XDG_CACHE_HOME": str(cache), "COLUMNS": "400"}  # no help wrapping

    def jax_compat(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "jaxcompat", *args], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=120)

    helped = jax_compat("check", "--help")
    assert helped.returncode == 0 and helped.stdout.startswith("usage: jax-compat check")
    assert f"(default: {cache / 'jax-compat'};" in helped.stdout and f"(default: {cwd / 'reports'})" in helped.stdout
    merged = jax_compat("cells", "--rules", str(rules))  # its case is checked against the bundle
    assert merged.returncode == 0, merged.stderr
    report = jax_compat("report")  # rebuilds the (empty) consolidated report: where does it go?
    assert report.returncode == 0, report.stderr
    assert (cwd / "reports" / "matrix.json").is_file()
    assert sorted(p.name for p in cwd.iterdir()) == ["reports", "rules.toml"]  # no .jaxcompat here
    bad = jax_compat("cells", "--rules", str(rules.with_name("missing.toml")))
    assert bad.returncode == 2 and bad.stderr.startswith(f"error: {cwd / 'missing.toml'}: (file): cannot read")


def test_a_relative_state_folder_is_taken_from_where_the_command_starts(tmp_path, monkeypatch):
    """A relative --state was used as given from the folders the environments run in ("crater --state
    .jaxcompat/e2e": FileNotFoundError …/bin/python): every command reads it as absolute."""
    from jaxcompat.commands import build_parser

    monkeypatch.chdir(tmp_path)
    for argv in (["crater", "jax==0.4.33", "--state", "rel/state"], ["check", "--state", "rel/state"],
                 ["bisect", "weak-type-closure", "--package", "jax", "--state", "rel/state"]):
        args = build_parser().parse_args(argv)
        assert Path(args.state) == tmp_path / "rel" / "state", argv

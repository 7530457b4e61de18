"""``check --env PATH``: an environment that already exists is judged like a cell, without
installing anything into it. The environments here are real virtualenvs made by the test, with a
fake ``jax`` (and ``equinox``) package: no jax, no network."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxcompat.commands import main
from jaxcompat.model.outcomes import CellResult
from jaxcompat.report.matrixreport import write_matrix
from jaxcompat.report.reports import markdown
from tests.helpers import MINIMAL, make_tree

CASES = {"test_demo.py": '''
import sys

import pytest


class XlaRuntimeError(RuntimeError):
    pass


def test_bug():
    import jax
    raise XlaRuntimeError(f"Unfortunately broken in {sys.prefix} by {sys.executable} (jax {jax.__version__})")


def test_control_ok():
    import equinox  # noqa: F401


@pytest.mark.gpu
def test_on_gpu():
    pass


@pytest.mark.cpu
def test_on_cpu():
    pass
'''}

FAKE_JAX = '''
import os

__version__ = "0.4.35"


def default_backend():
    return os.environ.get("FAKE_JAX_PLATFORM", "cpu")
'''


def _dist(site: Path, name: str, version: str, module: str) -> None:
    (site / name).mkdir()
    (site / name / "__init__.py").write_text(textwrap.dedent(module))
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


def make_venv(path: Path, *, jax: str | None = FAKE_JAX, pytest_too: bool = True, equinox: str = "0.11.6") -> Path:
    """A real virtualenv with a fake jax 0.4.35 and equinox 0.11.6; pytest (this one) via a .pth."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    (site,) = (path / "lib").glob("python3*/site-packages")
    if jax is not None:
        _dist(site, "jax", "0.4.35", jax)
        _dist(site, "equinox", equinox, f'__version__ = "{equinox}"\n')
    if pytest_too:
        (site / "harness.pth").write_text(str(Path(pytest.__file__).resolve().parent.parent) + "\n")
    return path


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "tree"
    root.mkdir()
    make_tree(root, MINIMAL, CASES)
    (root / "conftest.py").write_text('pytest_plugins = ("jaxcompat.plugin.pytest_plugin",)\n')
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    return root


def _check(tmp_path, tree, env, capsys, *extra):
    rc = main(["check", "--matrix", str(tree / "matrix.toml"), "--reports", str(tmp_path / "reports"),
               "--state", str(tmp_path / "state"), "--env", str(env), *extra])
    out, err = capsys.readouterr()
    report = tmp_path / "reports" / "check.json"
    text = report.read_text() if report.exists() else ""
    return rc, out, err, text


def _outcomes(data):
    return {r["case"].split("::")[1]: (r["outcome"], r["failure"]) for r in data["results"]}


def test_an_existing_env_is_judged_like_a_cell(tmp_path, tree, capsys):
    venv = make_venv(tmp_path / "venv")
    rc, out, err, text = _check(tmp_path, tree, venv, capsys)  # the folder: its bin/python is used
    assert rc == 1, out + err  # a known failure is hit: not safe, exactly as `check` says it
    data = json.loads(text)
    assert data["environment"] == "existing" and data["status"] == "ok" and data["backend"] == "cpu"
    assert data["versions"]["jax"] == "0.4.35" and data["versions"]["equinox"] == "0.11.6"
    assert data["python"] == "%d.%d" % sys.version_info[:2]
    assert data["date"] is None and data["requested"] == {}
    assert _outcomes(data) == {"test_bug": ("reproduced", "demo-bug"), "test_control_ok": ("pass", None),
                               "test_on_gpu": ("skipped", None), "test_on_cpu": ("pass", None)}
    assert "existing environment" in out and "demo-bug" in out and "upgrade equinox to >=0.11.8" in out
    # scrubbed: the environment's prefix and interpreter, the checkout, the temporary folders
    bug = next(r for r in data["results"] if r["case"].endswith("test_bug"))
    assert "broken in <env> by <python>" in bug["message"]
    assert str(tmp_path) not in text and str(Path.home()) not in text


@pytest.mark.parametrize("plugin, backend", [("jax_cuda12_plugin", "cuda12"), ("jax_cuda13_plugin", "cuda13"),
                                             ("jax_rocm7_plugin", "rocm"), (None, "gpu")])
def test_the_backend_is_what_is_installed_and_what_jax_reports(tmp_path, tree, capsys, monkeypatch, plugin, backend):
    """jax says "gpu" for CUDA 12, CUDA 13 and ROCm alike: the plugin wheels say which (the GPU run
    of 2026-11-24 reported cuda12 for a CUDA 13 container). Nothing naming the line: "gpu"."""
    monkeypatch.setenv("FAKE_JAX_PLATFORM", "gpu")
    venv = make_venv(tmp_path / "venv")
    if plugin:
        (site,) = (venv / "lib").glob("python3*/site-packages")
        _dist(site, plugin, "0.11.2", "")
    rc, out, err, text = _check(tmp_path, tree, venv / "bin" / "python", capsys)
    data = json.loads(text)
    assert data["backend"] == backend, data["notes"]
    outcomes = _outcomes(data)
    assert outcomes["test_on_gpu"] == ("pass", None)  # gpu-marked cases run on every CUDA/ROCm line
    assert outcomes["test_on_cpu"] == ("skipped", None)
    skip = next(r for r in data["results"] if r["case"].endswith("test_on_cpu"))
    assert f"needs backend cpu; this cell runs on {backend}" in skip["message"]
    assert "jax default backend: gpu" in data["notes"]
    bug = next(r for r in data["results"] if r["case"].endswith("test_bug"))
    assert "broken in <env> by <python>" in bug["message"] and str(tmp_path) not in text


LAYERED_CASES = {"test_demo.py": "def test_bug():\n    pass\n", "test_layered.py": '''
import sys


def test_equinox_as_loaded():
    import equinox
    import jax
    if equinox.__version__ == "0.13.2":  # the fake old copy has the bug
        raise AttributeError(f"jax.core.get_aval was removed ({jax.__file__}, {sys.prefix})")
'''}
LAYERED_RULE = '''
[[failure]]
id = "aval-removed"
cases = ["cases/test_layered.py::test_equinox_as_loaded"]
affects = { equinox = "<0.13.3" }
error = "AttributeError"
match = "get_aval"
upstream = ["https://github.com/patrick-kidger/equinox/issues/1169"]
fix = "upgrade equinox to >=0.13.3"
'''


def test_a_layered_environment_is_reported_as_import_loads_it(tmp_path, capsys):
    """The recipe of the GPU and layered-environments issue, in small: venv `base` with jax and
    equinox 0.13.5, venv `over` whose .pth line adds base's site-packages, equinox 0.13.2 installed
    into `over`. `import equinox` there gives 0.13.2: the report says 0.13.2, the failure is the
    rule's (not "no known explanation"), the shadowed 0.13.5 is named, and neither venv's folder
    appears in check.json or on the terminal."""
    root = tmp_path / "tree"
    root.mkdir()
    make_tree(root, MINIMAL + LAYERED_RULE, LAYERED_CASES)
    (root / "conftest.py").write_text('pytest_plugins = ("jaxcompat.plugin.pytest_plugin",)\n')
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    base = make_venv(tmp_path / "base", equinox="0.13.5")
    over = make_venv(tmp_path / "over", jax=None)
    (base_site,) = (base / "lib").glob("python3*/site-packages")
    (over_site,) = (over / "lib").glob("python3*/site-packages")
    (over_site / "base.pth").write_text(str(base_site) + "\n")
    _dist(over_site, "equinox", "0.13.2", '__version__ = "0.13.2"\n')
    loads = subprocess.run([str(over / "bin" / "python"), "-c", "import equinox; print(equinox.__version__)"],
                           capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert loads.stdout.strip() == "0.13.2"  # the ground truth: what `import` gives in `over`

    rc, out, err, text = _check(tmp_path, root, over / "bin" / "python", capsys)
    data = json.loads(text)
    assert data["versions"]["equinox"] == "0.13.2" and data["versions"]["jax"] == "0.4.35"
    assert _outcomes(data)["test_equinox_as_loaded"] == ("reproduced", "aval-removed")
    assert data["shadowed"] == [{"name": "equinox", "version": "0.13.5", "site": 2, "by_version": "0.13.2",
                                 "by_site": 1}]
    said = "equinox 0.13.5 in site dir 2 is shadowed by 0.13.2 in site dir 1"
    assert any(n.startswith(said) for n in data["notes"]) and said in out
    assert "site dirs on its sys.path, in order: 1 = <env>/lib/" in "\n".join(data["notes"])
    assert "2 = <site-2>" in "\n".join(data["notes"])
    assert "no known explanation" not in out and "aval-removed" in out
    for folder in (base, over, base_site, over_site):
        assert str(folder) not in text and str(folder) not in out + err
    # the fake jax lives in base's site-packages: shown as <site-2>, over's prefix as <env>
    hit = next(r for r in data["results"] if r["case"].endswith("test_equinox_as_loaded"))
    assert "(<site-2>/jax/__init__.py, <env>)" in hit["message"], hit["message"]
    assert rc == 1 and _outcomes(data)["test_bug"] == ("pass", None)


def test_a_jax_that_fails_to_import_is_an_import_error_judged_by_the_rules(tmp_path, tree, capsys):
    venv = make_venv(tmp_path / "venv", jax="raise ImportError('jaxlib is not installed')\n")
    rc, out, err, text = _check(tmp_path, tree, venv, capsys)
    data = json.loads(text)
    assert rc == 1
    assert data["status"] == "import-error" and data["outcome"] == "cell-error"  # no rule explains it
    assert "import jax failed" in data["message"] and "jaxlib is not installed" in data["message"]
    assert data["backend"] == "cpu"  # jax could not say: what the installed wheels are for
    assert "the candidate does not work: import-error" in out


def _not_python(tmp_path: Path, kind: str) -> Path:
    p = tmp_path / "thing"
    if kind == "missing":
        return p
    if kind == "folder without bin/python":
        p.mkdir()
        return p
    p.write_text({"not executable": "print('hi')\n", "text file": "hello world\n",
                  "a shell script": "#!/bin/sh\necho hello\n"}[kind])
    if kind != "not executable":
        p.chmod(0o755)
    return p


@pytest.mark.parametrize("kind", ["missing", "folder without bin/python", "not executable", "text file",
                                  "a shell script"])
def test_a_path_that_is_not_a_python_is_one_line_and_exit_2(tmp_path, tree, capsys, kind):
    path = _not_python(tmp_path, kind)
    rc, out, err, text = _check(tmp_path, tree, path, capsys)
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: --env {path}: "), err
    assert "Traceback" not in err
    assert {"missing": "no such file", "folder without bin/python": "without bin/python",
            "not executable": "not executable", "text file": "not a Python interpreter",
            "a shell script": "not a Python 3.8+ interpreter"}[kind] in lines[0]
    data = json.loads(text)  # the report says so too (a stale one must not stay behind)
    assert data["status"] == "python-missing" and data["environment"] == "existing"
    assert str(tmp_path) not in text


def test_a_python_without_jax_is_one_line_and_exit_2(tmp_path, tree, capsys):
    venv = make_venv(tmp_path / "venv", jax=None)
    rc, out, err, text = _check(tmp_path, tree, venv, capsys)
    assert rc == 2
    assert len(err.strip().splitlines()) == 1 and "jax is not installed in that environment" in err
    data = json.loads(text)
    assert data["status"] == "import-error" and data["outcome"] == "cell-error"
    assert data["python"] == "%d.%d" % sys.version_info[:2]
    assert str(tmp_path) not in text and "<env>" in data["message"]


def test_no_pytest_and_none_to_be_had_names_what_is_missing(tmp_path, tree, capsys, monkeypatch):
    monkeypatch.setenv("UV_OFFLINE", "1")
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "empty-uv-cache"))
    venv = make_venv(tmp_path / "venv", pytest_too=False)
    rc, out, err, text = _check(tmp_path, tree, venv, capsys)
    assert rc == 2
    assert len(err.strip().splitlines()) == 1
    assert "has no pytest" in err and "install pytest in that environment" in err
    assert json.loads(text)["status"] == "install-error"
    assert not list((venv / "lib").glob("python3*/site-packages/pytest*"))  # nothing installed into it


def test_env_with_requirements_is_refused(tmp_path, tree, capsys):
    rc, out, err, text = _check(tmp_path, tree, tmp_path, capsys, "jax==0.4.35")
    assert rc == 2 and "leave out the requirements" in err and text == ""


def test_reports_show_the_environment_and_old_reports_still_load(tmp_path):
    old = CellResult.from_dict({"id": "c", "python": "3.11", "backend": "cpu", "status": "ok",
                                "versions": {"jax": "0.4.35"}, "results": []})
    assert old.environment == "built"
    new = CellResult(id="existing-1", python="3.11", backend="cpu", status="ok", versions={"jax": "0.4.35"},
                     environment="existing")
    md = markdown([old, new], {})
    assert "| (existing environment) jax 0.4.35 |" in md
    assert "| jax 0.4.35 |" in md
    write_matrix([old, new], tmp_path, {})
    page = (tmp_path / "matrix.html").read_text()
    assert page.count("existing env</div>") == 1  # in the column header of the existing one only
    assert "<b>existing</b>: versions read from it, nothing installed" in page

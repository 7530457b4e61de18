"""check --tests: the user's test dependencies found where the project declares them (extras,
dependency groups, requirements files, setup.cfg/setup.py), chosen by --extra/--group/--with,
and the cause named when the tests cannot start. No network, no jax."""

from __future__ import annotations

from pathlib import Path

import pytest

from jaxcompat.env import testdeps, testtarget
from jaxcompat.model.matrix import Cell


def _project(root: Path, pyproject: str, **files: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(pyproject)
    for name, text in files.items():
        path = root / name.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


FLOWJAX_LIKE = '''[project]
name = "flowlike"
dependencies = ["equinox"]
[project.optional-dependencies]
dev = ["pytest", "beartype", "numpyro>=0.20.0", "jax==0.4.30"]
docs = ["sphinx"]
[tool.pytest.ini_options]
addopts = "--jaxtyping-packages=flowlike,beartype.beartype(conf=beartype.BeartypeConf())"
'''


def test_a_dev_extra_is_used_when_no_test_extra_is_declared(tmp_path):
    deps = testdeps.choose(_project(tmp_path / "p", FLOWJAX_LIKE))
    assert deps.extras == ("dev",) and deps.sources == ("extra `dev`",)
    assert deps.describe() == "test dependencies: extra `dev`"


def test_a_test_extra_is_preferred_over_dev(tmp_path):
    deps = testdeps.choose(_project(tmp_path / "p", FLOWJAX_LIKE.replace('docs = ["sphinx"]', 'tests = ["pytest"]')))
    assert deps.extras == ("tests",)


def test_dependency_groups_with_includes(tmp_path):
    root = _project(tmp_path / "p", '''[project]
name = "Quax-Like"
[dependency-groups]
dev = [{ include-group = "docs" }, { include-group = "tests" }]
docs = ["zensical"]
tests = ["beartype>=0.20.2", "pytest>=8.3.5", "jax[cpu]", "quax_like[extra1]", { include-group = "typing" }]
typing = ["jaxtyping"]
''')
    deps = testdeps.choose(root)
    assert deps.sources == ("dependency group `tests`",)
    assert deps.requirements == ("beartype>=0.20.2", "pytest>=8.3.5", "jax[cpu]", "jaxtyping")
    assert deps.extras == ("extra1",)  # the project itself, named inside its group
    assert testdeps.choose(root, groups=["dev"]).requirements == ("zensical", "beartype>=0.20.2", "pytest>=8.3.5",
                                                                   "jax[cpu]", "jaxtyping")
    # the candidate's own pins are what is judged: a group's jax requirement is left out
    keep, dropped = deps.for_candidate({"jax", "jaxlib", "equinox"})
    assert dropped == ("jax[cpu]",) and "jax[cpu]" not in keep


def test_a_group_that_includes_itself_or_a_missing_group_is_an_error(tmp_path):
    root = _project(tmp_path / "p", '[dependency-groups]\ntests = [{ include-group = "tests" }]\n')
    with pytest.raises(testdeps.TestDepsError, match="includes itself"):
        testdeps.choose(root)
    root = _project(tmp_path / "q", '[dependency-groups]\ntests = [{ include-group = "nope" }]\n')
    with pytest.raises(testdeps.TestDepsError, match="'nope' is not a group"):
        testdeps.choose(root)


def test_requirements_files_follow_their_includes(tmp_path):
    root = _project(tmp_path / "p", '[project]\nname = "p"\n',
                    **{"requirements-dev.txt": "-r requirements-test.txt\nruff  # lint\n",
                       "requirements-test.txt": "-e .\n--index-url https://example.invalid\npytest>=7\nscipy\n"})
    deps = testdeps.choose(root)
    assert deps.sources == ("requirements-test.txt",) and deps.requirements == ("pytest>=7", "scipy")
    (root / "requirements-test.txt").unlink()
    deps = testdeps.choose(root)
    assert deps.sources == ("requirements-dev.txt",) and deps.requirements == ("ruff",)


def test_a_requirements_file_in_a_test_folder_named_test_is_found(tmp_path):
    """diffrax and jaxtyping in 2023-2024: test/requirements.txt, no extra, no group (issue 39)."""
    root = _project(tmp_path / "diffraxlike", '[project]\nname = "diffraxlike"\ndependencies = ["equinox"]\n',
                    **{"test__requirements.txt": "beartype\njaxlib\noptax\npytest\nscipy\ntqdm\n"})
    deps = testdeps.choose(root)
    assert deps.sources == ("test/requirements.txt",)
    assert deps.requirements == ("beartype", "jaxlib", "optax", "pytest", "scipy", "tqdm")
    assert deps.for_candidate({"jax", "jaxlib"})[1] == ("jaxlib",)  # the candidate's own pin is kept


def test_setup_cfg_and_setup_py_extras(tmp_path):
    root = tmp_path / "cfg"
    root.mkdir()
    (root / "setup.py").write_text("from setuptools import setup\nsetup()\n")
    (root / "setup.cfg").write_text("[options.extras_require]\ntesting =\n    pytest\n    hypothesis\n")
    target = testtarget.locate(str(root))
    assert target.deps.extras == ("testing",) and target.deps.sources == ("extra `testing` (setup.cfg)",)
    root = tmp_path / "py"
    root.mkdir()
    (root / "setup.py").write_text("from setuptools import setup\nEXTRAS = {'test': ['pytest', 'chex']}\n"
                                   "setup(name='x', extras_require=EXTRAS)\n")
    assert testtarget.locate(str(root)).deps.extras == ("test",)


def test_extra_group_and_with_override_what_is_found(tmp_path):
    root = _project(tmp_path / "p", FLOWJAX_LIKE)
    deps = testdeps.choose(root, extras=["docs"], with_=["numpyro"])
    assert deps.extras == ("docs",) and deps.requirements == ("numpyro",)
    assert deps.sources == ("extra `docs`", "--with numpyro")
    with pytest.raises(
        testdeps.TestDepsError,
        match=r"--extra tset: p declares no such extra \(declared in pyproject.toml: dev, docs\)",
    ):
        testdeps.choose(root, extras=["tset"])
    with pytest.raises(testdeps.TestDepsError, match="--group tests: p declares no such dependency group"):
        testdeps.choose(root, groups=["tests"])
    with pytest.raises(testdeps.TestDepsError, match="--with: 'not a req!' is not a PEP 508 requirement"):
        testdeps.choose(root, with_=["not a req!"])


def test_the_candidate_cell_gets_the_extra_and_the_requirements_but_not_its_own_pins(tmp_path):
    root = _project(tmp_path / "p", FLOWJAX_LIKE)
    target = testtarget.locate(str(root), with_=["jax==0.4.30", "numpyro"])
    cell = target.cell(
        Cell(id="c", python="3.11", backend="cpu", pins={"jax": "0.10.1", "equinox": "0.13.5", "diffrax": "*"})
    )
    assert cell.editable == (f"{root}[dev]",) and cell.constraints == ("numpyro",)
    assert "left out, the candidate pins them: jax==0.4.30" in target.deps_line(cell)


def test_a_helper_module_an_sdist_left_out_is_not_only_a_missing_dependency(tmp_path):
    """jaxlie 1.5.0's sdist: its tests import ``from utils import …`` (tests/utils.py in its repository),
    which the sdist does not carry; ``--with utils`` alone would install whatever PyPI holds as "utils"."""
    root = _project(tmp_path / "p", FLOWJAX_LIKE)
    (root / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: p\n")
    deps = testdeps.choose(root, extras=["dev"])
    log = ("ImportError while importing test module 'tests/test_autodiff.py'.\nTraceback:\n"
           "E   ModuleNotFoundError: No module named 'utils'\n")
    said = testdeps.diagnose(log, root, deps)
    assert said == ("ModuleNotFoundError: No module named 'utils', needed by test_autodiff.py; add it with --with "
                    "utils - unless utils is the project's own module beside its tests (tests/utils.py), which "
                    "this source distribution left out: then run the tests of the project's git checkout"), said
    (root / "tests").mkdir(exist_ok=True)
    (root / "tests" / "utils.py").write_text("")  # there after all: a dependency's module, nothing left out
    assert testdeps.diagnose(log, root, deps).endswith("add it with --with utils")
    (root / "PKG-INFO").unlink()  # a checkout: nothing was left out by packaging
    (root / "tests" / "utils.py").unlink()
    assert testdeps.diagnose(log, root, deps).endswith("add it with --with utils")


def test_the_cause_of_tests_that_cannot_start_names_addopts_and_the_extra(tmp_path):
    root = _project(tmp_path / "p", FLOWJAX_LIKE)
    deps = testdeps.choose(root, extras=["docs"])
    log = ("ImportError while importing test module '/x/tests/test_flows.py'.\nTraceback:\n"
           "E   ModuleNotFoundError: No module named 'beartype'\n")
    assert testdeps.diagnose(log, root, deps) == (
        "ModuleNotFoundError: No module named 'beartype', needed by `addopts` in pyproject.toml; "
        "add it with --with beartype or --extra dev")
    log = "ImportError while loading conftest '/x/tests/conftest.py'.\nE   ModuleNotFoundError: No module named 'optax.contrib'\n"
    assert testdeps.diagnose(log, root, deps) == ("ModuleNotFoundError: No module named 'optax.contrib', needed by "
                                                  "conftest.py (conftest); add it with --with optax")
    log = "ERROR: usage: pytest [options]\npytest: error: unrecognized arguments: --jaxtyping-packages=flowlike\n"
    assert testdeps.diagnose(log, root, deps).startswith(
        "pytest: unrecognized arguments: --jaxtyping-packages=flowlike, given by `addopts` in pyproject.toml: "
        "the pytest plugin that provides them is not installed")
    # the interpreter died while importing (seen: jinns 1.10.2 on jax 0.11.2 and 0.12.0.1): its last line
    # lists extension modules, which is not the cause
    log = ("Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f (most recent call first):\n"
           "  File \"/x/jaxlib/xla_client.py\", line 12 in <module>\n\nExtension modules: numpy._core, "
           "scipy.linalg._fblas (total: 2)\n")
    assert testdeps.diagnose(log, root, deps) == "the test process died: Fatal Python error: Segmentation fault"


@pytest.mark.parametrize("name, text", [
    ("pytest.ini", "[pytest]\naddopts = -p beartype_plugin\n"),
    ("setup.cfg", "[tool:pytest]\naddopts = -p beartype_plugin\n"),
    ("tox.ini", "[pytest]\naddopts = -p beartype_plugin\n"),
])
def test_addopts_is_read_from_every_pytest_configuration_file(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    assert testdeps.addopts(tmp_path) == ("-p beartype_plugin", name)


def test_a_package_the_project_needs_newer_than_the_date_is_exempted_from_the_cutoff(tmp_path, monkeypatch):
    """The baseline resolves as of its date, but the user's project is what they run today: when uv
    says the cutoff hides the only releases of a package the project needs, that package is exempted
    (and said); a cell without the user's project keeps the cutoff."""
    import subprocess as sp

    from jaxcompat.env import envs

    calls = []
    hint = ("  × No solution found\n  hint: `paramax` was filtered by `exclude-newer` to only include packages "
            "uploaded before 2025-09-22T00:00:00Z. The latest version satisfying the requirement is v0.0.5")

    def fake_run(argv, **kw):
        calls.append(argv)
        ok = any(a.startswith("paramax=") for a in argv)
        return sp.CompletedProcess(argv, 0 if ok else 1, "paramax==0.0.5\n" if ok else "", "" if ok else hint)

    monkeypatch.setattr(envs, "run_tool", fake_run)
    user = Cell(id="u", python="3.11", backend="cpu", pins={"jax": "0.7.2"}, editable=(str(tmp_path),))
    notes: list[str] = []
    proc = envs._compile(user, "python3", "2025-09-22", ["jax==0.7.2", f"-e {tmp_path}"], tmp_path, notes)
    assert proc.returncode == 0 and len(calls) == 2
    assert "--exclude-newer-package" in calls[1] and any(a.startswith("paramax=") for a in calls[1])
    assert notes == ["resolved past the date cutoff (2025-09-22) because your project needs newer releases: paramax"]
    calls.clear()
    ours = Cell(id="c", python="3.11", backend="cpu", pins={"jax": "0.7.2"})
    assert envs._compile(ours, "python3", "2025-09-22", ["jax==0.7.2"], tmp_path, []).returncode == 1
    assert len(calls) == 1


def test_baseline_and_candidate_share_one_python_that_the_project_accepts(tmp_path, monkeypatch):
    """jax 0.6.2 runs on 3.10 and jax 0.10.1 only from 3.11: both sides run on 3.11 (a test module
    with 3.11 syntax would otherwise fail in the baseline for the interpreter's sake, not jax's)."""
    from jaxcompat.env import resolution

    def fits(version, pins, cache_dir):
        return "needs 3.11" if pins.get("jax") == "0.10.1" and version == "3.10" else ""

    monkeypatch.setattr(resolution, "complete", lambda c, cache_dir: c)
    monkeypatch.setattr(resolution, "python_fits", fits)
    monkeypatch.setattr(resolution, "find_python", lambda v: f"/usr/bin/python{v}")
    target = testtarget.locate(str(_project(tmp_path / "p", FLOWJAX_LIKE)))
    new = Cell(id="c", python="auto", backend="cpu", pins={"jax": "0.10.1"})
    old = Cell(id="b", python="auto", backend="cpu", pins={"jax": "0.6.2"})
    c, b, line = testtarget.same_python(new, old, target, tmp_path)
    assert (c.python, b.python) == ("3.11", "3.11") and line.startswith("both sides on Python 3.11")
    root = _project(tmp_path / "q", FLOWJAX_LIKE.replace('name = "flowlike"', 'name = "q"\nrequires-python = ">=3.12"'))
    c, b, line = testtarget.same_python(new, old, testtarget.locate(str(root)), tmp_path)
    assert (c.python, b.python) == ("3.12", "3.12") and "your project requires Python >=3.12" in line
    named = Cell(id="n", python="3.10", backend="cpu", pins={"jax": "0.6.2"})
    assert testtarget.same_python(new, named, target, tmp_path) == (new, named, "")

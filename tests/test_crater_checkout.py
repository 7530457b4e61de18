"""A dependent's source as a local checkout folder (``path = "../PROJECT"`` in dependents.toml),
the kind of source added as one module of ``knowledge/dependentsources/``: read and refused like
the others (the file, the key, the fix), run by the real crater command over the fake cells
(tests/fake_crater.py: no uv, no index, no network) from a copy keyed by its files' contents, the
checkout itself never written into."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from jaxcompat._util.toml import tomllib
from jaxcompat.env import projects
from jaxcompat.knowledge import dependentsources
from jaxcompat.knowledge.dependents import load, parse
from jaxcompat.model.matrix import ConfigError
from tests.test_crater import CLOSURE, _breaks, _crater, _tree


def _checkout(root: Path, tests: str) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "alpha"\nversion = "1.0"\n')
    (root / "tests" / "test_mod.py").write_text(textwrap.dedent(tests))
    (root / ".git").mkdir()  # a clone's own: never copied, never keyed
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root


def test_a_checkout_is_read_from_the_dependents_files_folder(tmp_path):
    _checkout(tmp_path / "work" / "alpha", "def test_a():\n    pass\n")
    (tmp_path / "conf").mkdir()
    file = tmp_path / "conf" / "dependents.toml"
    file.write_text('[[dependent]]\nname = "alpha"\npath = "../work/alpha"\n')
    [dep] = load(file).dependents
    assert dependentsources.of(dep.source).NAME == "folder" and not dependentsources.of(dep.source).NEEDS
    assert dependentsources.describe(dep.source) == "folder ../work/alpha"  # as written: no machine path
    version = projects.version_of(dep, tmp_path / "cache", "2020-01-01")  # --as-of does not move a checkout
    assert projects.describe(dep, version, tmp_path / "cache") == f"tree {version[:12]}"
    root = projects.fetch(dep, version, tmp_path / "cache", tmp_path / "src")
    assert (root / "tests" / "test_mod.py").is_file() and not (root / ".git").exists()
    assert not (tmp_path / "work" / "alpha" / "pytest.ini").exists()  # the copy is configured, not the checkout


@pytest.mark.parametrize("table, key, words", [
    ('name = "a"\npath = "nowhere"', "dependent[a].path", "no such folder"),
    ('name = "a"\npath = "x"\nversion = "1.0"', "dependent[a]", "path (a local checkout folder)"),
    ('name = "a"\npath = "x"\nref = "v1"', "dependent[a].ref", "a ref needs a git source"),
    ('name = "a"\npth = "x"', "dependent[a].pth", "did you mean 'path'"),
])
def test_a_bad_checkout_names_the_file_the_key_and_the_fix(tmp_path, table, key, words):
    (tmp_path / "x").mkdir()
    with pytest.raises(ConfigError) as e:
        parse(_toml(table), tmp_path / "d.toml")
    assert e.value.key == key and words in str(e.value), str(e.value)


def _toml(table: str) -> dict:
    return tomllib.loads(f"[[dependent]]\n{table}\n")


@pytest.mark.integration
def test_the_crater_runs_a_dependent_from_its_local_checkout(tmp_path):
    deps = '''
    [[dependent]]
    name = "alpha"
    path = "checkouts/alpha"
    tests = ["tests"]
    depends_on = ["jax"]
    '''
    tmp = _tree(tmp_path, deps)  # no folder under src/: nothing comes from the fake index
    checkout = _checkout(tmp / "checkouts" / "alpha", _breaks(CLOSURE))
    before = sorted(p.relative_to(checkout) for p in checkout.rglob("*"))
    fixed = ("--baseline", "jax==0.4.31", "--as-of", "2024-09-20", "jax==0.4.33")
    proc = _crater(tmp, *fixed)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "alpha (folder checkouts/alpha)" in proc.stdout
    [alpha] = json.loads((tmp / "reports" / "crater" / "crater.json").read_text())["dependents"]
    assert (alpha["verdict"], alpha["source"], alpha["commit"]) == ("broken", "folder checkouts/alpha", "")
    assert alpha["version"].startswith("tree ") and alpha["classes"] == {"broken": 1, "fails-both": 1, "pass": 1}
    assert sorted(p.relative_to(checkout) for p in checkout.rglob("*")) == before  # nothing written into it
    again = _crater(tmp, *fixed)
    assert "(1 dependent(s) from the result cache)" in again.stdout, again.stdout + again.stderr
    (checkout / "tests" / "test_mod.py").write_text("def test_fine():\n    pass\n")  # an edit: another source
    edited = _crater(tmp, *fixed)
    assert edited.returncode == 0 and "from the result cache" not in edited.stdout, edited.stdout + edited.stderr
    [alpha] = json.loads((tmp / "reports" / "crater" / "crater.json").read_text())["dependents"]
    assert alpha["verdict"] == "safe" and alpha["version"].startswith("tree ")


def test_a_checkout_gone_before_the_run_is_no_source(tmp_path):
    folder = _checkout(tmp_path / "alpha", "def test_a():\n    pass\n")
    [dep] = parse(_toml(f'name = "alpha"\npath = "{folder}"'), tmp_path / "d.toml").dependents
    assert dependentsources.describe(dep.source) == "folder <local>/alpha"  # an absolute path: its name alone
    shutil.rmtree(folder)
    with pytest.raises(projects.SourceMissing, match="alpha: the folder <local>/alpha is gone"):
        projects.version_of(dep, tmp_path / "cache")


def _dep(tmp_path: Path, folder: Path):
    [dep] = parse(_toml(f'name = "alpha"\npath = "{folder}"'), tmp_path / "d.toml").dependents
    return dep


def _copied(tmp_path: Path, dep, at: str) -> tuple[str, Path]:
    version = projects.version_of(dep, tmp_path / "cache")
    return version, projects.fetch(dep, version, tmp_path / "cache", tmp_path / at)


def test_a_symlinked_folder_is_keyed_as_it_is_copied(tmp_path):
    folder = _checkout(tmp_path / "alpha", "def test_a():\n    pass\n")
    shared = tmp_path / "shared_tests"  # e.g. tests/more -> ../shared_tests: the copy follows it
    shared.mkdir()
    (shared / "test_linked.py").write_text("def test_b():\n    pass\n")
    (folder / "tests" / "more").symlink_to(shared, target_is_directory=True)
    dep = _dep(tmp_path, folder)
    first, root = _copied(tmp_path, dep, "src1")
    assert (root / "tests" / "more" / "test_linked.py").is_file()
    (shared / "test_linked.py").write_text("def test_b():\n    raise ValueError\n")
    second, root = _copied(tmp_path, dep, "src2")
    assert second != first and "raise ValueError" in (root / "tests" / "more" / "test_linked.py").read_text()


def test_a_symlink_loop_in_a_checkout_is_no_source(tmp_path):
    folder = _checkout(tmp_path / "alpha", "def test_a():\n    pass\n")
    (folder / "tests" / "up").symlink_to(folder, target_is_directory=True)
    with pytest.raises(projects.SourceMissing, match="tests/up links to a folder that holds it"):
        projects.version_of(_dep(tmp_path, folder), tmp_path / "cache")


def test_compiled_files_are_keyed_and_copied(tmp_path):
    folder = _checkout(tmp_path / "alpha", "def test_a():\n    pass\n")
    (folder / "_core.so").write_bytes(b"old build")  # build_ext --inplace leaves it beside the sources
    (folder / "mod.pyc").write_bytes(b"old")
    dep = _dep(tmp_path, folder)
    first, root = _copied(tmp_path, dep, "src1")
    assert (root / "_core.so").read_bytes() == b"old build"
    (folder / "_core.so").write_bytes(b"new build")
    second, root = _copied(tmp_path, dep, "src2")
    assert second != first and (root / "_core.so").read_bytes() == b"new build"
    (folder / "__pycache__").mkdir()  # a cache: neither keyed nor copied
    (folder / "__pycache__" / "x.pyc").write_bytes(b"cache")
    assert projects.version_of(dep, tmp_path / "cache") == second


def test_build_and_dist_are_left_out_at_the_top_only(tmp_path):
    folder = _checkout(tmp_path / "alpha", "def test_a():\n    pass\n")
    for sub in ("tests/dist", "tests/build", "alpha/build", "alpha/x.egg-info", "dist", "build", "a.egg-info",
                ".venv", ".tox"):
        (folder / sub).mkdir(parents=True)
        (folder / sub / "test_x.py").write_text("def test_x():\n    pass\n")
    version, root = _copied(tmp_path, _dep(tmp_path, folder), "src")
    got = sorted(str(p.relative_to(root)) for p in root.rglob("test_x.py"))
    assert got == ["alpha/build/test_x.py", "alpha/x.egg-info/test_x.py", "tests/build/test_x.py",
                   "tests/dist/test_x.py"]
    (folder / "tests" / "dist" / "test_x.py").write_text("def test_x():\n    raise ValueError\n")
    assert projects.version_of(_dep(tmp_path, folder), tmp_path / "cache") != version


@pytest.mark.parametrize("inside", ["state", "reports"])
def test_a_checkout_holding_the_state_or_reports_folder_is_refused(tmp_path, inside):
    tmp = _tree(tmp_path, '[[dependent]]\nname = "alpha"\npath = "."\ntests = ["tests"]\n')
    (tmp / "tests").mkdir()
    (tmp / "tests" / "test_mod.py").write_text("def test_a():\n    pass\n")
    proc = _crater(tmp, "--baseline", "jax==0.4.31", "--as-of", "2024-09-20", "jax==0.4.33")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "dependents.toml: dependent[alpha].path: '.' holds the state folder" in proc.stderr, proc.stderr
    assert "fix: give --state a folder outside the checkout" in proc.stderr
    assert not (tmp / "state" / "crater").exists() and not (tmp / "reports").exists()
    other = tmp_path.parent / f"{tmp_path.name}-{inside}"  # the other one outside: still refused
    args = ("--state", str(other)) if inside == "reports" else ("--reports", str(other))  # the last one given
    proc = _crater(tmp, *args, "--baseline", "jax==0.4.31", "jax==0.4.33")
    assert proc.returncode == 2 and f"holds the {inside} folder" in proc.stderr, proc.stderr


@pytest.mark.integration
def test_a_shard_does_not_hold_a_checkout_edited_since_its_result(tmp_path):
    tmp = _tree(tmp_path, "".join(f'[[dependent]]\nname = "{n}"\npath = "co/{n}"\ntests = ["tests"]\n'
                                  'depends_on = ["jax"]\n' for n in ("alpha", "beta")))
    for n in ("alpha", "beta"):
        _checkout(tmp / "co" / n, "def test_ok():\n    pass\n")
    fixed = ("--baseline", "jax==0.4.31", "--as-of", "2024-09-20", "jax==0.4.33")
    assert _crater(tmp, *fixed).returncode == 0  # every dependent's result stored
    shard = _crater(tmp, *fixed, "--shard", "1/2")  # beta is the other shard's: its stored result holds
    assert shard.returncode == 0 and "merge the shards" not in shard.stdout, shard.stdout + shard.stderr
    (tmp / "co" / "beta" / "tests" / "test_mod.py").write_text(textwrap.dedent(_breaks(CLOSURE)))
    shard = _crater(tmp, *fixed, "--shard", "1/2")
    assert shard.returncode == 2, shard.stdout + shard.stderr
    assert "this shard's report holds 1 of the 2 dependents planned" in shard.stdout
    report = json.loads((tmp / "reports" / "crater" / "crater.json").read_text())
    assert [d["name"] for d in report["dependents"]] == ["alpha"] and report["exit"] == 2

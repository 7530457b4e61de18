"""Shared helpers for the harness tests: small matrix files and fake case trees."""

from __future__ import annotations

import textwrap
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import Version

CASE_FILE = '''
def test_bug():
    pass

def test_control_ok():
    pass
'''

MINIMAL = '''
[settings]
python = "3.11"

[[cell]]
id = "a"
pins = { jax = "0.4.33", equinox = "0.11.7" }

[[failure]]
id = "demo-bug"
cases = ["cases/test_demo.py::test_bug"]
affects = { jax = ">=0.4.32", equinox = "<0.11.8" }
error = "XlaRuntimeError"
match = "Unfortunately"
upstream = ["https://github.com/patrick-kidger/diffrax/issues/506"]
fix = "upgrade equinox to >=0.11.8"
'''


def failure_toml(
    fid: str,
    case: str,
    affects: str,
    error: str = "TypeError",
    match: str = "weak_type",
    fix: str = "upgrade equinox",
    url: str = "https://github.com/patrick-kidger/equinox/issues/854",
) -> str:
    """One ``[[failure]]`` table, for tests that add a rule to a tree."""
    return (f'\n[[failure]]\nid = "{fid}"\ncases = ["{case}"]\naffects = {affects}\nerror = "{error}"\n'
            f'match = "{match}"\nupstream = ["{url}"]\nfix = "{fix}"\n')


def make_tree(tmp_path: Path, matrix: str = MINIMAL, cases: dict[str, str] | None = None) -> Path:
    (tmp_path / "cases").mkdir(exist_ok=True)
    for name, body in (cases or {"test_demo.py": CASE_FILE}).items():
        (tmp_path / "cases" / name).write_text(textwrap.dedent(body))
    path = tmp_path / "matrix.toml"
    path.write_text(textwrap.dedent(matrix))
    return path


# A rule that documents a crash (the interpreter killed under NumPy 2 by an old jaxlib).
CRASH_RULE = MINIMAL + '''
[[failure]]
id = "abi"
title = "t"
cases = ["cases/test_demo.py::test_bug"]
collateral = ["cases"]
affects = { jaxlib = "<0.4.26", numpy = ">=2" }
error = ["ValueError", "crash"]
match = "killed by signal SIGSEGV|Unable to avoid copy"
upstream = ["https://github.com/jax-ml/jax/issues/19246"]
fix = "numpy<2"
'''


def check_jsonschema(schema: str, path) -> None:
    """Validate ``path`` against one of check-jsonschema's vendored schemas (offline)."""
    import shutil
    import subprocess
    import sys

    import pytest

    exe = shutil.which("check-jsonschema") or str(Path(sys.executable).parent / "check-jsonschema")
    if not Path(exe).exists():
        pytest.fail("check-jsonschema is not installed (nox -s tests installs it)")
    out = subprocess.run([exe, "--builtin-schema", schema, str(path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def specs_equal(a: str | SpecifierSet, b: str | SpecifierSet, releases_: list[str]) -> bool:
    """Two ranges admit the same releases (equality at release granularity)."""
    sa, sb = SpecifierSet(str(a)), SpecifierSet(str(b))
    return all(sa.contains(Version(v), prereleases=True) == sb.contains(Version(v), prereleases=True)
               for v in releases_)


def write_crater(out_dir, *args, **kw) -> tuple[str, int]:
    """The crater's verdict (operations/crater.report) written in its default formats (report.emit),
    as the command does: the verdict's text and the exit status."""
    from jaxcompat.operations import crater
    from jaxcompat.report.emit import emit

    record, code = crater.report(out_dir, *args, **kw)
    emit(record, out_dir)
    return record.text, code

"""jax-compat sessions. Data lives in matrix.toml, mechanism in jaxcompat/; this is glue.

    nox -s matrix                 every cell of matrix.toml, in parallel, then one report
    nox -s matrix -- --cell 'jax0.4.33-*' --jobs 2
    nox -s tests                  the harness's own fast tests (no jax)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

try:  # Python >= 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10 hosts
    import tomli as tomllib  # type: ignore[no-redef]

import nox

ROOT = Path(__file__).parent
sys.path.insert(0, str(ROOT))

nox.options.default_venv_backend = "uv"
nox.options.sessions = ["tests"]
nox.options.error_on_missing_interpreters = False

# The tests also build the wheel (offline), with the build backend pyproject.toml names.
TEST_DEPS = [
    "pytest>=8",
    "pytest-xdist>=3",
    "hypothesis>=6",
    "packaging>=22",
    "check-jsonschema>=0.29",
    "nox>=2024.4.15",
    *tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["build-system"]["requires"],
]


def _jaxcompat(session: nox.Session, *args: str) -> None:
    session.run(sys.executable, "-m", "jaxcompat", *args, *session.posargs, external=True)


@nox.session(python=False)
def matrix(session: nox.Session) -> None:
    """Run every cell of matrix.toml in parallel and write reports/ (matrix.json, matrix.md)."""
    _jaxcompat(session, "matrix")


@nox.session(python=False)
def gpu(session: nox.Session) -> None:
    """The GPU cells of matrix.toml (cuda12, cuda13) into reports/gpu/; backend-missing without a GPU."""
    _jaxcompat(session, "matrix", "--cell", "*-cuda12", "--cell", "*-cuda13", "--reports", "reports/gpu")


@nox.session(python=False)
def report(session: nox.Session) -> None:
    """Rebuild reports/matrix.json and matrix.md from the per-cell reports on disk."""
    _jaxcompat(session, "report")


@nox.session(python=False)
def site(session: nox.Session) -> None:
    """The ecosystem's pages into site/ (history, forecast, survey, matrix); -- --history DIR for other nights."""
    args = [] if "--history" in session.posargs else ["--history", "reports/nightly-replay"]
    args += [] if "--out" in session.posargs else ["--out", "site"]
    _jaxcompat(session, "report", "site", *args)


@nox.session(python=False)
def check(session: nox.Session) -> None:
    """Upgrade check of one candidate: nox -s check -- jax==0.4.35 equinox==0.11.6 (or -r FILE, or --env PYTHON)."""
    _jaxcompat(session, "check")


@nox.session(python=False)
def crater(session: nox.Session) -> None:
    """Before a release: the dependents' own tests (dependents.toml) in a baseline and the candidate."""
    _jaxcompat(session, "crater")


@nox.session(python=False)
def latest(session: nox.Session) -> None:
    """Nightly: the newest releases of every package, compared with reports/baseline.json."""
    _jaxcompat(session, "latest")


@nox.session(python=False)
def bisect(session: nox.Session) -> None:
    """First release where a case changes: nox -s bisect -- CASE --package P [--good V --bad V] [pins]."""
    _jaxcompat(session, "bisect")


@nox.session(python=False)
def survey(session: nox.Session) -> None:
    """Sample jax x equinox off the matrix, run, score the verdicts: reports/survey.{md,json,html}."""
    _jaxcompat(session, "survey")


@nox.session(python=False)
def compat(session: nox.Session) -> None:
    """Rebuild reports/compat.md and compat.json (which releases work with which jax)."""
    _jaxcompat(session, "compat")


@nox.session(python=False)
def pins(session: nox.Session) -> None:
    """The newest releases known to work with one jax, as requirements (-- --jax 0.6.2)."""
    _jaxcompat(session, "pins")


@nox.session
def tests(session: nox.Session) -> None:
    """Tests of the harness itself, no jax: the fast ones; in CI (CI=true) or with -m, the integration ones too."""
    session.install(*TEST_DEPS)
    chosen = any(a == "-m" or a.startswith("-m") for a in session.posargs)
    in_ci = os.environ.get("CI") == "true"
    marks = [] if chosen or in_ci else ["-m", "not integration"]
    # CI: across the machine's cores (the integration tests run apart: own folders, own processes), so the
    # whole of .ci/run keeps within its 90 minutes; -n in the arguments chooses otherwise
    workers = ["-n", "auto"] if in_ci and not any(a.startswith("-n") for a in session.posargs) else []
    session.run("pytest", "tests", *marks, *workers, *session.posargs)


@nox.session(python=False)
def bench(session: nox.Session) -> None:
    """Benchmark: warm matrix vs its floor, naive venv+pip, cold cache; writes reports/bench.json."""
    session.run(sys.executable, str(ROOT / "benchmarks" / "bench.py"), *session.posargs, external=True)


@nox.session(python=False)
def scan(session: nox.Session) -> None:
    """Your code against jax's API history: nox -s scan -- PATH --jax 0.10.0 [--fix | --diff | --format sarif]."""
    _jaxcompat(session, "scan")


@nox.session(python=False)
def timeline(session: nox.Session) -> None:
    """Regenerate jaxcompat/data/{jax,equinox}_api_timeline.json from every release's wheel (each read once,
    cached), on the newest Python here: jax 0.12 is written in Python 3.12 syntax, which 3.11 cannot parse."""
    from jaxcompat.env.pythons import PythonMissing, find_python

    for version in ("3.14", "3.13", "3.12"):
        try:
            exe = find_python(version)
            break
        except PythonMissing:
            continue
    else:
        session.error("no Python >= 3.12 found (fix: `uv python install 3.13` or `pyenv install 3.13`)")
    session.run("uv", "run", "--no-project", "--python", exe, "--with", "packaging>=22", "python", "-m",
                "jaxcompat.apihistory.apitimeline", *session.posargs, external=True)


@nox.session(python=False)
def scan_bench(session: nox.Session) -> None:
    """Benchmark: scan of 100k lines of real jax code, beside ruff check when installed."""
    session.run(sys.executable, str(ROOT / "benchmarks" / "scan_bench.py"), *session.posargs, external=True)


@nox.session(python=False)
def same_reports(session: nox.Session) -> None:
    """Every report rebuilt from the stored inputs, byte for byte, in two revisions:
    nox -s same_reports -- --before main --after worktree (exit 1 naming each file that differs)."""
    session.run(sys.executable, str(ROOT / "benchmarks" / "same_reports.py"), *session.posargs, external=True)


@nox.session
def lint(session: nox.Session) -> None:
    """Ruff over the harness, the cases and the tests."""
    session.install("ruff>=0.8,<1")  # the rules of pyproject.toml ([tool.ruff])
    session.run("ruff", "check", "jaxcompat", "cases", "tests", "benchmarks", "noxfile.py", "conftest.py")


def _cell_ids() -> list[str]:
    try:
        from jaxcompat.knowledge.config import load

        return [c.id for c in load(ROOT / "matrix.toml").cells]
    except Exception:  # noqa: BLE001 - a broken matrix.toml is reported by the matrix session
        return []


def _make_cell_session(cell_id: str) -> None:
    def cell(session: nox.Session) -> None:
        _jaxcompat(session, "matrix", "--cell", cell_id)

    cell.__doc__ = f"One cell of the matrix: {cell_id} (for CI, one job per cell)."
    nox.session(python=False, name=f"cell-{cell_id}", tags=["cell"])(cell)


for _cell_id in _cell_ids():
    _make_cell_session(_cell_id)

"""The user's own tests, before and after an upgrade, each failure explained where a rule can.

crater's question (what passed before and fails after?), asked of a jax/equinox bump: the
user's project is installed editable into the candidate environment (and the baseline's), its
tests run there with its own pytest configuration in the watched runner, and every test gets a
class. A failing test is then matched against the known failures that apply to the installed
versions (documented exception type and message, whatever the test): "this looks like
weak-type-closure: fix …". What no rule explains is listed with its short traceback.

The classes a test can get are ``TEST_CLASSES`` below, defined once. Exit status of a check
with --tests: 1 exactly when a test is ``broken`` (with a baseline) or ``fails`` (without one);
``flaky`` never counts as broken.
"""

from __future__ import annotations

import hashlib
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

from .config import Cell, Matrix, tomllib
from .outcomes import CellResult, RawResult, error_matches
from .rules import applies
from .runner import run_cases
from .text import first_line

TEST_EXTRAS = ("test", "tests", "testing")
TEST_REQUIREMENTS = ("requirements-test.txt", "requirements_test.txt", "test-requirements.txt",
                     "requirements/requirements-test.txt", "requirements/test.txt", "requirements-dev.txt")


class UserTestClass(NamedTuple):
    """What a class of user test means, and what follows from it."""

    meaning: str
    heading: str  # its group in the verdict ("": not listed there)
    failed: bool  # it failed in the candidate: explained by a rule, or shown with its traceback
    rerun: bool  # run once more in both environments before blaming (or crediting) the upgrade
    fails_check: tuple[bool, ...] = ()  # fails the check with a baseline (True) / without one (False)
    junit: str = ""  # "failure" or "skipped" in check-tests.xml


# In the verdict's order.
TEST_CLASSES = {
    "broken": UserTestClass("passed before, fails after: the upgrade's doing",
                        "✗ broken by the upgrade (passed before, fail after)", True, True, (True,), "failure"),
    "fails": UserTestClass("fails, with no passing run before to compare",
                       "✗ failing after (no passing run before to compare)", True, True, (False,), "failure"),
    "fails-both": UserTestClass("failed before and after: not the upgrade's doing",
                            "· failing before and after (not the upgrade's doing)", True, False, (), "failure"),
    "flaky": UserTestClass("its outcome changed when run again (never blamed on the upgrade)",
                       "? flaky (the outcome changed when run again; not blamed on the upgrade)", False, False, (),
                       "failure"),
    "fixed": UserTestClass("failed before, passes after", "✓ fixed by the upgrade", False, True),
    "pass": UserTestClass("passes (before too, if it ran)", "", False, False),
    "skipped": UserTestClass("skipped in the candidate", "", False, False, (), "skipped"),
}


class TestsError(ValueError):
    """A --tests path that cannot be used (said in one line, no traceback)."""


@dataclass(frozen=True)
class Target:
    """What --tests names: a project (installed editable, its own pytest configuration) or a
    folder of tests."""

    root: Path
    project: bool
    extras: tuple[str, ...] = ()
    test_requirements: tuple[str, ...] = ()  # from the project's test requirements file, if any
    source: str = ""  # that file

    def describe(self) -> str:
        if not self.project:
            return f"the tests in {self.root.name}/"
        extra = f" with its test extra [{','.join(self.extras)}]" if self.extras else ""
        extra += f" and the test requirements in {self.source}" if self.source else ""
        return f"{self.root.name}, installed editable{extra}, run with its own pytest configuration"

    def editable(self) -> str:
        return str(self.root) + (f"[{','.join(self.extras)}]" if self.extras else "")

    def cell(self, cell: Cell) -> Cell:
        """The candidate with the project installed in it (its own environment, so a plain
        `check` of the same pins keeps its own)."""
        if not self.project:
            return cell
        tag = hashlib.sha256(str(self.root).encode()).hexdigest()[:6]
        return replace(cell, id=f"{cell.id}-tests-{tag}", editable=(self.editable(),),
                       constraints=tuple(cell.constraints) + self.test_requirements)


def locate(path: str) -> Target:
    root = Path(path).expanduser().resolve()
    if not root.exists():
        raise TestsError(f"--tests {path}: no such file or directory")
    if not root.is_dir():
        raise TestsError(f"--tests {path}: not a directory (name a project root or a folder of tests)")
    if (root / "pyproject.toml").is_file() or (root / "setup.py").is_file():
        reqs, source = _test_requirements(root)
        return Target(root, project=True, extras=_test_extras(root), test_requirements=reqs, source=source)
    if not any(root.rglob("test_*.py")) and not any(root.rglob("*_test.py")):
        raise TestsError(f"--tests {path}: no pyproject.toml or setup.py, and no test_*.py files under it")
    return Target(root, project=False)


def _test_requirements(root: Path) -> tuple[tuple[str, ...], str]:
    """A project without a test extra often lists its test dependencies in a requirements file."""
    from packaging.requirements import InvalidRequirement, Requirement

    for name in TEST_REQUIREMENTS:
        path = root / name
        if path.is_file():
            out = []
            for line in path.read_text(encoding="utf-8").splitlines():
                line = line.split("#")[0].strip()
                if not line or line.startswith("-"):
                    continue  # options and nested files are not followed
                try:
                    Requirement(line)
                except InvalidRequirement as e:
                    raise TestsError(f"{path}: {line!r} is not a PEP 508 requirement ({e})") from None
                out.append(line)
            return tuple(out), name
    return (), ""


def _test_extras(root: Path) -> tuple[str, ...]:
    """The project's own test extra, if it declares one (pytest plugins, hypothesis …)."""
    path = root / "pyproject.toml"
    if not path.is_file():
        return ()
    try:
        extras = tomllib.loads(path.read_text(encoding="utf-8")).get("project", {}).get("optional-dependencies", {})
    except ValueError as e:
        raise TestsError(f"{path}: not valid TOML ({e})") from None
    return tuple(e for e in TEST_EXTRAS if e in extras)[:1]


# ---------------------------------------------------------------- running


@dataclass
class Observed:
    """The user's tests in one environment."""

    results: dict[str, RawResult] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    error: str = ""  # why the tests could not run there (install, collection …)


def observe(cell: Cell, matrix: Matrix, state_dir: Path, target: Target,
            nodeids: list[str] | None = None) -> Observed:
    """Run the user's tests (or ``nodeids``) in ``cell``'s environment, building it if need be."""
    from . import cell as cells

    scratch = CellResult(id=cell.id, python=cell.python, backend=cell.backend, status="ok")
    try:
        done, python_exe = cells.complete(cell, matrix, scratch, state_dir)
        lock_text = cells.locked(done, python_exe, matrix, scratch, state_dir, cells.Options())
        built = cells.install(done, python_exe, lock_text, matrix, scratch, state_dir, cells.Options())
    except cells.Stop:
        return Observed(error=f"{scratch.status}: {scratch.message}")
    run = run_cases(built.python, target.root, list(nodeids or []), backend=done.backend, imports=[],
                    timeout_s=matrix.settings.case_timeout_s, workdir=state_dir / "runs" / f"{cell.id}-user",
                    project=True)
    out = Observed(results={r.case: r for r in run.results},
                   versions={k.lower(): v for k, v in run.versions.items()})
    if not run.results:
        out.error = f"pytest exited with code {run.rc} before running any test:\n{run.log_tail[-1500:]}"
    return out


# ---------------------------------------------------------------- classifying


@dataclass
class UserTest:
    test: str  # node id, relative to the project
    candidate: str  # passed | failed | skipped | error | absent
    baseline: str | None  # the same, or None without --baseline
    cls: str  # see the module's table
    explained_by: str | None = None
    explained_by_api: str = ""  # no rule explains it, jax's API history does (apiexplain)
    fix: str = ""
    upstream: list[str] = field(default_factory=list)
    message: str = ""
    traceback: str = ""
    note: str = ""

    def to_dict(self) -> dict:
        d = asdict(self)
        d["class"] = d.pop("cls")
        if self.baseline is None:
            d.pop("baseline")
        return d


def status(raw: RawResult | None) -> str:
    if raw is None:
        return "absent"
    if raw.status in ("timeout", "crash") or (raw.status == "failed" and raw.message.startswith(("[setup]", "[teardown]", "[collect]"))):
        return "error"
    return raw.status


def _fails(s: str | None) -> bool:
    return s in ("failed", "error")


def test_class(before: str | None, after: str) -> str:
    """``before``/``after``: passed | failed | skipped | error | absent (None: no baseline)."""
    if after == "skipped":
        return "skipped"
    if after == "absent":  # not collected in the candidate (its module failed to import there)
        return "broken" if before == "passed" else "skipped"
    if before in (None, "absent", "skipped"):
        return "fails" if _fails(after) else "pass"
    if _fails(after):
        return "broken" if before == "passed" else "fails-both"
    return "fixed" if _fails(before) else "pass"


def explain(raw: RawResult, matrix: Matrix, versions: dict[str, str], backend: str):
    """The first known failure that applies to these versions and whose documented error this is."""
    for f in matrix.failures:
        if f.stage == "case" and applies(f, versions, backend) and error_matches(f, raw.error_types, raw.message):
            return f
    return None


def classify(candidate: Observed, baseline: Observed | None, matrix: Matrix, backend: str,
             flaky: dict[str, str] | None = None) -> list[UserTest]:
    """One record per test seen in either environment; ``flaky``: tests whose re-run differed."""
    names = list(candidate.results) + [t for t in (baseline.results if baseline else {}) if t not in candidate.results]
    # A module that cannot even be imported in the candidate: its tests take its error, and the
    # module's own record is not counted again beside them.
    broken_modules = {k: r for k, r in candidate.results.items() if r.message.startswith("[collect]")}
    stands_for = {m for m in broken_modules if baseline and any(t.startswith(m + "::") for t in baseline.results)}
    out = []
    for name in (n for n in names if n not in stands_for):
        raw = candidate.results.get(name) or broken_modules.get(name.split("::")[0])
        before = status(baseline.results.get(name)) if baseline else None
        after = status(raw)
        t = UserTest(test=name, candidate=after, baseline=before, cls=test_class(before, after))
        if raw is not None and _fails(after):
            t.message, t.traceback = first_line(raw.message, 400), raw.traceback
            known = explain(raw, matrix, candidate.versions, backend)
            if known is not None:
                t.explained_by, t.fix, t.upstream = known.id, known.fix, list(known.upstream)
            else:
                from .apiexplain import explain_result
                t.explained_by_api = explain_result(raw, candidate.versions)
        if flaky and name in flaky:
            t.cls, t.note = "flaky", flaky[name]
        out.append(t)
    return out


def suspects(tests: list[UserTest]) -> list[str]:
    """The tests to run once more before blaming (or crediting) the upgrade."""
    return [t.test for t in tests if TEST_CLASSES[t.cls].rerun]


def failing(tests: list[UserTest], with_baseline: bool) -> list[UserTest]:
    return [t for t in tests if with_baseline in TEST_CLASSES[t.cls].fails_check]


# ---------------------------------------------------------------- reporting


def verdict(tests: list[UserTest], target: Target, with_baseline: bool, error: str = "") -> str:
    """One screen: what the upgrade broke (and the fix), then the rest by class."""
    lines = [f"Your tests ({target.describe()}): "
             + (", ".join(f"{c} {n}" for c, n in _counts(tests).items()) if tests else "none ran")]
    if error:
        lines.append("  ✗ your tests could not run in the candidate: " + "\n      ".join(error.strip().splitlines()[-8:]))
    for cls, kind in TEST_CLASSES.items():
        group = [t for t in tests if t.cls == cls]
        if not group or not kind.heading:
            continue
        head = "✗ failing" if cls == "fails" and not with_baseline else kind.heading
        lines.append(f"  {head}:")
        for t in group:
            lines.append(f"    - {t.test}" + (f": {t.message}" if t.message else "") + (f" ({t.note})" if t.note else ""))
            if t.explained_by:
                lines.append(f"        this looks like {t.explained_by} — fix: {t.fix}")
                lines.append(f"        upstream: {', '.join(t.upstream)}")
            elif t.explained_by_api:
                lines.append(f"        jax's API history: {t.explained_by_api}")
            elif kind.failed:
                lines.append("        no known failure explains it; where it raised:")
                lines += ["          " + ln for ln in t.traceback.rstrip().splitlines()[-6:]]
    return "\n".join(lines)


def _counts(tests: list[UserTest]) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in tests:
        out[t.cls] = out.get(t.cls, 0) + 1
    return dict(sorted(out.items()))


def not_exercised(result: CellResult, tests: list[UserTest]) -> list[str]:
    """Known failures our cases hit in the candidate that none of the user's tests ran into."""
    seen = {t.explained_by for t in tests if t.explained_by}
    hit = [r.failure for r in result.results if r.outcome == "reproduced" and r.failure]
    return [f for f in dict.fromkeys(hit) if f not in seen]


def junit(tests: list[UserTest], name: str) -> str:
    suite = ET.Element("testsuite", name=name, tests=str(len(tests)))
    counts = {"failures": 0, "skipped": 0}
    for t in tests:
        module, _, test = t.test.partition("::")
        case = ET.SubElement(suite, "testcase", classname=module.replace("/", ".").removesuffix(".py"),
                             name=test or module)
        if TEST_CLASSES[t.cls].junit == "failure":
            counts["failures"] += 1
            ET.SubElement(case, "failure", type=t.cls,
                          message=f"{t.cls}" + (f": explained by {t.explained_by} (fix: {t.fix})" if t.explained_by else "")
                          ).text = f"{t.message}\n{t.traceback}"
        elif TEST_CLASSES[t.cls].junit == "skipped":
            counts["skipped"] += 1
            ET.SubElement(case, "skipped")
    for k, v in counts.items():
        suite.set(k, str(v))
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def markdown(tests: list[UserTest], verdict_text: str, with_baseline: bool) -> str:
    rows = ["| class | test | baseline | candidate | explained by | fix |", "|---|---|---|---|---|---|"]
    for t in tests:
        rows.append(f"| {t.cls} | `{t.test}` | {t.baseline if with_baseline else '—'} | {t.candidate} | "
                    f"{t.explained_by or t.explained_by_api or ('unexplained' if TEST_CLASSES[t.cls].failed else '—')} | "
                    f"{t.fix or ''} |")
    return "## Your tests\n\n```\n" + verdict_text + "\n```\n\n" + "\n".join(rows) + "\n"


def html_section(tests: list[UserTest], with_baseline: bool) -> str:
    from .html import esc

    rows = []
    for t in tests:
        detail = ""
        if t.message or t.traceback:
            detail = f"<details><summary>{esc(t.message or 'traceback')}</summary><pre>{esc(t.traceback)}</pre></details>"
        link = " ".join(f'<a href="{esc(u)}">{esc(u)}</a>' for u in t.upstream)
        rows.append(f'<tr class="c-{esc(t.cls)}"><td><b>{esc(t.cls)}</b></td><td><code>{esc(t.test)}</code>{detail}</td>'
                    f"<td>{esc(t.baseline) if with_baseline else '—'}</td><td>{esc(t.candidate)}</td>"
                    f"<td>{esc(t.explained_by or '')}</td><td>{esc(t.fix)} {link}</td></tr>")
    return ('<section class="user-tests"><h2>Your tests</h2><table><thead><tr><th>class</th><th>test</th>'
            "<th>baseline</th><th>candidate</th><th>explained by</th><th>fix</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table></section>")


HTML_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>jax-compat check: {title}</title>
<style>body{{font:14px system-ui,sans-serif;margin:1.5em;color:#1b1b1b}} pre{{background:#f5f5f5;padding:.6em;
overflow:auto;white-space:pre-wrap}} table{{border-collapse:collapse}} td,th{{border:1px solid #ccc;padding:4px 8px;
text-align:left;vertical-align:top}} .c-broken td:first-child,.c-fails td:first-child{{background:#f4c7c3}}
.c-fixed td:first-child{{background:#c8e6c9}} .c-fails-both td:first-child{{background:#eee}}
.c-flaky td:first-child{{background:#fff3c4}}</style></head><body><h1>jax-compat check: {title}</h1>
<pre>{verdict}</pre>{section}</body></html>
"""


# ---------------------------------------------------------------- the check


@dataclass
class Comparison:
    tests: list[UserTest]
    with_baseline: bool
    error: str = ""  # the tests could not run in the candidate
    candidate_versions: dict[str, str] = field(default_factory=dict)
    baseline_versions: dict[str, str] = field(default_factory=dict)
    baseline_error: str = ""

    @property
    def failed(self) -> bool:
        return bool(self.error) or bool(failing(self.tests, self.with_baseline))

    def to_dict(self) -> list[dict]:
        return [t.to_dict() for t in self.tests]


def compare(candidate: Cell, baseline: Cell | None, target: Target, matrix: Matrix, state_dir: Path,
            progress=print) -> Comparison:
    """Run the user's tests after (and before), run what changed once more, classify."""
    progress(f"your tests in the candidate ({candidate.id})…")
    after = observe(candidate, matrix, state_dir, target)
    before = None
    if baseline is not None:
        progress(f"your tests in the baseline ({baseline.id})…")
        before = observe(baseline, matrix, state_dir, target)
    tests = classify(after, before, matrix, candidate.backend)
    again = suspects(tests)
    flaky: dict[str, str] = {}
    if again:
        progress(f"running {len(again)} test(s) once more before blaming the upgrade…")
        sides = [("candidate", after, candidate)] + ([("baseline", before, baseline)] if before else [])
        for side, first, cell in sides:
            second = observe(cell, matrix, state_dir, target, nodeids=again)
            for name in again:
                s1, s2 = status(first.results.get(name)), status(second.results.get(name))
                if s1 != s2 and not second.error:
                    flaky[name] = "; ".join(filter(None, [flaky.get(name), f"{side}: {s1}, then {s2}"]))
        tests = classify(after, before, matrix, candidate.backend, flaky)
    prefix = str(target.root) + "/"  # reports name the user's files relative to their project
    for t in tests:
        t.traceback, t.message = t.traceback.replace(prefix, ""), t.message.replace(prefix, "")
        t.explained_by_api = t.explained_by_api.replace(prefix, "")
    return Comparison(tests, with_baseline=baseline is not None, error=after.error,
                      candidate_versions=after.versions,
                      baseline_versions=before.versions if before else {},
                      baseline_error=before.error if before else "")

"""The records of a matrix cell's run: what the pytest plugin saw for one test (``RawResult``),
one case judged by the rules (``CaseResult``) and the cell (``CellResult``: how far it got, its
versions, its cases, what it ran into). Judged by knowledge/outcomes.py, rendered by report/,
stored as reports/cells/ID.json and in every run's ``cells``.

The vocabulary (``Outcome``, ``CellStatus``, ``CellOutcome``) is defined once, in
``jaxcompat.model.vocab``; every report, verdict and comparison imports it from there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jaxcompat.model.deprecations import Deprecation
from jaxcompat.model.learned import Added
from jaxcompat.model.records import Record, attr
from jaxcompat.model.vocab import CellOutcome, CellStatus, EnvironmentKind, Expectation, Outcome, Phase, TestStatus
from jaxcompat.model.warnings import TestWarning

# The vocabularies are types of the model (jaxcompat/model/vocab.py); these are the sets the
# judging and the reports ask about, derived from them.
FAILING_OUTCOMES = frozenset(o for o in Outcome if o.fails)
UNEXPLAINED_OUTCOMES = FAILING_OUTCOMES - {Outcome.STALE}  # a failure that no rule explains
CELL_OK = CellStatus.OK
FAILING_CELL_OUTCOMES = frozenset(o for o in CellOutcome if o.fails)
# Reports before the harness-error status marked one as a run-error with this message prefix
# (read, never written).
LEGACY_HARNESS_PREFIX = "harness error:"
@dataclass
class RawResult(Record):
    """What the pytest plugin saw for one test, before any knowledge is applied."""

    case: str  # pytest node id, e.g. cases/test_x.py::test_y
    status: TestStatus  # what pytest saw (or the watchdog: timeout, crash)
    error_types: list[str] = field(default_factory=list)  # the exception's class and its bases (a skip: those
    # of the import error it was made for, if any: plugin/pytest_plugin._import_failure)
    message: str = ""
    duration_s: float = attr(0.0, load=float)
    traceback: str = ""  # the case's frames and the library frame that raised
    reused_from: str = ""  # when re-used from the result cache: the time it was observed (UTC)
    phase: Phase = Phase.CALL  # where it failed: collecting its module, setup, the test, teardown
    warnings: list[TestWarning] = field(default_factory=list)  # a user's test: the announcing warnings it raised

    def __post_init__(self) -> None:
        self.status = TestStatus.parse(self.status, f"{self.case}: status")
        self.phase = Phase.parse(self.phase, f"{self.case}: phase")

    @classmethod
    def upgrade(cls, d: dict) -> dict:
        return _phase_of(d)


def _phase_of(d: dict) -> dict:
    """A record with its message and its phase; one written before the ``phase`` field marked a
    failure outside the test itself by a message prefix (``[collect] …``), read here once."""
    message = d.get("message", "") or ""
    if d.get("phase"):
        return {**d, "message": message, "phase": Phase.parse(d["phase"], f"{d.get('case', '?')}: phase")}
    phase = Phase.of_message(message)
    return {**d, "message": message[len(phase.prefix):] if phase is not Phase.CALL else message, "phase": phase}


@dataclass
class CaseResult(Record):
    case: str
    failure: str | None = None  # the known failure that applies (and was matched, if it failed)
    expected: Expectation = ""  # whether a known failure applies ("" in a record that lacks it)
    outcome: Outcome = ""  # ("" in a record that lacks it)
    duration_s: float = 0.0
    message: str = ""
    error_type: str = ""
    fix: str = ""
    upstream: list[str] = field(default_factory=list)
    error_types: list[str] = field(default_factory=list)  # the raised class and its bases
    traceback: str = ""  # short: the case's frames and the library frame that raised
    status: TestStatus | str = ""  # what pytest saw ("" in a record written before it was kept)
    reused_from: str = ""  # re-used from the result cache: when it was observed ("" = run now)
    phase: Phase = attr(Phase.CALL, omit=True)  # where it failed (stored only when not the test itself)

    @classmethod
    def upgrade(cls, d: dict) -> dict:
        return _phase_of(d)

    def __setattr__(self, name: str, value) -> None:
        if name == "outcome" and value:
            value = Outcome.parse(value, f"{getattr(self, 'case', '?')}: outcome")
        elif name == "expected" and value:
            value = Expectation.parse(value, f"{getattr(self, 'case', '?')}: expected")
        elif name == "status" and value:
            value = TestStatus.parse(value, f"{getattr(self, 'case', '?')}: status")
        elif name == "phase":
            value = Phase.parse(value, f"{getattr(self, 'case', '?')}: phase")
        object.__setattr__(self, name, value)

    def raw(self) -> RawResult:
        """What was observed, without the knowledge applied (to classify again with new rules)."""
        status = self.status or {Outcome.PASS: TestStatus.PASSED, Outcome.STALE: TestStatus.PASSED,
                                 Outcome.SKIPPED: TestStatus.SKIPPED, Outcome.TIMEOUT: TestStatus.TIMEOUT,
                                 Outcome.CRASH: TestStatus.CRASH}.get(self.outcome, TestStatus.FAILED)
        if not self.status and not self.error_type and self.message.startswith(
                ("killed by signal", "interpreter exited with code")):  # a record from before `status`
            status = TestStatus.CRASH
        return RawResult(case=self.case, status=status, message=self.message, duration_s=self.duration_s,
                         error_types=self.error_types or ([self.error_type] if self.error_type else []),
                         traceback=self.traceback, reused_from=self.reused_from, phase=self.phase)


@dataclass
class CellResult(Record):
    """One cell's result (a report of any version reads: what it lacks takes the default, and keys
    it does not know — check.json's user_tests — are left to their readers)."""

    id: str
    python: str = ""
    backend: str = ""
    status: CellStatus = CELL_OK  # how far it got
    versions: dict[str, str] = field(default_factory=dict)
    results: list[CaseResult] = field(default_factory=list)
    requested: dict[str, str] = field(default_factory=dict)
    date: str | None = None
    failure: str | None = None  # a resolve/import-stage known failure that explains the status
    outcome: CellOutcome = CellOutcome.OK
    message: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # jax deprecations hit by the ecosystem's code
    deprecations: list[Deprecation] = field(default_factory=list)
    # "built": an environment the suite resolved and installed; "existing": one it was pointed at
    # (check --env), whose versions were read, not chosen
    environment: EnvironmentKind = EnvironmentKind.BUILT
    # what jax reported about its devices: platform, kind ("NVIDIA H100 80GB HBM3"), count, and
    # where available platform_version, compute_capability, cuda_runtime, cuda_driver, cudnn
    device: dict = field(default_factory=dict)
    # copies of a distribution that `import` does not load: {name, version, site, by_version, by_site}
    shadowed: list[dict] = field(default_factory=list)
    # what did not come from PyPI, or is a pre-release: {dist: {version, url, kind, commit?,
    # sha256?, prerelease?}} (sources.py); the index options the cell resolved with
    sources: dict[str, dict] = attr(default_factory=dict, omit=True)  # (stored when there are)
    index: dict = attr(default_factory=dict, omit=True)
    # The packages the suite added (not the user's pins), what became of each: {dist: {version,
    # skipped: [{version, reason, error, frame}], left_out}} (jaxcompat/knowledge/learned.py)
    added: dict[str, Added] = field(default_factory=dict)
    # an import-error: each module that failed to import, with its traceback (the message renders
    # them as "import X failed:" blocks for a person; readers use this)
    failed_imports: dict[str, str] = attr(default_factory=dict, omit=True)

    def __post_init__(self) -> None:
        if self.status == CellStatus.IMPORT_ERROR and not self.failed_imports:  # a report of before
            self.failed_imports = _import_blocks(self.message)
        if self.status == CellStatus.RUN_ERROR and self.message.startswith(LEGACY_HARNESS_PREFIX):
            self.status, self.message = CellStatus.HARNESS_ERROR, self.message[len(LEGACY_HARNESS_PREFIX):].strip()

    def __setattr__(self, name: str, value) -> None:
        # the words are types: whatever sets a status or an outcome (a string from a report, a
        # literal in the code) gets the member, or an error naming the words there are
        if name == "status":
            value = CellStatus.parse(value, f"cell {getattr(self, 'id', '?')}: status")
        elif name == "deprecations":  # records, whether they come from a report or from the plugin
            value = [d if isinstance(d, Deprecation) else Deprecation.from_dict(d) for d in value]
        elif name == "added":
            value = {k: a if isinstance(a, Added) else Added.from_dict(a) for k, a in value.items()}
        elif name == "outcome":
            value = CellOutcome.parse(value, f"cell {getattr(self, 'id', '?')}: outcome")
        object.__setattr__(self, name, value)

    @property
    def observed(self) -> bool:
        """Whether this cell is an observation of its releases: it finished, on an interpreter and a
        device this machine has, and the tool itself did not fail (defined once: the survey, the
        edges, the compatibility table and bisect all ask this)."""
        return self.status.says_something

    @property
    def installable(self) -> bool:
        """Whether its releases installed together (see ``CellStatus.installable``)."""
        return self.status.installable

    @property
    def failing(self) -> bool:
        """Whether this cell makes the run fail."""
        if self.outcome in FAILING_CELL_OUTCOMES:
            return True
        return any(r.outcome in FAILING_OUTCOMES for r in self.results)


def render_failed_imports(failed: dict[str, str]) -> str:
    """The message of an import-error cell: each failed module's traceback under its name."""
    return "\n".join(f"import {m} failed:\n{tb.strip()}" for m, tb in failed.items())


def _import_blocks(message: str) -> dict[str, str]:
    """``render_failed_imports`` read back (reports written before ``failed_imports``)."""
    out: dict[str, str] = {}
    module = None
    for line in message.splitlines():
        if line.startswith("import ") and line.endswith(" failed:"):
            module = line[len("import "):-len(" failed:")]
            out[module] = ""
        elif module is not None:
            out[module] += line + "\n"
    return {m: tb.strip() for m, tb in out.items()}


def parse_cells(data: object) -> list[CellResult]:
    """The cells of a run (a matrix.json, latest.json or baseline.json dict) as records: every
    reader parses the JSON here, once, and renders or compares records."""
    cells = data.get("cells") if isinstance(data, dict) else None
    return [CellResult.from_dict(c) for c in cells or [] if isinstance(c, dict)]

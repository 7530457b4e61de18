"""What a command writes, as records: one record per kind of report (the crater's verdict, a check,
the survey, the matrix, a bisection, the nightly …), holding what its renderers read. ``report.emit``
writes a record in each of its formats (``report/formats/``); a record says its file stem, the
formats written when none are asked for (``DEFAULT``: what the command has always written) and, where
a format's file is not ``<stem><suffix>``, its name (``NAMES``). Which formats a record has at all is
the formats' business: each format module lists the record kinds it renders."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar


@dataclass
class Output:
    """A report to write: ``stem`` (``<stem><suffix>`` under the folder given to ``emit``);
    ``scrub``: the redaction boundary its texts cross (none: credentials out of URLs)."""

    stem: str
    scrub: Callable[[str], str] | None = field(default=None, repr=False, compare=False)
    DEFAULT: ClassVar[tuple[str, ...]] = ("json",)
    NAMES: ClassVar[dict[str, str]] = {}
    FAMILY: ClassVar[tuple[type, ...]] = ()  # the kinds one command writes under this stem, one kind a run

    def filename(self, fmt: str, suffix: str) -> str:
        return self.NAMES.get(fmt, f"{self.stem}{suffix}")


@dataclass
class CraterReport(Output):
    """The crater's verdict: crater.json (``said``), .md, .html and .xml read ``text`` (the verdict as
    shown), the dependents' ``results`` and the new warnings; draft-rules.toml holds ``rules`` (none:
    a stale file goes)."""

    said: dict = field(default_factory=dict)
    text: str = ""
    results: list = field(default_factory=list)
    warned: list = field(default_factory=list)
    rules: list = field(default_factory=list)
    groups: list = field(default_factory=list)  # crater.html: each group once, its tests folded
    causes: list = field(default_factory=list)  # crater.html: the root-cause tree
    plan_text: str = ""
    cost: object = None
    gaps: list = field(default_factory=list)
    ignored: list = field(default_factory=list)
    DEFAULT: ClassVar[tuple[str, ...]] = ("json", "md", "html", "junit", "rules")
    NAMES: ClassVar[dict[str, str]] = {"rules": "draft-rules.toml"}


@dataclass
class CellReport(Output):
    """One cell's result (``check.json`` of a plain check, ``cells/<id>.json`` and ``.xml``)."""

    cell: object = None


@dataclass
class UserTestsReport(Output):
    """``check --tests``: check.json, check-tests.xml, check.md and check.html (report/check.py)."""

    cell: object = None
    comparison: object = None
    text: str = ""
    project: str = ""
    warned: list = field(default_factory=list)
    health: object = None
    code: int | None = None  # the exit status: check.html's verdict
    DEFAULT: ClassVar[tuple[str, ...]] = ("json", "junit", "md", "html")
    NAMES: ClassVar[dict[str, str]] = {"junit": "check-tests.xml"}


# `check` writes a CellReport (plain) or a UserTestsReport (--tests) as check.*: after either, no file of
# the other (check.md/.html, check-tests.xml, check.xml) stays to contradict its check.json.
CellReport.FAMILY = UserTestsReport.FAMILY = (CellReport, UserTestsReport)


@dataclass
class MatrixReport(Output):
    """A run of many cells: ``<stem>.json`` (``data``: reports.matrix_dict), .md and the self-contained .html."""

    cells: list = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    data: dict = field(default_factory=dict)
    DEFAULT: ClassVar[tuple[str, ...]] = ("json", "md", "html")


@dataclass
class SurveyReport(Output):
    """The survey (``survey``) or its search for edges (``survey-edges``): .json, .md, .html."""

    data: dict = field(default_factory=dict)
    summary: dict = field(default_factory=dict)
    observations: list = field(default_factory=list)
    rows: list = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    space: object = None
    matrix_pairs: set = field(default_factory=set)
    DEFAULT: ClassVar[tuple[str, ...]] = ("md", "json", "html")


@dataclass
class LatestReport(Output):
    """The nightly: latest.json (``data``), latest.md (``markdown``, then ``held``: what was kept out
    of the baseline) and, when something regressed, latest-issue.md (``issue``)."""

    data: dict = field(default_factory=dict)
    markdown: str = ""
    issue: str | None = None
    held: list = field(default_factory=list)
    DEFAULT: ClassVar[tuple[str, ...]] = ("md", "json", "issue")
    NAMES: ClassVar[dict[str, str]] = {"issue": "latest-issue.md"}


@dataclass
class CompatReport(Output):
    """The compatibility table: compat.md and compat.json."""

    markdown: str = ""
    data: dict = field(default_factory=dict)
    DEFAULT: ClassVar[tuple[str, ...]] = ("md", "json")


@dataclass
class BisectReport(Output):
    """A bisection along releases (``bisect-<package>-<target>.json``), or a region's bounds
    (``bisect/region-<target>.json``): the record's ``to_dict`` at ``indent``."""

    data: dict = field(default_factory=dict)
    indent: int = 2


@dataclass
class CommitBisectReport(Output):
    """A bisection along commits: ``bisect/<name>.json`` and ``.md``."""

    result: object = None
    DEFAULT: ClassVar[tuple[str, ...]] = ("json", "md")

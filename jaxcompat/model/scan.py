"""The records of ``jax-compat scan``: what a scan is made against (``Target``), one use of a jax
name it reports (``Finding``), the answer over many files (``Report``) and a scan of the packages
installed in an environment (``InstalledScan``). Made by
apihistory/scan.py (its rules in apihistory/scanrules/), rendered by report/scan.py."""

from __future__ import annotations

from dataclasses import dataclass, field

from jaxcompat.model.records import Record, attr
from jaxcompat.model.vocab import FindingLevel


@dataclass(frozen=True)
class Target:
    release: str  # the jax release scanned against
    before: str = ""  # --from: the release the user runs today


@dataclass
class Finding(Record):
    path: str
    line: int  # 1-based
    col: int  # 1-based, in characters
    end_line: int
    end_col: int
    code: str
    name: str  # the jax name (module.name) in use
    message: str
    level: FindingLevel  # its rule's
    replacement: str = ""
    fixable: bool = False
    # the fix (an apihistory.scanfix.Edit) the scan made and applies; no output shows it
    edit: object | None = attr(None, repr=False, compare=False, store=False)
    _keys = ("path", "line", "col", "end_line", "end_col", "code", "name", "message", "replacement", "fixable",
             "level")  # its level last

    def text(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}" + (" [*]" if self.fixable else "")


@dataclass
class Report:
    findings: list[Finding]
    files: int
    parse_errors: list[str]
    fixed: list[Finding] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)
    guarded: int = 0  # uses inside try/except AttributeError, `if hasattr(...)`, version checks: not reported
    not_fixed: list[str] = field(default_factory=list)  # files --fix left as they were, and why

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.level == FindingLevel.ERROR]


@dataclass(frozen=True)
class InstalledScan:
    """A scan of the packages installed in an environment (``check``'s candidate ecosystem read
    against jax's API history): the import names found and scanned, and the scan's answer."""

    packages: tuple[str, ...]
    report: Report

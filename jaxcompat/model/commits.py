"""The records of a bisection along a package's commits: a commit (``Commit``, read from git by
env/commits.py), one step (``CommitStep``) and the answer (``CommitBisect``). Built by
operations/commitbisect.py, rendered by report/commitbisect.py."""

from __future__ import annotations

from dataclasses import dataclass, field

from jaxcompat.model.records import Record
from jaxcompat.model.vocab import BisectState


@dataclass
class Commit:
    sha: str
    title: str = ""
    date: str = ""  # author date, ISO 8601
    pull_request: str = ""  # "#123": named in the message, else the pull request whose head it is
    files: list[str] = field(default_factory=list)
    # what else the message cites: the issues it fixes, an internal review's id (PiperOrigin-RevId)
    references: list[str] = field(default_factory=list)


@dataclass
class CommitStep:
    commit: str
    state: BisectState
    signature: str = ""
    detail: str = ""
    seconds: float = 0.0
    jaxlib: str = ""  # for a jax commit: the jaxlib release it was installed over
    tried: list[str] = field(default_factory=list)  # jaxlib releases it could not say over first, each with why
    # what it said over another jaxlib before it was run again over its neighbour's ("0.4.34: present (TypeError)"):
    # a boundary is judged only between steps over the same jaxlib
    also: list[str] = field(default_factory=list)


@dataclass
class CommitBisect(Record):
    package: str
    target: str
    repository: str
    good: str  # release names
    bad: str
    fixed: bool  # looking for where the failure stops
    commits: int = 0  # first-parent commits walked (the good tag's excluded)
    first: Commit | None = None  # the first commit at which the failure starts (or stops)
    last_before: str = ""  # the last commit judged the other way
    range: list[str] = field(default_factory=list)  # skipped commits surround it: all candidates
    shipped_in: str = ""  # the first release holding it
    changelog: list[str] = field(default_factory=list)
    steps: list[CommitStep] = field(default_factory=list)
    # both ends were judged (absent, present): else the walk could not say anything (exit 2)
    judged: bool = False
    wall_s: float = 0.0
    message: str = ""

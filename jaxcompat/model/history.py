"""The nightly crater's history: one record per night (its crater.json, read), folded into one mark
per dependent per night and the breaks between nights — the night each appeared, the commit that
caused it (when a night's bisection found it), the night it was fixed. Pure records, no I/O: the
nights are read by operations/site.py and the pages rendered by report/history.py."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from jaxcompat.model.records import Record
from jaxcompat.model.vocab import DependentVerdict

ABSENT = "absent"  # the dependent was not in that night's run: no mark, and it fixes nothing
# its tests ran on no side or one only, or the night's run could not judge (exit 2): it fixes nothing
NOT_JUDGED = "not-judged"


@dataclass(frozen=True)
class Commit(Record):
    """The first bad commit of a break, as a bisection answered it (a group's ``first_bad_commit``)."""

    package: str
    commit: str
    title: str = ""
    date: str = ""
    pull_request: str = ""  # "#23307" ("" when the commit names none)
    shipped_in: str = ""

    @classmethod
    def answer_of(cls, d: dict) -> Commit | None:
        """The answer of a bisection (read as a record), or None when it named no single commit."""
        if not isinstance(d, dict) or not d.get("commit") or d.get("range"):
            return None
        found = cls.from_dict(d)
        return replace(found, date=found.date[:10])


@dataclass(frozen=True)
class Group:
    """One broken group of a night: an error signature and the dependents it breaks."""

    signature: str
    dependents: tuple[str, ...]
    explained_by: str = ""  # the rule of matrix.toml that explains it
    draft: str = ""  # the rule drafted for it (no rule explains it)
    fix: str = ""
    commit: Commit | None = None
    tests: tuple[tuple[str, tuple[str, ...]], ...] = ()  # per dependent, its tests the group holds

    def of(self, dependent: str) -> tuple[str, ...]:
        """The tests of ``dependent`` in the group, by name."""
        return tuple(sorted(next((t for d, t in self.tests if d == dependent), ())))


@dataclass(frozen=True)
class Outcome:
    """One dependent in one night's run."""

    name: str
    verdict: str  # a DependentVerdict value
    version: str = ""
    ran: tuple[int, int] = (0, 0)  # tests run (baseline, candidate)
    broken: int = 0
    cause: str = ""  # why it was not judged, when it was not
    passed: frozenset[str] = frozenset()  # its tests that ran and passed in the candidate

    @property
    def compared(self) -> bool:
        """Its tests ran on both sides: a night that can show a break, or show it gone."""
        return self.verdict in (DependentVerdict.BROKEN, DependentVerdict.SAFE)


@dataclass(frozen=True)
class Night:
    """One night's crater run, as its crater.json (and bisect.json beside it) said."""

    name: str  # the night's folder name, a day ("2026-11-20")
    candidate: tuple[str, ...]
    baseline: tuple[str, ...]
    exit: int
    outcomes: tuple[Outcome, ...]
    groups: tuple[Group, ...]
    new_warnings: tuple[dict, ...] = ()  # crater.json's new warnings, as stored
    report: str = ""  # the night's report page in the site ("" when none was kept)


@dataclass
class Break:
    """A dependent broken by one error signature, from the night it appeared to the night it was fixed."""

    dependent: str
    signature: str
    appeared: str  # the night it first showed
    explained_by: str = ""
    draft: str = ""
    fix: str = ""
    fixed: str = ""  # the first night the dependent ran clear of it ("" while it is still broken)
    last_seen: str = ""
    commit: Commit | None = None
    bisected_on: str = ""  # the night whose bisection named the commit
    nights: list[str] = field(default_factory=list)  # the nights it showed
    key: str = ""  # what it is known by from night to night (``_key``)
    tests: tuple[str, ...] = ()  # its broken tests, as the last night it showed named them
    not_rerun: str = ""  # the last night the dependent ran clear of it without its tests passing


@dataclass(frozen=True)
class Mark:
    """One dependent on one night."""

    night: str
    verdict: str  # a DependentVerdict value, or ABSENT
    broken: int = 0
    ran: tuple[int, int] = (0, 0)
    version: str = ""
    cause: str = ""  # why it was not judged, when it was not
    appeared: tuple[str, ...] = ()  # signatures of the breaks that appeared that night
    fixed: tuple[str, ...] = ()  # signatures of the breaks fixed that night


@dataclass
class History:
    """Every night, oldest first; per dependent one mark a night; every break."""

    nights: list[Night]
    marks: dict[str, list[Mark]]
    breaks: list[Break]

    @property
    def open(self) -> list[Break]:
        return [b for b in self.breaks if not b.fixed]


def _signatures(night: Night, outcome: Outcome) -> dict[str, Group | None]:
    """The signatures that break ``outcome`` on ``night`` ("" with no group when the report named none)."""
    found = {g.signature: g for g in night.groups if outcome.name in g.dependents}
    if not found and outcome.verdict == DependentVerdict.BROKEN:
        return {"": None}
    return found


def fold(nights: list[Night]) -> History:
    """The history of ``nights`` (any order: sorted by name, an ISO day ``YYYY-MM-DD``, which
    operations/site.py checks, so the text's order is the days'). A break stays open through a night
    the dependent was absent or not judged (its mark ``NOT_JUDGED`` where the night's run exited 2 or
    its tests ran 0 on a side); it is fixed on the first night the dependent's tests ran on both
    sides without it, in a run that judged, and its broken tests ran and passed in the candidate (a
    night that did not re-run them, or where one still fails, leaves it open: ``Break.not_rerun``).
    A commit found on any night of a break is the break's."""
    nights = sorted(nights, key=lambda n: n.name)
    names = sorted({o.name for n in nights for o in n.outcomes})
    open_: dict[tuple[str, str], Break] = {}
    breaks: list[Break] = []
    marks: dict[str, list[Mark]] = {d: [] for d in names}
    for night in nights:
        outcomes = {o.name: o for o in night.outcomes}
        for dep in names:
            o = outcomes.get(dep)
            if o is None:
                marks[dep].append(Mark(night.name, ABSENT))
                continue
            o = _judged(night, o)
            appeared, fixed = _step(night, o, open_, breaks)
            verdict, cause = o.verdict, o.cause
            still = [b for (d, _), b in open_.items() if d == dep and b.not_rerun == night.name]
            if verdict == DependentVerdict.SAFE and still:  # safe in what ran; a break's tests did not pass
                verdict, cause = NOT_JUDGED, "a break still open: its tests were not re-run that night, or still fail"
            marks[dep].append(Mark(night.name, verdict, o.broken, o.ran, o.version, cause, appeared, fixed))
    return History(nights, marks, breaks)


def _judged(night: Night, o: Outcome) -> Outcome:
    """``o``, or its mark ``NOT_JUDGED`` when it says broken or safe in a night that cannot say so."""
    if not o.compared or (night.exit in (0, 1) and min(o.ran) > 0):
        return o
    why = (f"the night's run could not judge (exit {night.exit})" if night.exit not in (0, 1) else
           f"its tests ran {o.ran[0]} in the baseline, {o.ran[1]} in the candidate")
    return replace(o, verdict=NOT_JUDGED, cause=f"{o.verdict}, but {why}")


def _step(night: Night, o: Outcome, open_: dict, breaks: list[Break]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """One dependent's night: the breaks it opens, carries and closes."""
    if not o.compared:  # not run, capped, over budget, none ran...: says nothing of its breaks
        return (), ()
    now = _keyed(o.name, _signatures(night, o))
    appeared = []
    for key, (sig, g, tests) in now.items():
        b = open_.get((o.name, key))
        if b is None:
            b = Break(o.name, sig, night.name, explained_by=(g.explained_by if g else "") or "",
                      draft=(g.draft if g else "") or "", fix=(g.fix if g else "") or "", key=key)
            open_[(o.name, key)] = b
            breaks.append(b)
            appeared.append(sig)
        b.nights.append(night.name)
        b.last_seen, b.tests = night.name, tests
        if b.commit is None and g is not None and g.commit is not None:
            b.commit, b.bisected_on = g.commit, night.name
    fixed = []
    for (dep, key), b in list(open_.items()):
        if dep != o.name or key in now:
            continue
        if b.tests and not all(_passed(t, o.passed) for t in b.tests):  # not re-run, or still failing: open
            b.not_rerun = night.name
            continue
        b.fixed = night.name
        fixed.append(b.signature)
        del open_[(dep, key)]
    return tuple(appeared), tuple(fixed)


def _passed(test: str, passed) -> bool:
    """A broken test passed that night; a module that could not be collected (its id has no ``::``)
    passed when its tests ran and each that ran passed (its own id never shows among passed tests)."""
    return test in passed or ("::" not in test and any(p.startswith(test + "::") for p in passed))


def _keyed(dependent: str, now: dict[str, Group | None]) -> dict[str, tuple[str, Group | None, tuple[str, ...]]]:
    """The night's breaks of ``dependent`` by what they are known by from night to night: the rule that
    explains the group, else its first test by name (a group's signature text is its first test's
    message and frame: it moves when another test or dependent joins), else the signature; each with
    its signature, group and tests (groups of one key: their tests together)."""
    out: dict[str, tuple[str, Group | None, tuple[str, ...]]] = {}
    for sig, g in now.items():
        tests = g.of(dependent) if g else ()
        key = (f"rule {g.explained_by}" if g and g.explained_by else f"test {tests[0]}" if tests else f"sig {sig}")
        if key in out:
            tests = tuple(sorted({*out[key][2], *tests}))
            sig, g = out[key][0], out[key][1]
        out[key] = (sig, g, tests)
    return out

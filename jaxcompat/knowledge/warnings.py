"""Tomorrow's breaks in today's warnings: what a candidate's tests warn of that the baseline's did not.

A test's warnings (``model.warnings.TestWarning``, recorded by the pytest plugin) are compared with
the same test's in the baseline by their normalised message: numbers, memory addresses and paths
taken out, so "array of shape (3, 4) at 0x7f…" in one run is the same warning as "(5, 6) at 0x7e…"
in the other. Only tests that ran on both sides are compared (a test the baseline did not run has
no "before"). The new ones are grouped by that key across projects, each dated by jax's API
history (``model/deprecations.History``, given by the caller: that history lives in a higher stage) or,
where the history does not know the name, by the removal the message itself announces.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from packaging.version import InvalidVersion, Version

from jaxcompat.knowledge.outcomes import error_matches
from jaxcompat.knowledge.rules import applies
from jaxcompat.knowledge.rules import normalise as normalise_versions
from jaxcompat.knowledge.signature import volatile_out
from jaxcompat.model.deprecations import Deprecation, History
from jaxcompat.model.warnings import NewWarning, TestWarning

_SPACE = re.compile(r"\s+")


def normalise(message: str) -> str:
    """The message with what changes from run to run taken out (addresses, paths, numbers)."""
    return _SPACE.sub(" ", volatile_out(message)).strip()


def key(w: TestWarning) -> tuple[str, str]:
    return (w.category, normalise(w.message))


def new(candidate: list[TestWarning], baseline: list[TestWarning] | None, ran_before: bool) -> list[TestWarning]:
    """The candidate's warnings the same test did not raise in the baseline; none when the test did
    not run there (``ran_before`` False, or no baseline at all): nothing to compare with."""
    if baseline is None or not ran_before:
        return []
    before = {key(w) for w in baseline}
    out: dict[tuple[str, str], TestWarning] = {}
    for w in candidate:
        out.setdefault(key(w), w)
    return [w for k, w in out.items() if k not in before]


def group(per_project: Mapping[str, Mapping[str, list[TestWarning]]],
          history: Mapping[str, History] | None = None) -> list[NewWarning]:
    """``per_project``: project -> test -> its new warnings. One ``NewWarning`` per normalised
    message, soonest removal first, then the most tests."""
    history = history or {}
    groups: dict[tuple[str, str], NewWarning] = {}
    for project, tests in sorted(per_project.items()):
        for test, warnings in tests.items():
            for w in warnings:
                k = key(w)
                g = groups.get(k)
                if g is None:
                    g = groups[k] = _dated(NewWarning(key=k[1], category=w.category, message=w.message), history)
                named = g.tests.setdefault(project, [])
                if test not in named:
                    named.append(test)
    return sorted(groups.values(), key=_order)


def _dated(g: NewWarning, history: Mapping[str, History]) -> NewWarning:
    """The name it is about, and when it goes: the API history's release, else the message's own."""
    d = Deprecation(package="", where="", message=g.message, category=g.category)
    api = d.api if d.api.startswith(("jax.", "jaxlib.")) else ""
    h = history.get(api) if api else None
    g.api = api
    g.deprecated_in = h.deprecated_in if h is not None else ""
    if h is not None and h.removed_in:
        g.removed_in, g.removal_from = h.removed_in, "history"
    elif d.removal:
        g.removed_in, g.removal_from = d.removal, "message"
    return g


def explain(groups: list[NewWarning], failures, versions: Mapping[str, Mapping[str, str]],
            backend: str = "cpu") -> list[NewWarning]:
    """A new warning a ``[[failure]]`` rule documents (its category among the rule's error types,
    the rule's match found in the message, the rule applying to the candidate's versions of a
    project that raised it: ``versions``, project -> dist -> version) is that rule's: tomorrow's
    break is already known, with its fix (tracer hashing: a FutureWarning on jax 0.4.30, a
    TypeError from 0.4.36, fixed by equinox 0.11.5)."""
    for g in groups:
        for f in failures:
            if error_matches(f, [g.category], g.message) and any(
                    applies(f, normalise_versions(dict(versions.get(p, {}))), backend) for p in g.tests):
                g.explained_by, g.fix = f.id, f.fix
                break
    return groups


def _order(g: NewWarning):
    try:
        when = (0, Version(g.removed_in)) if g.removed_in else (1, Version("0"))
    except InvalidVersion:
        when = (1, Version("0"))
    return (when, -g.count, g.key)


def sentence(g: NewWarning, projects: bool = True) -> str:
    """"jax.tree_map: deprecated in 0.4.26, removed in 0.6.0 — 12 tests of 3 dependents"."""
    what = g.api or (g.message.splitlines() or [g.key])[0][:160]
    dates = []
    if g.deprecated_in:
        dates.append(f"deprecated in {g.deprecated_in}")
    if g.removed_in:
        dates.append(f"removed in {g.removed_in}" + (" (as its message announces)" if g.removal_from == "message"
                                                     else ""))
    else:
        dates.append("no removal known yet")
    n = g.count
    who = f"{n} test{'s' * (n != 1)}" + (f" of {len(g.tests)} dependent{'s' * (len(g.tests) != 1)}" if projects
                                          else "")
    known = f"; this is {g.explained_by} — fix: {g.fix}" if g.explained_by else ""
    return f"{what}: {', '.join(dates)} — {who} ({g.category}){known}"

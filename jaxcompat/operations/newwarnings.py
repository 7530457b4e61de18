"""Tomorrow's breaks in today's warnings, across projects: the per-test new warnings of the user's
tests (``usertests.UserTest.new_warnings``) grouped by normalised message, each dated by jax's API
history (the same history as ``scan``) or, failing that, by what its message announces."""

from __future__ import annotations

from collections.abc import Mapping

from jaxcompat.knowledge.warnings import explain, group
from jaxcompat.model.usertests import UserTest
from jaxcompat.model.warnings import NewWarning


def groups(per_project: Mapping[str, list[UserTest]], failures=(),
           versions: Mapping[str, Mapping[str, str]] | None = None) -> list[NewWarning]:
    """``per_project``: project (a dependent, or the tested project) -> its tests; ``failures``
    (the matrix's rules) and ``versions`` (project -> the candidate's versions) explain the
    warnings a rule documents."""
    from jaxcompat.apihistory.apiexplain import histories

    new = {p: {t.test: t.new_warnings for t in tests if t.new_warnings} for p, tests in per_project.items()}
    new = {p: tests for p, tests in new.items() if tests}
    if not new:
        return []
    messages = [{"message": w.message} for tests in new.values() for ws in tests.values() for w in ws]
    return explain(group(new, histories(messages)), failures, versions or {})

"""Warnings a project's tests raise, as records: one test's (``TestWarning``) and the new ones of a
candidate grouped across projects (``NewWarning``: tomorrow's break, with the release that removes
what it names). Built by ``knowledge/warnings`` and ``operations/newwarnings``, shown by
``report/warnings``."""

from __future__ import annotations

from dataclasses import dataclass

from jaxcompat.model.records import Record, attr


@dataclass(frozen=True)
class TestWarning(Record):
    """One distinct warning a test raised (its category's name and its message, clipped)."""

    __test__ = False

    category: str = "Warning"
    message: str = ""


@dataclass
class NewWarning(Record):
    """One warning (by its normalised message) the candidate raises in tests that did not raise it
    in the baseline, across projects."""

    key: str  # the message normalised (numbers, addresses, paths out): what groups it
    category: str
    message: str  # the first message seen, as raised
    api: str = ""  # the jax name it is about ("" when it names none)
    deprecated_in: str = ""  # from jax's API history ("" when it does not say)
    removed_in: str = ""  # the history's removal, else the one the message announces ("" when neither)
    removal_from: str = ""  # "history" | "message" | ""
    # project -> its tests that raise it (stored by project)
    tests: dict[str, list[str]] = attr(default_factory=dict, dump=lambda t: {k: list(v) for k, v in sorted(t.items())})
    # the [[failure]] rule that documents it (its error types, its match), and its fix: stored when one does
    explained_by: str = attr("", omit=lambda w: not w.explained_by)
    fix: str = attr("", omit=lambda w: not w.explained_by)
    _keys = ("key", "category", "message", "api", "deprecated_in", "removed_in", "removal_from", "count",
             "projects", "tests", "explained_by", "fix")

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.tests.values())

    @property
    def projects(self) -> list[str]:
        return sorted(self.tests)

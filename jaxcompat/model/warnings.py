"""Warnings a project's tests raise, as records: one test's (``TestWarning``) and the new ones of a
candidate grouped across projects (``NewWarning``: tomorrow's break, with the release that removes
what it names). Built by ``knowledge/warnings`` and ``operations/newwarnings``, shown by
``report/warnings``."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class TestWarning:
    """One distinct warning a test raised (its category's name and its message, clipped)."""

    __test__ = False

    category: str
    message: str

    def to_dict(self) -> dict:
        return {"category": self.category, "message": self.message}

    @classmethod
    def from_dict(cls, d: dict) -> TestWarning:
        return cls(category=str(d.get("category") or "Warning"), message=str(d.get("message") or ""))


@dataclass
class NewWarning:
    """One warning (by its normalised message) the candidate raises in tests that did not raise it
    in the baseline, across projects."""

    key: str  # the message normalised (numbers, addresses, paths out): what groups it
    category: str
    message: str  # the first message seen, as raised
    api: str = ""  # the jax name it is about ("" when it names none)
    deprecated_in: str = ""  # from jax's API history ("" when it does not say)
    removed_in: str = ""  # the history's removal, else the one the message announces ("" when neither)
    removal_from: str = ""  # "history" | "message" | ""
    tests: dict[str, list[str]] = field(default_factory=dict)  # project -> its tests that raise it
    explained_by: str = ""  # the [[failure]] rule that documents it (its error types, its match)
    fix: str = ""  # that rule's fix

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.tests.values())

    def to_dict(self) -> dict:
        return {"key": self.key, "category": self.category, "message": self.message, "api": self.api,
                "deprecated_in": self.deprecated_in, "removed_in": self.removed_in,
                "removal_from": self.removal_from, "count": self.count, "projects": sorted(self.tests),
                "tests": {k: list(v) for k, v in sorted(self.tests.items())},
                **({"explained_by": self.explained_by, "fix": self.fix} if self.explained_by else {})}

    @classmethod
    def from_dict(cls, d: dict) -> NewWarning:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in known})

"""A group of the crater: broken tests with one error signature, across dependents (the signature
is knowledge's: knowledge/signature.py), with what explains it, the package it lies in and the
commit that broke it. Built by operations/crater.py, rendered by report/crater.py."""

from __future__ import annotations

from dataclasses import dataclass, field

from jaxcompat.knowledge.signature import Signature
from jaxcompat.model.records import Record, attr
from jaxcompat.model.roots import Attribution


@dataclass
class Group(Record):
    """Broken tests with one error signature, across dependents."""

    signature: Signature = attr(dump=lambda s: s.key)  # stored by its key
    explained_by: str | None = None
    fix: str = ""
    upstream: list[str] = field(default_factory=list)
    api: str = ""  # jax's API history explains it (no rule does)
    draft: str = ""  # the id of the rule drafted for it (no rule, no API history)
    tests: dict[str, list[str]] = field(default_factory=dict)  # dependent -> its broken tests
    # crater --bisect: the commit that broke it (craterbisect); stored when it was bisected
    bisect: dict = attr(default_factory=dict, key="first_bad_commit", omit=True)
    root: str = ""  # the package its failures lie in (knowledge/roots: the most of its tests')
    through: list[str] = field(default_factory=list)  # the packages between the dependent and the root
    # (dependent, where)
    attributions: list[tuple[str, Attribution]] = attr(default_factory=list, repr=False, store=False)
    _keys = ("signature", "explained_by", "fix", "upstream", "api", "draft", "root", "through", "dependents", "tests",
             "count", "first_bad_commit")

    @property
    def dependents(self) -> list[str]:
        return sorted(self.tests)

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.tests.values())

    def bisect_line(self) -> str:
        """The commit that broke it, as one line ("" when it was not bisected)."""
        b = self.bisect
        if not b:
            return ""
        if not b.get("commit"):
            return b.get("message", "")
        where = (f"one of {len(b['range'])} commits up to {b['commit'][:12]}" if b.get("range")
                 else f"{b['commit'][:12]}")
        return (f"first bad commit: {b['package']} {where} ({b['date'][:10]}) \"{b['title']}\""
                + (f" {b['pull_request']}" if b.get("pull_request") else "")
                + (f", shipped in {b['shipped_in']}" if b.get("shipped_in") else "")
                + f" [{b['steps']} steps over {b['commits']} commits]")

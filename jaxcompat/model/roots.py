"""Root causes across dependents: the package a failure lies in, and the dependents failing through it.

A broken test is *attributed* to the package whose code raised (its traceback's deepest frame in an
installed package other than the test's own dependent and the test harness): an error raised in
equinox's code in diffrax's tests is equinox's. Many dependents failing through one package are one
root cause, not many (as Rust's crater's report analyzer says of crates failing through a broken
dependency). ``knowledge/roots.py`` reads tracebacks into these records; ``report/roots.py`` says them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jaxcompat.model.records import Record


@dataclass(frozen=True, order=True)
class Attribution:
    """Where one broken test's failure lies: ``root``, the package whose code raised (the test's own
    dependent when only its own frames are seen), reached ``through`` these packages (the traceback's
    packages between the dependent's last own frame and the root, outermost first; () when the root
    was called directly, or the traceback kept no frame between them)."""

    root: str
    through: tuple[str, ...] = ()

    def chain(self, dependent: str) -> str:
        """``dynamiqs → diffrax → equinox``; the dependent alone when its own code broke."""
        if self.root == dependent:
            return dependent
        return " → ".join((dependent, *self.through, self.root))


@dataclass
class RootCause(Record):
    """One package that broke, and everything failing in it: the groups (signature keys), the
    broken tests per dependent failing through it (``dependents``; not the package itself), the
    broken tests of the package's own suite when it is a dependent of the crater too (``own_tests``),
    and how each dependent reaches it (``through``: dependent -> chains, as ``Attribution.chain``)."""

    package: str
    groups: list[str] = field(default_factory=list)
    dependents: dict[str, int] = field(default_factory=dict)
    own_tests: int = 0
    through: dict[str, list[str]] = field(default_factory=dict)
    candidate: bool = False  # the package is one the candidate moves (jax, in a jax crater)
    _extra = ("tests",)

    @property
    def tests(self) -> int:
        """Every broken test attributed to it: the dependents' and its own suite's."""
        return sum(self.dependents.values()) + self.own_tests


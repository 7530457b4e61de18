"""Code that guards itself against jax's changes, for scan: only guards that test jax itself.

- ``if hasattr(jax…, "name")`` (and ``hasattr(jax, "x") and jax.x…``): the tested name in its body,
  everything in its ``else``; ``hasattr`` of anything that is not jax guards nothing;
- a jax version check (``jax.__version_info__ >= (0, 5)``, ``Version(jax.__version__) < …``): the
  branch the target does not take, or the whole ``if`` when the check cannot be read; another
  package's ``__version__`` guards nothing;
- a ``try`` whose handler catches what the use itself raises (AttributeError for a name,
  ImportError for an import, TypeError for a call; ``except:``/``Exception`` everything): the
  statements the ``try`` runs (not the bodies of functions it only defines);
- ``if TYPE_CHECKING:``: imports there never run, so a name gone there fails a type checker only.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

ATTRIBUTE, IMPORT, CALL = frozenset({"AttributeError"}), frozenset({"ImportError", "ModuleNotFoundError"}), frozenset(
    {"TypeError"})
_ANY = frozenset({"Exception", "BaseException"})
_VERSION_NAMES = {"__version__", "__version_info__"}


@dataclass(frozen=True)
class Guard:
    first: int
    last: int
    only: str | None = None  # only this dotted name (and what is under it)
    catches: frozenset[str] | None = None  # a try: the errors its handler catches (None: a test, not a try)

    def covers(self, line: int, name: str, raises: frozenset[str]) -> bool:
        if not self.first <= line <= self.last:
            return False
        if self.only is not None and name != self.only and not name.startswith(self.only + "."):
            return False
        return self.catches is None or bool(self.catches & (raises | _ANY))


@dataclass
class Guards:
    pkg: str
    release: tuple[int, ...]  # the target's version
    dotted: object  # node -> the jax dotted name it is, or ""
    guards: list[Guard] = field(default_factory=list)
    typing_only: list[tuple[int, int]] = field(default_factory=list)

    def covers(self, line: int, name: str, raises: frozenset[str] = frozenset()) -> bool:
        return any(g.covers(line, name, raises) for g in self.guards)

    def under_type_checking(self, line: int) -> bool:
        return any(a <= line <= b for a, b in self.typing_only)

    def read(self, node) -> None:
        if isinstance(node, ast.BoolOp):  # hasattr(jax, "pxla") and jax.pxla.X
            if isinstance(node.op, ast.And):
                for v in node.values:
                    name = self.hasattr_name(v)
                    if name:
                        self.guards.append(Guard(node.lineno, node.end_lineno or node.lineno, name))
        elif isinstance(node, (ast.If, ast.IfExp)):
            self.read_if(node)
        else:
            self.read_try(node)

    def read_if(self, node: ast.If | ast.IfExp) -> None:
        body = node.body if isinstance(node, ast.If) else [node.body]
        orelse = node.orelse if isinstance(node, ast.If) else [node.orelse]
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            self.typing_only += [s for s in [span(body)] if s]
            return
        for n in ast.walk(node.test):
            name = self.hasattr_name(n)
            if name:
                self.add(span(body), name)
                self.add(span(orelse))
                return
            if self.is_jax_version(n):
                taken = self.version_test(node.test)
                if taken is None:
                    self.add((node.lineno, node.end_lineno or node.lineno))
                else:
                    self.add(span(orelse if taken else body))
                return

    def read_try(self, node) -> None:
        caught: set[str] = set()
        for h in node.handlers:
            types = [] if h.type is None else h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
            caught |= _ANY if h.type is None else {t.id if isinstance(t, ast.Name) else getattr(t, "attr", "")
                                                   for t in types}
        if not caught:
            return
        for stmt in node.body:  # what the try runs: a function it defines runs later, unguarded
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.guards.append(Guard(stmt.lineno, stmt.end_lineno or stmt.lineno, None, frozenset(caught)))

    def add(self, lines: tuple[int, int] | None, name: str | None = None) -> None:
        if lines:
            self.guards.append(Guard(lines[0], lines[1], name))

    def hasattr_name(self, n) -> str:
        """``jax.x.name`` for ``hasattr(jax.x, "name")``; "" for anything else (another object's hasattr)."""
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "hasattr" and len(n.args) == 2
                and isinstance(n.args[1], ast.Constant) and isinstance(n.args[1].value, str)):
            tested = self.dotted(n.args[0])
            return f"{tested}.{n.args[1].value}" if tested else ""
        return ""

    def is_jax_version(self, n) -> bool:
        if isinstance(n, ast.Attribute) and n.attr in _VERSION_NAMES:  # jaxlib moves in lockstep with jax
            root = n.value
            while isinstance(root, ast.Attribute):
                root = root.value
            return bool(self.dotted(n.value)) or isinstance(root, ast.Name) and root.id == "jaxlib"
        return isinstance(n, ast.Name) and self.dotted(n).rsplit(".", 1)[-1] in _VERSION_NAMES

    def version_test(self, test) -> bool | None:
        """``jax.__version_info__ >= (0, 5, 1)`` at the target, or None when it cannot be read."""
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            return None
        left, op, right = test.left, test.ops[0], test.comparators[0]
        if isinstance(left, (ast.Tuple, ast.Constant)):
            left, right = right, left
            op = {ast.Gt: ast.Lt(), ast.Lt: ast.Gt(), ast.GtE: ast.LtE(), ast.LtE: ast.GtE()}.get(type(op), op)
        if not (isinstance(left, ast.Attribute) and left.attr == "__version_info__"
                and self.dotted(left.value) == self.pkg):
            return None
        try:
            want = tuple(ast.literal_eval(right))
        except (ValueError, TypeError, SyntaxError):
            return None
        have = self.release
        ops = {ast.Gt: lambda: have > want, ast.GtE: lambda: have >= want, ast.Lt: lambda: have < want,
               ast.LtE: lambda: have <= want, ast.Eq: lambda: have == want, ast.NotEq: lambda: have != want}
        f = ops.get(type(op))
        return f() if f else None


def span(body: list) -> tuple[int, int] | None:
    return (body[0].lineno, body[-1].end_lineno or body[-1].lineno) if body else None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def version_of(release: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", release)[:3])

"""Python's scopes, for scan: which uses of a name the jax imports bind really are jax.

``def f(jax): return jax.tree_map(1)`` or ``[jax.tree_map(g, x) for jax in things]`` use a
parameter or a comprehension variable, not the module: a name is looked up as Python looks it up
(the innermost function, lambda or comprehension that binds it, a class body only for the code
directly in it, then the module). Only the names scan follows are tracked.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_SCOPES = (*_FUNCS, *_COMPS, ast.ClassDef)

# a scope: (is a class, {name: bound by a jax import}); a chain: innermost first, the module last
Chain = tuple


@dataclass
class Scopes:
    chains: dict[int, Chain] = field(default_factory=dict)  # id(Name) -> the scopes it is looked up in
    module: dict[str, bool] | None = None  # the names the module scope binds, once read
    read_module: Callable[[], dict[str, bool]] | None = field(default=None, repr=False)  # reads them

    @property
    def module_jax(self) -> dict[str, bool]:
        """The names of those followed that the module's statements bind ({name: by a jax import}),
        read the first time they are asked for (most files never need them)."""
        if self.module is None:
            self.module = self.read_module() if self.read_module is not None else {}
        return self.module

    def is_jax(self, node: ast.Name) -> bool:
        """False when a local binding that no jax import made hides the module's name at ``node``."""
        return self.lookup(node, node.id)

    def lookup(self, node: ast.AST, name: str) -> bool:
        """Does ``name``, used where ``node`` is, reach the module's binding (or a jax import)?"""
        for i, (is_class, bound) in enumerate(self.chains.get(id(node), ())):
            if is_class and i > 0:
                continue  # a class body's names are not seen from the functions inside it
            if name in bound:
                return bound[name]
        return True


def may_rebind(source: str, names: set[str], skip: list[tuple[int, int]]) -> list[int]:
    """The lines where ``source`` may bind one of ``names`` outside the ``skip`` spans (its jax
    imports, in order): a parameter, an assignment, a loop or comprehension variable, ``as``,
    ``def``/``class``, ``global``. Read from the text (strings and comments included: it errs on
    the side of reading a scope), so that only the scopes around those lines are read.

    Each name is found by plain text search (``str.find``), and only where it stands alone is the
    text around it looked at: most occurrences are uses, and a regular expression tried at every
    position of a large file costs more than the scopes it spares."""
    found = []
    for name in names:
        i = source.find(name)
        while i >= 0:
            end = i + len(name)
            if _binds_at(source, i, end):
                found.append(i)
            i = source.find(name, end)
    if skip:
        starts = [a for a, _ in skip]
        found = [i for i in found if not _inside(i, skip, starts)]
    if not found:
        return []
    breaks = [0] + [m.end() for m in _BREAK.finditer(source)]
    return sorted({bisect_right(breaks, i) for i in found})


_BREAK = re.compile(r"\r\n|\r|\n")
_WORD = re.compile(r"[\w.]")
_AFTER = re.compile(r"(?:\s|\\)*(?:=(?!=)|:=|,|\)|:(?!:)|\bin\b)")  # a target, a parameter, `for NAME in`
_KEYWORD = re.compile(r"(?<!\w)(?:def|class|as|global|nonlocal|del)\Z")  # `def NAME`, `as NAME`, `del NAME`


def _binds_at(source: str, i: int, end: int) -> bool:
    """Does the name at ``source[i:end]`` stand where it may be bound?"""
    if end < len(source) and _WORD.match(source, end) and source[end] != ".":
        return False  # a longer name (``jaxpr`` for ``jax``)
    if i and _WORD.match(source, i - 1):
        return False  # an attribute (``x.jax``) or a longer name (``myjax``)
    if _AFTER.match(source, end):
        return True
    j = i
    while j and (source[j - 1].isspace() or source[j - 1] == "\\"):  # a continuation line too
        j -= 1
    return j < i and _KEYWORD.search(source, max(0, j - 8), j) is not None


def _inside(i: int, spans: list[tuple[int, int]], starts: list[int]) -> bool:
    k = bisect_right(starts, i) - 1
    return k >= 0 and spans[k][0] <= i < spans[k][1]


def scopes(tree: ast.Module, names: set[str], is_jax_import, lines: list[int] | None = None,
           uses: list[int] | None = None) -> Scopes:
    """The scopes of ``tree`` for ``names``; ``is_jax_import(node)``: an import statement of jax;
    ``lines``: only the scopes around these lines can bind them (None: any may); ``uses``: only
    the uses on these lines are asked about (sorted; None: any), so a scope that holds none of
    them is not read. The module's own names are always read (when first asked for)."""
    if lines is not None and not lines:  # nothing may be bound again: the module's names only, when asked
        return Scopes(read_module=lambda: _module(tree, names, is_jax_import)[0])
    out = Scopes()
    out.module, nested = _module(tree, names, is_jax_import)
    todo = []
    for n in (nested if lines is None else _around(nested, lines, uses)):
        if isinstance(n, _SCOPES):
            todo.append((n, ()))
        else:  # a module-level statement: its own comprehensions and lambdas
            todo += [(x, ()) for x in _collect([n], names, is_jax_import)[2]]
    while todo:
        node, outer = todo.pop()
        roots, params = _inner(node)
        bound, uses, inner, _ = _collect(roots, names, is_jax_import)
        for p in params:
            if p in names:
                bound[p] = False
        chain = ((isinstance(node, ast.ClassDef), bound), *outer)
        for use in uses:
            out.chains[id(use)] = chain
        todo += [(n, chain) for n in inner]
    return out


def _module(tree: ast.Module, names: set[str], is_jax_import) -> tuple[dict[str, bool], list[ast.AST]]:
    """What the module's statements bind of ``names`` (imports, assignments, defs: read from the
    statements, not their expressions), and the functions and classes they define."""
    bound: dict[str, bool] = {}
    nested: list[ast.AST] = []
    stack = list(tree.body)
    while stack:
        n = stack.pop()
        t = type(n)
        if t is ast.Import or t is ast.ImportFrom:
            jax = is_jax_import(n)
            for a in n.names:
                local = a.asname or a.name.split(".")[0]
                if local in names:
                    bound[local] = bound.get(local, False) or jax
        elif t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            nested.append(n)
            if n.name in names:
                bound.setdefault(n.name, False)
        elif t is ast.Assign or t is ast.AnnAssign or t is ast.AugAssign:
            nested.append(n)  # its lambdas and comprehensions, read where asked
            for target in (n.targets if t is ast.Assign else [n.target]):
                for x in ast.walk(target):
                    if type(x) is ast.Name and x.id in names:
                        bound.setdefault(x.id, False)
        elif not hasattr(n, "body"):
            nested.append(n)  # a plain statement: the lambdas and comprehensions in it, read where asked
        if hasattr(n, "body") and t not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            for field_name in ("body", "orelse", "finalbody", "handlers"):
                stack.extend(getattr(n, field_name, ()))
            for case in getattr(n, "cases", ()):
                stack.extend(case.body)
    return bound, nested


def _around(nodes: list[ast.AST], lines: list[int], uses: list[int] | None = None):
    """The scopes among ``nodes`` that hold one of ``lines`` (through a class, its methods that do)
    and one of ``uses`` (None: any)."""
    for n in nodes:
        first = n.decorator_list[0].lineno if getattr(n, "decorator_list", None) else n.lineno
        last = n.end_lineno or n.lineno
        inside = [ln for ln in lines if first <= ln <= last]
        if not inside or uses is not None and not _holds(uses, first, last):
            continue
        if isinstance(n, ast.ClassDef):
            defs = [m for m in n.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
            spans = [(d.decorator_list[0].lineno if d.decorator_list else d.lineno, d.end_lineno) for d in defs]
            if all(any(a <= ln <= b for a, b in spans) for ln in inside):
                yield from _around(defs, inside, uses)
                continue
        yield n


def _holds(lines: list[int], first: int, last: int) -> bool:
    """Does sorted ``lines`` hold one in ``first..last``?"""
    i = bisect_left(lines, first)
    return i < len(lines) and lines[i] <= last


def _inner(node: ast.AST) -> tuple[list[ast.AST], list[str]]:
    """What runs inside ``node``'s own scope, and the names its parameters bind."""
    if isinstance(node, ast.Module):
        return list(node.body), []
    if isinstance(node, _FUNCS):
        a = node.args
        params = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if x is not None]
        return (list(node.body) if isinstance(node.body, list) else [node.body]), params
    if isinstance(node, ast.ClassDef):
        return list(node.body), []
    gens = node.generators
    elts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
    return [*elts, *(g.target for g in gens), *(i for g in gens for i in g.ifs), *(g.iter for g in gens[1:])], []


def _outer(node: ast.AST) -> list[ast.AST]:
    """What a nested scope's statement runs in the scope around it (decorators, defaults,
    annotations, bases, the first iterable of a comprehension)."""
    if isinstance(node, _COMPS):
        return [node.generators[0].iter]
    out = list(getattr(node, "decorator_list", []))
    if isinstance(node, ast.ClassDef):
        return out + node.bases + [k.value for k in node.keywords]
    a = node.args
    out += [d for d in (*a.defaults, *a.kw_defaults) if d is not None]
    if not isinstance(node, ast.Lambda):
        out += [x.annotation for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg)
                if x is not None and x.annotation is not None]
        out += [node.returns] if node.returns else []
    return out


def _collect(roots: list[ast.AST], names: set[str], is_jax_import):
    """The names of ``names`` one scope binds ({name: by a jax import}), the uses of them in it,
    the scopes nested in it, and its import statements."""
    bound: dict[str, bool] = {}
    uses: list[ast.Name] = []
    nested: list[ast.AST] = []
    imports: list[ast.AST] = []
    declared: set[str] = set()
    stack = list(roots)
    while stack:
        n = stack.pop()
        t = type(n)
        if t is ast.Name:
            if n.id in names:
                uses.append(n)
                if type(n.ctx) is not ast.Load:
                    bound.setdefault(n.id, False)
            continue
        if isinstance(n, _SCOPES):
            nested.append(n)
            stack += _outer(n)
            if t is not ast.Lambda and not isinstance(n, _COMPS) and n.name in names:
                bound.setdefault(n.name, False)
            continue
        if t is ast.Import or t is ast.ImportFrom:
            imports.append(n)
            jax = is_jax_import(n)
            for a in n.names:
                local = a.asname or a.name.split(".")[0]
                if local in names:
                    bound[local] = bound.get(local, False) or jax
        elif t is ast.Global or t is ast.Nonlocal:
            declared.update(n.names)
        elif t is ast.ExceptHandler or t is ast.MatchAs or t is ast.MatchStar:
            if n.name in names:
                bound.setdefault(n.name, False)
        elif t is ast.MatchMapping and n.rest in names:
            bound.setdefault(n.rest, False)
        stack.extend(ast.iter_child_nodes(n))
    for d in declared:
        bound.pop(d, None)
    return bound, uses, nested, imports

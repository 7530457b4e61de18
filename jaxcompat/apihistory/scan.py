"""``jax-compat scan``: the user's code read against jax's own API history, ruff-style.

Static (no jax installed, nothing imported): every ``.py`` file under the given paths is parsed,
its jax imports resolved (``import jax.numpy as jnp``, ``from jax import lax``,
``from jax.X import Y``, ``import jax.X``) and every attribute chain rooted at one of them
(``jax.lib.xla_bridge.get_backend``, ``jnp.something``) looked up in the timeline
(:mod:`jaxcompat.apihistory.apitimeline`) at the target release. This module keeps the walk (which
files and lines can hold a finding, the imports, scopes and guards of a file); what each finding
means, says and fixes is its rule's (:mod:`jaxcompat.apihistory.scanrules`, one module per code).
The records it returns are :mod:`jaxcompat.model.scan`'s, the output :mod:`jaxcompat.report.scan`'s.

``--fix`` applies the rules' fixes (``--diff`` prints them instead). Exit status: 1 when something
in use is removed at the target (after fixing), else 0; 2 for bad input.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import functools
import gc
import os
import re
import textwrap
import unicodedata
from bisect import bisect_left, bisect_right
from pathlib import Path

from jaxcompat.apihistory import scansyntax
from jaxcompat.apihistory.apitimeline import DEPRECATED, GONE, PACKAGES, REMOVED, Timeline
from jaxcompat.apihistory.scanfix import Edit, Source, apply, ast_lines, line_starts
from jaxcompat.apihistory.scanguards import ATTRIBUTE, CALL, IMPORT, Guards, version_of
from jaxcompat.apihistory.scanlookup import Hit, private_part, resolve
from jaxcompat.apihistory.scanrules import ERROR_CODES, RULES, jxc001, jxc002, jxc003, jxc004, jxc005, jxc007, jxc008
from jaxcompat.apihistory.scanscope import Scopes, may_rebind, scopes
from jaxcompat.model.scan import Finding, Report, Target

SKIP_DIRS = {".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "__pycache__", "node_modules",
             "site-packages", "build", "dist", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".jaxcompat"}


class ScanError(ValueError):
    """Bad input to scan (said in one line)."""


# ---------------------------------------------------------------- one file


class _File:
    def __init__(self, path: str, source: str, timeline: Timeline, target: Target):
        self.path, self.source, self.timeline, self.target = path, source, timeline, target
        self.pkg = timeline.package
        self.scopes = Scopes()  # until run() reads them: every name the module's
        self.tree: ast.Module | None = None
        self.findings: list[Finding] = []
        self.aliases: dict[str, str] = {}  # local name -> the jax dotted name it is bound to
        self.reported_aliases: set[str] = set()  # bound to something already reported at its import
        self.star_names: set[str] = set()  # bound by `from jax.X import *`
        self.guards = Guards(self.pkg, version_of(target.release), self.dotted)
        self.fallbacks: list[tuple[int, int]] = []  # the lines of every `except` handler
        self.updated: set[int] = set()  # the targets of augmented assignments (`x.y += 1` reads x.y first)
        self.guarded = 0  # hits left out there
        self.quiet = False
        self.kept_gone: set[str] = set()  # gone modules whose import stays: a chain through one is not renamed

    def close(self) -> None:
        """Let go of the tree: the guards and the scopes call back into this reader, a cycle that
        only the garbage collector would free (scan runs with it off)."""
        self.guards.dotted = None
        self.scopes = Scopes()
        self.tree = None

    @functools.cached_property
    def lines(self) -> list[str]:
        """The lines as ``ast`` counts them (never at a form feed or U+2028), split when first asked for."""
        return ast_lines(self.source)

    @functools.cached_property
    def ascii(self) -> bool:
        return self.source.isascii()

    def char_col(self, line: int, byte_col: int) -> int:
        if self.ascii:  # a column in bytes is one in characters
            return byte_col
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))

    def alias_of(self, node: ast.Name) -> str:
        """The jax name ``node`` is, as the imports and the scopes bind it; "" when it is no jax name
        (not imported, a local that shadows it, or a name a star import would bind that the module
        defines itself)."""
        root = self.aliases.get(node.id, "")
        if not root or not self.scopes.is_jax(node):
            return ""
        if node.id in self.star_names and self.scopes.module_jax.get(node.id) is False:
            return ""
        return root

    def dotted(self, node) -> str:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        root = self.alias_of(node) if isinstance(node, ast.Name) else ""
        if root:
            return ".".join([root] + parts[::-1])
        return ""

    def is_guarded(self, node, name: str, raises: frozenset[str] = frozenset()) -> bool:
        return self.guards.covers(node.lineno, name, raises)

    def add(self, node, hit: Hit, edit: Edit | None = None, unfixed: str = "") -> None:
        """``unfixed``: why a rename the history gives cannot be made there (said in the finding)."""
        if self.quiet:
            return
        if self.is_guarded(node, hit.name, _raises(node)):
            self.guarded += 1  # the code already handles the name's absence (try/except, hasattr, version check)
            return
        rule = jxc001 if jxc001.applies(hit) else jxc002
        text = rule.message(hit, self.target, self.timeline) + (f" (not fixed: {unfixed})" if unfixed else "")
        self.emit(node, rule.RULE.code, hit.name, text, hit.state.replacement, edit)

    def emit(self, node, code: str, name: str, text: str, replacement: str = "", edit: Edit | None = None) -> None:
        if jxc008.applies(code in ERROR_CODES, _raises(node) is IMPORT, self.guards.under_type_checking(node.lineno)):
            code, text = jxc008.RULE.code, jxc008.message(text)
        self.findings.append(Finding(
            self.path, node.lineno, self.char_col(node.lineno, node.col_offset) + 1,
            node.end_lineno or node.lineno, self.char_col(node.end_lineno or node.lineno, node.end_col_offset or 0) + 1,
            code, name, text, RULES[code].level, replacement, fixable=edit is not None, edit=edit))

    # private API: jax._src, underscore names reached through public modules
    def on_private(self, node, dotted: str) -> bool:
        """Report ``dotted`` if it reaches private jax API; True when it did."""
        name = private_part(dotted)
        if not name or self.quiet:
            return bool(name)
        if self.is_guarded(node, name, _raises(node)):
            self.guarded += 1
            return True
        gone = self.timeline.private_gone(dotted, self.target.release)
        if gone:
            self.private_gone(node, dotted, gone)
        else:
            self.emit(node, jxc004.RULE.code, name, jxc004.message(dotted, name, self.pkg))
        return True

    def private_gone(self, node, dotted: str, gone: str) -> None:
        self.emit(node, jxc007.RULE.code, dotted, jxc007.message(dotted, gone, self.pkg))

    # calls: the target's signature, and behaviour that changed
    def on_call(self, node: ast.Call) -> None:
        func = node.func
        if type(func) is ast.Name:
            dotted = self.alias_of(func)
        elif type(func) is ast.Attribute:
            dotted = self.dotted(func)
        else:
            return
        if not dotted or resolve(self.timeline, dotted, self.target.release):
            return  # not jax, or reported as removed/deprecated already
        changed = jxc005.messages(dotted, self.target, self.pkg)
        if changed and not self.is_guarded(node, dotted):
            for text in changed:
                self.emit(func, jxc005.RULE.code, dotted, text)
        hist = self.timeline.signature_history(dotted)
        if hist and not self.is_guarded(node, dotted, CALL):
            verdict = jxc003.judge_call(dotted, hist, self.target, node, self.source)
            if verdict is not None:
                code, text, edit = verdict
                self.emit(node, code, dotted, text, edit=edit)

    def run(self, lines: list[int] | None = None) -> list[Finding]:
        """``lines``: the only lines that can hold a finding (sorted); None: every line."""
        tree = ast.parse(self.source, filename=self.path)
        imports, attrs, branches, calls = [], [], [], []
        for node in (ast.walk(tree) if lines is None else _pruned(tree, lines)):
            t = type(node)
            if t is ast.Attribute:
                attrs.append(node)
            elif t is ast.Import or t is ast.ImportFrom:
                imports.append(node)
            elif t is ast.Call:
                calls.append(node)
            elif t is ast.Try or t is ast.If or t is ast.IfExp or t is ast.BoolOp or t.__name__ == "TryStar":
                branches.append(node)
            elif t is ast.AugAssign:
                self.updated.add(id(node.target))
        imports.sort(key=lambda n: (n.lineno, n.col_offset))
        self.fallbacks = [(h.lineno, h.end_lineno or h.lineno) for b in branches if type(b) is ast.Try
                          or type(b).__name__ == "TryStar" for h in b.handlers]
        for node in imports:
            self.on_import(node, first=True)
        self.tree = tree
        self.read_scopes(tree, attrs, calls, lines)
        for node in branches:
            self.guards.read(node)
        self.findings = []
        for node in imports:
            self.on_import(node)
        if not self.aliases:
            return self.findings
        inner = {id(a.value) for a in attrs if type(a.value) is ast.Attribute}
        for node in attrs:
            if id(node) not in inner:
                self.on_chain(node)
        for node in calls:
            self.on_call(node)
        if self.star_names:
            roots = {id(a.value) for a in attrs}
            for node in ast.walk(tree):
                if (type(node) is ast.Name and node.id in self.star_names and id(node) not in roots
                        and type(node.ctx) is ast.Load):
                    self.on_name(node)
        return self.findings

    def read_scopes(self, tree: ast.Module, attrs: list, calls: list, lines: list[int] | None) -> None:
        """The scopes of the names that can hold a finding here (the roots of the chains and calls
        read) and of ``jax`` (a fix may write it), when the text shows they may be bound otherwise;
        only those that hold one of ``lines`` (the lines read; None: all)."""
        roots = set()
        for node in attrs:
            while type(node) is ast.Attribute:
                node = node.value
            if type(node) is ast.Name:
                roots.add(node.id)
        roots.update(c.func.id for c in calls if type(c.func) is ast.Name)
        names = (roots & self.aliases.keys()) | {self.pkg} | self.star_names
        if lines is None:  # every scope, nothing read ahead of the parser
            self.scopes = scopes(tree, names, self.is_jax_import)
            return
        imports = import_starts(self.source, self.pkg)
        skip = [(i, i + len(_statement(self.source, i))) for i in imports]
        # a local that shadows them is not jax; the module's own bindings are always read (a fix needs them)
        self.scopes = scopes(tree, names, self.is_jax_import, may_rebind(self.source, names, skip), lines)

    def is_jax_import(self, node) -> bool:
        if type(node) is ast.Import:
            return any(a.name.split(".")[0] == self.pkg for a in node.names)
        return not node.level and (node.module or "").split(".")[0] == self.pkg

    # imports: bind aliases, report what is broken where it is imported
    def on_import(self, node, first: bool = False) -> None:
        """Bind the aliases (``first``: only that, before the guards are known), report what is
        broken where it is imported."""
        self.quiet = first
        release = self.target.release
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name != self.pkg and not a.name.startswith(self.pkg + "."):
                    continue
                local = a.asname or self.pkg
                bound = a.name if a.asname else self.pkg
                self.bind(local, bound, a)
                if self.on_private(a, a.name):
                    self.reported_aliases.add(local)
                    continue
                hit = resolve(self.timeline, a.name, release, modules=a.name.count(".") + 1)
                if hit:
                    self.add(a, hit, *self.moved(node, a, hit, first))
                    if a.asname:
                        self.reported_aliases.add(local)
            return
        if node.level or not node.module or not (node.module == self.pkg or node.module.startswith(self.pkg + ".")):
            return
        if private_part(node.module):
            for a in node.names:
                self.bind(a.asname or a.name, f"{node.module}.{a.name}", node)
                self.reported_aliases.add(a.asname or a.name)
            self.on_private(node, node.module + (f".{node.names[0].name}" if len(node.names) == 1
                                                 and node.names[0].name != "*" else ""))
            return
        mod_hit = resolve(self.timeline, node.module, release, modules=node.module.count(".") + 1)
        if mod_hit:
            self.add(node, mod_hit, *self.moved(node, None, mod_hit, first))
        for a in node.names:
            if a.name == "*":
                self.bind_star(node.module)
                continue
            full = f"{node.module}.{a.name}"
            local = a.asname or a.name
            self.bind(local, full, node)
            if mod_hit:
                self.reported_aliases.add(local)
                continue
            if self.on_private(a, full):
                self.reported_aliases.add(local)
                continue
            hit = resolve(self.timeline, full, release)
            if hit:
                self.add(a, hit, *jxc001.import_edit(self, node, a, hit))
                self.reported_aliases.add(local)

    def moved(self, node, a: ast.alias | None, hit: Hit, first: bool) -> tuple[Edit | None, str]:
        """The rewrite of an import of a module that is removed or deprecated (JXC001's), noting a
        gone module whose import stays as it is."""
        if first:
            return None, ""
        edit, why = jxc001.moved_import_edit(self, node, a, hit)
        if edit is None and hit.is_module and hit.state.broken:
            self.kept_gone.add(hit.name)
        return edit, why

    def bind_star(self, module: str) -> None:
        """``from jax.numpy import *``: every public name the history knows of the module."""
        names = set(self.timeline.names.get(module, ()))
        names |= {q[len(module) + 1:] for q in self.timeline.callables if q.rsplit(".", 1)[0] == module}
        for n in names:
            if not n.startswith("_") and n not in self.aliases:
                self.aliases[n] = f"{module}.{n}"
                self.star_names.add(n)

    def on_name(self, node: ast.Name) -> None:
        """A bare use of a name a star import binds."""
        dotted = self.alias_of(node)
        hit = resolve(self.timeline, dotted, self.target.release) if dotted else None
        if hit is not None:
            self.add(node, hit)

    def bind(self, local: str, dotted: str, node) -> None:
        """``local`` names ``dotted`` from here on; an import in an ``except`` handler is the fallback
        of the one its ``try`` made (``try: from jax._src import compiler`` / ``except ImportError:
        from jax._src import dispatch as compiler``): it does not rebind the name."""
        line = getattr(node, "lineno", 0)
        if local in self.aliases and any(a <= line <= b for a, b in self.fallbacks):
            return
        self.aliases[local] = dotted

    def on_chain(self, node: ast.Attribute) -> None:
        parts = []
        cur = node
        while type(cur) is ast.Attribute:
            parts.append(cur.attr)
            cur = cur.value
        root = self.alias_of(cur) if type(cur) is ast.Name else ""
        if not root:
            return
        dotted = ".".join([root] + parts[::-1])
        if cur.id in self.reported_aliases and private_part(root):
            gone = self.timeline.private_gone(dotted, self.target.release)
            if (gone and not self.quiet and type(node.ctx) is ast.Load  # setting an attribute never fails
                    and not self.is_guarded(node, dotted, ATTRIBUTE)):
                self.private_gone(node, dotted, gone)
            return
        private = private_part(dotted)
        if (cur.id not in self.reported_aliases and private
                and not resolve(self.timeline, private.rsplit(".", 1)[0], self.target.release)):
            self.on_private(_ending_at(node, len(parts), root, private), dotted)
            return
        hit = resolve(self.timeline, dotted, self.target.release)
        if hit is None or (cur.id in self.reported_aliases and len(hit.name) <= len(root)):
            return  # nothing, or what its import already reported
        sub = _ending_at(node, len(parts), root, hit.name)  # its span is what a rename rewrites
        if sub is node and type(node.ctx) is not ast.Load:  # `jax.core.Primitive = Mine`: the name is set, not used
            if type(node.ctx) is ast.Store and id(node) not in self.updated:
                return  # setting an attribute never fails (and a rename would set jax's real one)
            self.add(sub, hit, unfixed="it is written to here (`del`, `+=`): a rename would change jax's own")
            return
        self.add(sub, hit, *jxc001.chain_edit(self, sub, cur, root, hit))


def _ending_at(node: ast.Attribute, n_parts: int, root: str, name: str):
    """The sub-chain of ``node`` (``n_parts`` attributes after the name bound to ``root``) that
    ends at the dotted ``name``."""
    sub = node
    for _ in range(n_parts - (len(name.split(".")) - len(root.split(".")))):
        sub = sub.value
    return sub


def _raises(node) -> frozenset[str]:
    """What a use of a name that is gone raises there: an import, ImportError; else AttributeError."""
    return IMPORT if type(node) in (ast.alias, ast.Import, ast.ImportFrom) else ATTRIBUTE


def _pruned(tree: ast.Module, lines: list[int]):
    """The nodes of ``tree`` whose lines include one of ``lines`` (and their ancestors, which
    include them too): the statements around a candidate line, never the rest of the file."""
    stack = list(tree.body)
    n = len(lines)
    while stack:
        node = stack.pop()
        lo = getattr(node, "lineno", None)
        if getattr(node, "decorator_list", None):
            lo = node.decorator_list[0].lineno  # a def's lineno is its `def` line, below them
        if lo is not None:
            i = bisect_left(lines, lo)
            if i == n or lines[i] > (node.end_lineno or lo):
                continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


_NEWLINE = re.compile("\n")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IMPORT_LINES = {pkg: re.compile(rf"^[ \t]*(?:from[ \t]+{pkg}\b|import[ \t][^#\n]*\b{pkg}\b)", re.M)
                 for pkg in PACKAGES}
_IMPORT_AFTER = {pkg: re.compile(rf"[;:][ \t]*(?=from[ \t]+{pkg}\b|import[ \t][^#\n;]*\b{pkg}\b)")
                 for pkg in PACKAGES}  # `x = 1; from jax import a`, `if X: from jax import a`


def candidate_lines(source: str, words: frozenset[str], timeline: Timeline, release: str,
                    seen: dict[str, bool] | None = None) -> list[int] | None:
    """The lines that can hold a finding, read from the text before any parsing; None when the
    file cannot have one (most files: then it is not parsed at all).

    Every finding names its broken part in the source: in a jax import, or in a dotted chain that
    starts at a name a jax import binds. So: no identifier of the file among the last parts of
    everything broken at the target (``words``): none. Else the jax imports are read (``ast`` on
    each statement alone) and looked up, and so is every chain that starts at a name they bind.
    When an import cannot be read on its own, every line counts."""
    if "._" not in source and words.isdisjoint(_IDENT.findall(source)):  # the cheap test first
        return None
    imports = import_starts(source, timeline.package)
    if "\r" in source:  # lines as `ast` counts them (a lone CR ends one too)
        starts = line_starts(source)
    else:
        starts = [0] + [m.end() for m in _NEWLINE.finditer(source)]
    if unread_import(source, timeline.package, imports):
        return list(range(1, len(starts) + 1))
    aliases, broken = _read_imports(source, imports, timeline, release)
    if aliases is None:
        return list(range(1, len(starts) + 1))
    seen = {} if seen is None else seen
    keep = []
    if aliases:
        for i, end, name in _uses(source, aliases, _CHAIN_TAIL):
            parts = _DOT.split(source[i:end])
            for root in aliases[name]:  # every binding of the name (a fallback import binds it again)
                dotted = ".".join([root, *parts[1:]])
                hit = seen.get(dotted)
                if hit is None:
                    if private_part(root):  # its import is reported: only a gone name says more
                        hit = seen[dotted] = bool(timeline.private_gone(dotted, release))
                    else:
                        hit = seen[dotted] = interesting(timeline, dotted, release)
                if hit:
                    keep.append(i)
                    break
        direct = [a for a, ds in aliases.items() if any(d in timeline.callables or d in jxc005.BEHAVIOUR for d in ds)]
        if direct:  # `from jax.numpy import array` ... `array(x, None, False)`
            keep += [i for i, _, _ in _uses(source, direct, _CALL_TAIL)]
    if not keep and not broken:
        return None
    return sorted({bisect_right(starts, i) for i in keep + imports})


_DOT = re.compile(r"\s*\.\s*")
_WORD = re.compile(r"[\w.]")


_CHAIN_TAIL = re.compile(r"(?:\s*\.\s*[A-Za-z_]\w*)+")
_CALL_TAIL = re.compile(r"\s*\(")


def _uses(source: str, names, tail: re.Pattern):
    """(start, end, name) of each of ``names`` that no identifier character or dot precedes and
    ``tail`` follows (an attribute chain, a call's parenthesis). Found by plain text search, name
    by name: a regular expression of them all would be compiled for each file and, beginning
    with a look-behind, tried at every position of it."""
    for name in names:
        n = len(name)
        i = source.find(name)
        while i >= 0:
            if not (i and _WORD.match(source, i - 1)):
                m = tail.match(source, i + n)
                if m is not None:
                    yield i, m.end(), name
            i = source.find(name, i + 1)


@functools.lru_cache(maxsize=2)
def import_starts(source: str, pkg: str) -> list[int]:
    """Where each import of ``pkg`` begins (asked for twice for a file: read once): at the start of
    a line, or after a ``;`` or a compound statement's ``:`` on it where what follows reads as an
    import (not a comment's "note: import jax")."""
    starts = [m.start() for m in _IMPORT_LINES[pkg].finditer(source)]
    after = [m.end() for m in _IMPORT_AFTER[pkg].finditer(source) if _reads_as_import(source, m.end())]
    return sorted(starts + after) if after else starts


_SPACE = " \t\x0c"


def unread_import(source: str, pkg: str, imports: list[int]) -> bool:
    """Can ``pkg`` be imported somewhere that ``imports`` (the statements found) do not span? The
    name of what an import imports follows ``import``, ``from`` or a ``,`` of the same logical
    line, and a statement starts its logical line or follows ``;`` or a ``:``: every occurrence
    of ``pkg`` as a word that reads so (the text around it, strings and comments too) and lies in
    no statement found is one, and then every line is read (a form feed, a backslash, a lone CR
    where the search above looks for none)."""
    spans = [(i, i + len(_statement(source, i))) for i in imports]
    n = len(pkg)
    i = source.find(pkg)
    while i >= 0:
        end = i + n
        if (not (i and _WORD.match(source, i - 1)) and not (end < len(source) and _WORD.match(source, end))
                and _after_import(source, i) and not any(a <= i < b for a, b in spans)):
            return True
        i = source.find(pkg, end)
    return False


def _after_import(source: str, i: int) -> bool:
    """Does the word at ``i`` follow ``import``, ``from`` or an import's ``,`` (in the same logical line)?"""
    j = _back(source, i)
    if j > 0 and source[j - 1] == ",":
        k = _logical_start(source, j)
        return re.search(r"\bimport\b", source[k:i]) is not None
    for kw in ("import", "from"):
        if j >= len(kw) and source.startswith(kw, j - len(kw)) and not (
                j > len(kw) and _WORD.match(source, j - len(kw) - 1)):
            k = _back(source, j - len(kw))
            return k == 0 or source[k - 1] in "\r\n;:"  # where a statement can start
    return False


def _back(source: str, i: int) -> int:
    """``i`` moved back over spaces, tabs, form feeds and backslash continuations."""
    while i > 0:
        c = source[i - 1]
        if c in _SPACE:
            i -= 1
        elif c in "\r\n" and i > 1 and (source[i - 2] == "\\" or c == "\n" and source[i - 2] == "\r"
                                       and i > 2 and source[i - 3] == "\\"):
            i -= 3 if source[i - 2] == "\r" else 2
        else:
            break
    return i


def _logical_start(source: str, i: int) -> int:
    """Where the logical line holding ``i`` starts (lines joined by backslashes only)."""
    while True:
        k = max(source.rfind("\n", 0, i), source.rfind("\r", 0, i))
        if k < 0:
            return 0
        if not (source[k - 1:k] == "\\" or source[k - 2:k + 1] == "\\\r\n"):
            return k + 1
        i = k - 1 if source[k - 1:k] == "\\" else k - 2


def _reads_as_import(source: str, start: int) -> bool:
    text = _statement(source, start)
    for t in (text, text.split(";", 1)[0]):
        try:
            body = ast.parse(t).body
        except (SyntaxError, ValueError):
            continue
        return bool(body) and type(body[0]) in (ast.Import, ast.ImportFrom)
    return False


def _read_imports(source: str, imports: list[int], timeline: Timeline, release: str):
    """The names the jax imports bind ({local: [dotted, …]}: every binding, in order), and whether
    one imports something broken; (None, True) when an import cannot be read on its own."""
    out: dict[str, list[str]] = {}
    broken = False
    pkg = timeline.package
    for start in imports:
        try:
            tree = ast.parse(textwrap.dedent(_statement(source, start)))
        except SyntaxError:
            return None, True
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] == pkg:
                        out.setdefault(a.asname or pkg, []).append(a.name if a.asname else pkg)
                        broken = (broken or bool(private_part(a.name))
                                  or bool(resolve(timeline, a.name, release, modules=a.name.count(".") + 1)))
            elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == pkg:
                broken = (broken or bool(private_part(node.module))
                          or bool(resolve(timeline, node.module, release, modules=node.module.count(".") + 1)))
                if any(a.name == "*" for a in node.names):
                    return None, True  # a star import binds names no text shows: every line counts
                for a in node.names:
                    out.setdefault(a.asname or a.name, []).append(f"{node.module}.{a.name}")
                    broken = broken or (a.name != "*" and interesting(timeline, f"{node.module}.{a.name}", release))
    return out, broken


def _statement(source: str, start: int) -> str:
    """The text of the import statement starting at ``start``: to the end of its line, through a
    parenthesized list or backslash continuations."""
    end = source.find("\n", start)
    end = len(source) if end < 0 else end
    text = source[start:end]
    if "(" in text and ")" not in text:
        close = source.find(")", end)
        return source[start:len(source) if close < 0 else close + 1]
    while text.rstrip().endswith("\\") and end < len(source):
        nxt = source.find("\n", end + 1)
        end = len(source) if nxt < 0 else nxt
        text = source[start:end]
    return text


def _apply(source: str, findings: list[Finding]) -> tuple[str, list[Finding], str]:
    """The source with every fixable finding's edit made (those that overlap wait for the next
    run), the fixed findings, and why nothing was made when the rewrite failed a check."""
    fixable = [f for f in findings if f.fixable and f.edit is not None]
    made = apply(source, [f.edit for f in fixable])
    return made.text, [f for f, ok in zip(fixable, made.done, strict=True) if ok], made.refused


# ---------------------------------------------------------------- many files


def interesting(timeline: Timeline, dotted: str, release: str) -> bool:
    """Can a use of ``dotted`` hold a finding at ``release``?"""
    return (resolve(timeline, dotted, release) is not None or bool(private_part(dotted))
            or dotted in timeline.callables or dotted in jxc005.BEHAVIOUR)


def call_words(timeline: Timeline) -> frozenset[str]:
    """The last part of every function and class whose signature ever changed (not methods: their
    receivers are not known statically), and of every name whose behaviour changed."""
    out = {q.rsplit(".", 1)[-1] for q in timeline.callables if timeline.is_module(q.rsplit(".", 1)[0])}
    return frozenset(out | {n.rsplit(".", 1)[-1] for n in jxc005.BEHAVIOUR})


def broken_words(timeline: Timeline, release: str) -> frozenset[str]:
    """The last part of every module and name that is removed or deprecated at ``release``."""
    out = set()
    for mod, names in timeline.names.items():
        for name in names:
            if timeline.name(mod, name, release).state in (REMOVED, GONE, DEPRECATED):
                out.add(name)
    for mod in timeline.modules:
        if timeline.module(mod, release).state in (GONE, DEPRECATED):
            out.add(mod.rsplit(".", 1)[-1])
    return frozenset(out)


def files(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_file():
            out.append(path)
        elif path.is_dir():
            for d, dirs, names in os.walk(path):
                dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.endswith(".egg-info"))
                out.extend(Path(d) / n for n in sorted(names) if n.endswith(".py"))
        else:
            raise ScanError(f"scan {p}: no such file or directory")
    return out


def scan(paths: list[str], target: Target, timeline: Timeline | None = None, fix: bool = False,
         diff: bool = False, exhaustive: bool = False) -> Report:
    """``exhaustive``: parse and walk every file that mentions jax (no reading ahead of the
    parser: the same findings, slower; the tests hold the two to that)."""
    gc.disable()  # each file's tree is garbage once read: collections in between only walk the live ones
    try:
        return _scan(paths, target, timeline, fix, diff, exhaustive)
    finally:
        gc.enable()


def renames_names(source: str) -> bool:
    """Does a character of ``source`` that can stand in a name change when Python reads the name
    (NFKC: `ｊ` is `j`, `µ` is `μ`; a combining mark joins the letter before it)? A no-break space
    or `…` in a string or comment cannot be in a name and changes nothing."""
    return any(("a" + c).isidentifier() and (unicodedata.combining(c) or unicodedata.normalize("NFKC", c) != c)
               for c in set(source) if not c.isascii())


def _scan(paths: list[str], target: Target, timeline: Timeline | None, fix: bool, diff: bool,
          exhaustive: bool) -> Report:
    timeline = timeline or Timeline.load()
    report = Report([], 0, [])
    words = broken_words(timeline, target.release) | call_words(timeline)
    seen: dict[str, bool] = {}
    listed = files(paths)
    report.files = len(listed)
    for path in listed:
        try:
            src = Source.read(path)
        except (OSError, UnicodeDecodeError, SyntaxError, LookupError) as e:
            report.parse_errors.append(f"{path}: cannot read ({e})")
            continue
        source = src.text
        # Python reads identifiers NFKC-normalized (`import ｊａｘ` imports jax): such a file is read whole
        odd = not source.isascii() and renames_names(source)
        if timeline.package not in (unicodedata.normalize("NFKC", source) if odd else source):
            continue
        lines = None if exhaustive or odd else candidate_lines(source, words, timeline, target.release, seen)
        if lines is None and not (exhaustive or odd):
            continue
        one = _File(str(path), source, timeline, target)
        try:
            got = one.run(lines)
            report.guarded += one.guarded
        except SyntaxError as e:
            report.parse_errors.append(f"{path}:{e.lineno}: {scansyntax.needs(source, e)}")
            continue
        finally:
            one.close()  # the collector is off: its tree goes now, not with the process
        if (fix or diff) and any(f.fixable for f in got):
            got = _fix_one(path, src, got, report, write=fix)
        report.findings += got
    report.findings.sort(key=lambda f: (f.path, f.line, f.col))
    return report


def _fix_one(path: Path, src: Source, got: list[Finding], report: Report, write: bool) -> list[Finding]:
    """Rewrite one file (``write``) or show the rewrite; the findings left."""
    new, done, refused = _apply(src.text, got)
    if refused:
        report.not_fixed.append(f"{path}: left as it was: {refused}")
        return [dataclasses.replace(f, fixable=False, edit=None) if f.fixable else f for f in got]
    if not write:
        report.diffs.append("".join(difflib.unified_diff(ast_lines(src.text), ast_lines(new), str(path), str(path))))
        return got
    try:
        src.write(path, new)
    except (OSError, UnicodeEncodeError) as e:
        report.not_fixed.append(f"{path}: left as it was: cannot write ({e})")
        return got
    report.fixed += done
    return [f for f in got if f not in done]

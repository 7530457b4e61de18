"""``jax-compat scan``: the user's code read against jax's own API history, ruff-style.

Static (no jax installed, nothing imported): every ``.py`` file under the given paths is parsed,
its jax imports resolved (``import jax.numpy as jnp``, ``from jax import lax``,
``from jax.X import Y``, ``import jax.X``) and every attribute chain rooted at one of them
(``jax.lib.xla_bridge.get_backend``, ``jnp.something``) looked up in the timeline
(:mod:`jaxcompat.apihistory.apitimeline`) at the target release:

- ``JXC001`` (error): removed at the target: gone from its module, ``None`` in its
  ``_deprecations`` table, or its whole module gone;
- ``JXC002`` (warning): deprecated at the target (reachable, with a warning), with the release
  that removes it where the timeline or jax's message says.

``--fix`` rewrites a finding whose replacement is a plain rename (the same object under a new
name, e.g. ``jax.tree_map`` → ``jax.tree.map``) and exists at the target; ``--diff`` prints
the rewrite instead. Exit status: 1 when something in use is removed at the target (after
fixing), else 0; 2 for bad input.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import gc
import json
import os
import re
import textwrap
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field, fields
from pathlib import Path

from jaxcompat.apihistory import behaviour, scansyntax
from jaxcompat.apihistory.apitimeline import DEPRECATED, GONE, PACKAGES, PRESENT, REMOVED, State, Timeline, ver
from jaxcompat.apihistory.scanfix import (
    Edit,
    Replace,
    Several,
    Source,
    SplitImport,
    apply,
    ast_lines,
    line_break,
    segment,
)
from jaxcompat.apihistory.scanguards import ATTRIBUTE, CALL, IMPORT, Guards, version_of
from jaxcompat.apihistory.scanscope import Scopes, may_rebind, scopes
from jaxcompat.apihistory.signatures import Params
from jaxcompat.model.vocab import BindProblem

REMOVED_CODE, DEPRECATED_CODE = "JXC001", "JXC002"
CALL_CODE, PRIVATE_CODE, BEHAVIOUR_CODE, CALL_DEPRECATED_CODE, PRIVATE_GONE_CODE = (
    "JXC003", "JXC004", "JXC005", "JXC006", "JXC007")
TYPING_CODE = "JXC008"
RULES = {
    REMOVED_CODE: ("jax-api-removed", "A jax name in use is removed at the target jax release."),
    DEPRECATED_CODE: ("jax-api-deprecated", "A jax name in use is deprecated at the target jax release."),
    CALL_CODE: ("jax-call-rejected", "A call that the target release's signature rejects: an argument by position "
                "that is keyword-only now, a keyword removed or renamed, a newly required parameter."),
    PRIVATE_CODE: ("jax-private-api", "Private jax API (jax._src, an underscore name): it may change in any "
                   "release, without deprecation."),
    BEHAVIOUR_CODE: ("jax-behaviour-changed", "A jax function whose behaviour changed between the releases, "
                     "with nothing in its name or signature to show it."),
    CALL_DEPRECATED_CODE: ("jax-call-deprecated", "A call the target accepts with a DeprecationWarning: an argument "
                           "by position that jax is making keyword-only."),
    PRIVATE_GONE_CODE: ("jax-private-removed", "Private jax API that the target release no longer has."),
    TYPING_CODE: ("jax-api-removed-typing-only", "A jax name removed at the target, imported only under "
                  "`if TYPE_CHECKING:`: a type checker fails on it, the code that runs does not."),
}
ERROR_CODES = frozenset({REMOVED_CODE, CALL_CODE, PRIVATE_GONE_CODE})
SKIP_DIRS = {".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "__pycache__", "node_modules",
             "site-packages", "build", "dist", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".jaxcompat"}
_REMOVAL = re.compile(r"(?i)(?:will be removed|removed)\s+(?:in|with|from)\s+(?:JAX\s+)?v?(\d+\.\d+(?:\.\d+)*)")
_MUST_IMPORT = re.compile(r"import (jax(?:\.\w+)+)` explicitly")


class ScanError(ValueError):
    """Bad input to scan (said in one line)."""


@dataclass
class Finding:
    path: str
    line: int  # 1-based
    col: int  # 1-based, in characters
    end_line: int
    end_col: int
    code: str
    name: str  # the jax name (module.name) in use
    message: str
    replacement: str = ""
    fixable: bool = False
    edit: Edit | None = field(default=None, repr=False, compare=False)

    @property
    def level(self) -> str:
        return "error" if self.code in ERROR_CODES else "warning"

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "edit"}
        d["level"] = self.level
        return d

    def text(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}" + (" [*]" if self.fixable else "")


@dataclass(frozen=True)
class Target:
    release: str  # the jax release scanned against
    before: str = ""  # --from: the release the user runs today


# ---------------------------------------------------------------- resolving one dotted name


@dataclass(frozen=True)
class Hit:
    name: str  # the dotted name that is removed/deprecated
    state: State
    is_module: bool


def resolve(timeline: Timeline, dotted: str, release: str, modules: int = 0) -> Hit | None:
    """The first part of ``dotted`` that is removed or deprecated at ``release``, walking from ``jax``.

    The first ``modules`` parts must be modules (``import jax.X``, ``from jax.X import``); after
    them a module that is gone may live on as an attribute (``jax.config``: the module went in
    0.4.29, ``jax.config.update`` works on)."""
    parts = dotted.split(".")
    if parts[0] != timeline.package:
        return None
    mod = timeline.package
    warned: Hit | None = None  # a deprecated module on the way: a removed name inside it says more
    for i, p in enumerate(parts[1:], start=2):
        sub = f"{mod}.{p}"
        if timeline.is_module(sub):
            st = timeline.module(sub, release)
            if st.state == GONE and i > modules:
                attr = timeline.name(mod, p, release)
                if attr.state == PRESENT:
                    return warned  # an attribute of its parent now, not a module
                if attr.state == DEPRECATED:
                    return Hit(sub, attr, False)
            if st.state in (GONE, REMOVED):
                return Hit(sub, st, True)
            if st.state == DEPRECATED:
                warned = warned or Hit(sub, st, True)
            mod = sub
            continue
        st = timeline.name(mod, p, release)
        if st.state in (GONE, REMOVED, DEPRECATED):
            return Hit(sub, st, False) if st.state != DEPRECATED or warned is None else warned
        return warned  # an ordinary attribute from here on
    return warned


def message(hit: Hit, target: Target, timeline: Timeline) -> tuple[str, str]:
    """(code, message) of a hit, with the real figures from the timeline."""
    st, pkg = hit.state, timeline.package
    kind = "module " if hit.is_module else ""
    use = f": use {st.replacement}" if st.replacement else ""
    gone = resolve(timeline, st.replacement, target.release) if st.replacement else None
    if gone is not None and gone.state.broken:  # the replacement one release gave, the next removed
        then = gone.state.replacement
        use = (f"; its replacement {st.replacement} was removed too, in {pkg} {gone.state.removed_in}"
               + (f": use {then}" if then and then != hit.name else ""))
    if st.broken:
        dep = f" (deprecated in {st.deprecated_in})" if st.deprecated_in and st.deprecated_in != st.removed_in else ""
        how = (
            ""
            if st.state == GONE
            else f" ({pkg}'s table says: " + _clip(st.message) + ")"
            if not st.replacement and st.message
            else ""
        )
        text = f"{kind}{hit.name} was removed in {pkg} {st.removed_in}{dep}{use}{how}"
        if target.before:
            before = _before(hit, target.before, timeline)
            if before.broken:
                text += f" (already removed in {pkg} {target.before})"
        return REMOVED_CODE, text
    removal = st.removed_in
    said = _REMOVAL.search(st.message)
    when = (f"; removed in {pkg} {removal}" if removal else
            f"; {pkg} says it will be removed in {said.group(1)}" if said else "; no removal scheduled yet")
    return DEPRECATED_CODE, f"{kind}{hit.name} is deprecated since {pkg} {st.deprecated_in or st.since}{when}{use}"


def _before(hit: Hit, release: str, timeline: Timeline) -> State:
    if hit.is_module:
        return timeline.module(hit.name, release)
    mod, _, leaf = hit.name.rpartition(".")
    return timeline.name(mod, leaf, release)


def _clip(s: str, n: int = 160) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def is_rename(old: str, new: str) -> bool:
    """The replacement is the same object under a new name (e.g. jax.tree_map → jax.tree.map)."""
    o, parts = old.rsplit(".", 1)[-1], new.split(".")
    return o == parts[-1] or o.rstrip("_") == parts[-1] or (len(parts) > 1 and o == "_".join(parts[-2:]))


def private_part(dotted: str) -> str:
    """The prefix of ``dotted`` up to its first private part (``jax._src``, ``jax.lib.xla_bridge._backends``),
    or "" when every part is public (dunders such as ``__version__`` are public)."""
    parts = dotted.split(".")
    if parts[0] not in PACKAGES:
        return ""
    for i, p in enumerate(parts[1:], start=2):
        if p.startswith("_") and not (p.startswith("__") and p.endswith("__")):
            return ".".join(parts[:i])
    return ""


BEHAVIOUR = behaviour.by_name()


def _pretty(p: Params) -> str:
    return "(" + p.text().replace(",", ", ").replace("=", "=…") + ")"


def _slot_names(p: Params, first: int, last: int) -> list[str]:
    return [x.name for x in p.slots[first:last]]


@dataclass(frozen=True)
class _Call:
    """What a call site shows of its arguments."""

    node: ast.Call
    source: str
    n_pos: int
    kws: list[str]
    star: bool
    dstar: bool

    @classmethod
    def of(cls, call: ast.Call, source: str) -> _Call:
        return cls(call, source, sum(type(a) is not ast.Starred for a in call.args),
                   [k.arg for k in call.keywords if k.arg], any(type(a) is ast.Starred for a in call.args),
                   any(k.arg is None for k in call.keywords))

    def bind(self, p: Params, kws: list[str] | None = None):
        return p.bind(self.n_pos, self.kws if kws is None else kws, self.star, self.dstar)


def judge_call(dotted: str, hist: list[tuple[str, Params]], target: Target, call: ast.Call,
               source: str) -> tuple[str, str, Edit | None] | None:
    """(code, message, fix) for a call of a jax callable whose signature changed, or None when the
    target binds it as before. A call is only judged where some release in the history bound it
    (a call that never bound anywhere is the reader's blind spot or the user's own bug: not ours)."""
    c = _Call.of(call, source)
    upto = [(r, p) for r, p in hist if ver(r) <= ver(target.release)]
    if not upto:
        return None
    binds = [c.bind(p) for _, p in upto]
    named = next((i for i in range(len(upto) - 1, -1, -1) if binds[i].ok and not binds[i].into_varargs), None)
    after = [(r, p) for r, p in hist if ver(r) > ver(target.release)]
    if binds[-1].ok:
        if not binds[-1].into_varargs or named is None:
            return None
        return _shimmed(dotted, c, upto, named, after)
    # a release where the call bound for sure: not by handing an unknown keyword to **kwargs
    ok = next((i for i in range(len(upto) - 2, -1, -1) if binds[i].ok and not binds[i].into_varkw), None)
    if ok is None:
        return _never_bound(dotted, c, binds[-1], upto[-1][1], target, after)
    text, edit = _broken(dotted, c, upto, binds, ok, named)
    if text is None:
        return None
    pkg = dotted.split(".")[0]
    text = f"{dotted}: {text}; its parameters at {pkg} {target.release}: {_pretty(upto[-1][1])}"
    if target.before and not _binds_at(hist, target.before, c):
        text += f" (already failing in {pkg} {target.before})"
    return CALL_CODE, text, edit


def _shimmed(dotted: str, c: _Call, upto: list, named: int, after: list) -> tuple[str, str, Edit | None] | None:
    """Positional arguments that named parameters took before now land in a deprecation shim's *args."""
    pkg, now = dotted.split(".")[0], upto[-1][1]
    first = len(now.slots)
    moved = _slot_names(upto[named][1], first, c.n_pos)
    if not moved or not all(m in now.names() for m in moved):
        return None
    since = upto[named + 1][0]
    later = next((r for r, p in after if not c.bind(p).ok), "")
    fails = f"; a TypeError from {pkg} {later}" if later else ""
    text = (f"{dotted}: {', '.join(moved)} passed by position is deprecated since {pkg} {since} "
            f"(a DeprecationWarning{fails}): pass {_kw_list(moved)} by keyword")
    return CALL_DEPRECATED_CODE, text, _by_keyword(c, first, moved)


def _never_bound(dotted: str, c: _Call, b, now: Params, target: Target, after: list):
    pkg = dotted.split(".")[0]
    later = next((r for r, p in after if (x := c.bind(p)).ok and not x.into_varkw), "")
    if not later:
        return None  # never bound in any release we read: not a change of jax's
    return CALL_CODE, (f"{dotted}: this call is accepted only from {pkg} {later} ({b.problem}"
                       f"{' ' + b.name if b.name else ''} at {pkg} {target.release}); "
                       f"its parameters at {pkg} {target.release}: {_pretty(now)}"), None


def _broken(dotted: str, c: _Call, upto: list, binds: list, ok: int, named: int | None):
    """What the target rejects of a call that bound at ``upto[ok]``, and its fix where it has one."""
    pkg, now = dotted.split(".")[0], upto[-1][1]
    broke, was = upto[ok + 1][0], upto[ok][1]
    b = binds[-1]
    if b.problem is BindProblem.TOO_MANY_POSITIONAL:
        ref = upto[named][1] if named is not None else was
        moved = _slot_names(ref, b.index, c.n_pos)
        if not moved or len(moved) != c.n_pos - b.index:
            return None, None
        kwonly = [m for m in moved if m in {x.name for x in now.kwonly}]
        shim = next((r for (r, p), bd in zip(upto[ok:], binds[ok:], strict=True) if bd.ok and bd.into_varargs), "")
        warned = f" (by position it warned since {pkg} {shim})" if shim else ""
        text = f"{', '.join(moved)} passed by position, keyword-only since {pkg} {broke}{warned}"
        if len(kwonly) == len(moved):
            return text + f": pass {_kw_list(moved)} by keyword", _by_keyword(c, b.index, moved)
        return text, None
    if b.problem is BindProblem.UNKNOWN_KEYWORD:
        return _unknown_keyword(c, b.name, [p for _, p in upto[ok:]], f"{pkg} {broke}")
    if b.problem is BindProblem.MISSING_REQUIRED:
        return f"{b.name} is required since {pkg} {broke}", None
    if b.problem is BindProblem.POSITIONAL_ONLY_BY_KEYWORD:
        return f"{b.name} is positional-only since {pkg} {broke}: pass it by position", None
    return f"{b.problem} since {pkg} {broke}", None


def _unknown_keyword(c: _Call, old: str, since: list[Params], when: str):
    """A keyword the target does not take: renamed where the release that broke the call put a new
    name in its place (and again where a later release renamed that one), never a parameter the
    target added later for something else; else removed. ``since``: the signatures from the last
    release that took it to the target."""
    new = _renamed_through(old, since)
    now = since[-1]
    if new and c.bind(now, [new if k == old else k for k in c.kws]).ok:
        kw = next(k for k in c.node.keywords if k.arg == old)
        return (f"keyword {old}= was renamed {new}= in {when}: write {new}=",
                Replace(kw.lineno, kw.col_offset, kw.lineno, kw.col_offset + len(old.encode("utf-8")), new, old))
    return f"keyword {old}= was removed in {when}", None


def _renamed_through(old: str, since: list[Params]) -> str:
    """The name keyword ``old`` has at the end of ``since``, following each release's rename; ""
    when a release dropped it with no new name in its place."""
    cur = old
    for was, then in zip(since, since[1:], strict=False):
        if cur in then.names() or cur not in was.names():
            continue
        cur = renamed_keyword(cur, was, then)
        if not cur:
            return ""
    return cur if cur != old else ""


def _kw_list(names: list[str]) -> str:
    return ", ".join(f"{n}=" for n in names)


def _binds_at(hist: list[tuple[str, Params]], release: str, c: _Call) -> bool:
    upto = [p for r, p in hist if ver(r) <= ver(release)]
    return not upto or c.bind(upto[-1]).ok


def renamed_keyword(old: str, was: Params, now: Params) -> str:
    """The new name of keyword ``old``: the parameter in its place that ``was`` did not have."""
    new_names = now.names() - was.names()
    gone = was.names() - now.names()
    slots = [p.name for p in was.slots]
    if old in slots and len(gone) <= len(new_names):  # two parameters merged into one is no rename
        i = slots.index(old)
        if i < len(now.slots) and now.slots[i].name in new_names:
            return now.slots[i].name
    if gone == {old} and len(new_names) == 1:
        return next(iter(new_names))
    return ""


def _by_keyword(c: _Call, first: int, names: list[str]) -> Edit | None:
    """``name=`` written before each of these positional arguments, nothing else touched."""
    call = c.node
    args = call.args[first:first + len(names)]
    if len(args) != len(names) or any(type(a) is ast.Starred for a in args) or call.keywords and any(
            (k.lineno, k.col_offset) < (args[-1].lineno, args[-1].col_offset) for k in call.keywords):
        return None
    return Several(tuple(Replace(a.lineno, a.col_offset, a.lineno, a.col_offset, f"{n}=")
                         for n, a in zip(names, args, strict=True)))


# ---------------------------------------------------------------- one file


class _File:
    def __init__(self, path: str, source: str, timeline: Timeline, target: Target):
        self.path, self.source, self.timeline, self.target = path, source, timeline, target
        self.pkg = timeline.package
        self.lines = ast_lines(source)  # as ast counts them: never at a form feed or U+2028
        self.scopes = Scopes()  # until run() reads them: every name the module's
        self.tree: ast.Module | None = None
        self.findings: list[Finding] = []
        self.aliases: dict[str, str] = {}  # local name -> the jax dotted name it is bound to
        self.reported_aliases: set[str] = set()  # bound to something already reported at its import
        self.imported: set[str] = set()  # modules imported by `import X` anywhere in the file
        self.star_names: set[str] = set()  # bound by `from jax.X import *`
        self.guards = Guards(self.pkg, version_of(target.release), self.dotted)
        self.fallbacks: list[tuple[int, int]] = []  # the lines of every `except` handler
        self.guarded = 0  # hits left out there
        self.quiet = False

    def char_col(self, line: int, byte_col: int) -> int:
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

    def add(self, node, hit: Hit, edit: Edit | None = None) -> None:
        if self.quiet:
            return
        if self.is_guarded(node, hit.name, _raises(node)):
            self.guarded += 1  # the code already handles the name's absence (try/except, hasattr, version check)
            return
        code, text = message(hit, self.target, self.timeline)
        self.emit(node, code, hit.name, text, hit.state.replacement, edit)

    def emit(self, node, code: str, name: str, text: str, replacement: str = "", edit: Edit | None = None) -> None:
        if code in ERROR_CODES and _raises(node) is IMPORT and self.guards.under_type_checking(node.lineno):
            code, text = TYPING_CODE, text + " (only under TYPE_CHECKING: a type checker fails on it, not the code)"
        self.findings.append(Finding(
            self.path, node.lineno, self.char_col(node.lineno, node.col_offset) + 1,
            node.end_lineno or node.lineno, self.char_col(node.end_lineno or node.lineno, node.end_col_offset or 0) + 1,
            code, name, text, replacement, fixable=edit is not None, edit=edit))

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
            self.emit(node, PRIVATE_CODE, name,
                      f"{dotted} is private {self.pkg} API ({name}): it may change in any release, without deprecation")
        return True

    def private_gone(self, node, dotted: str, gone: str) -> None:
        self.emit(node, PRIVATE_GONE_CODE, dotted, f"{dotted} is private {self.pkg} API, gone in {self.pkg} {gone}: "
                  "private names change without deprecation")

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
        for change in (BEHAVIOUR.get(dotted, ()) if self.pkg == "jax" else ()):
            if change.crossed(self.target.before, self.target.release) and not self.is_guarded(node, dotted):
                if ver(self.target.release) < ver(change.release):
                    head = (f"{dotted} warns since jax {change.warned} (DeprecationWarning); "
                            f"from jax {change.release}")
                else:
                    head = f"{dotted} changed in jax {change.release}" + (
                        f" (it warned from {change.warned})" if change.warned else "")
                self.emit(func, BEHAVIOUR_CODE, dotted, f"{head}: {change.meaning}; instead: {change.instead}")
        hist = self.timeline.signature_history(dotted)
        if hist and not self.is_guarded(node, dotted, CALL):
            verdict = judge_call(dotted, hist, self.target, node, self.source)
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
        imports.sort(key=lambda n: (n.lineno, n.col_offset))
        self.fallbacks = [(h.lineno, h.end_lineno or h.lineno) for b in branches if type(b) is ast.Try
                          or type(b).__name__ == "TryStar" for h in b.handlers]
        for node in imports:
            self.on_import(node, first=True)
        self.tree = tree
        self.read_scopes(tree, attrs, calls)
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

    def read_scopes(self, tree: ast.Module, attrs: list, calls: list) -> None:
        """The scopes of the names that can hold a finding here (the roots of the chains and calls
        read) and of ``jax`` (a fix may write it), when the text shows they may be bound otherwise."""
        roots = set()
        for node in attrs:
            while type(node) is ast.Attribute:
                node = node.value
            if type(node) is ast.Name:
                roots.add(node.id)
        roots.update(c.func.id for c in calls if type(c.func) is ast.Name)
        names = (roots & self.aliases.keys()) | {self.pkg} | self.star_names
        imports = [m.start() for m in _IMPORT_LINES[self.pkg].finditer(self.source)]
        skip = [(i, i + len(_statement(self.source, i))) for i in imports]
        # a local that shadows them is not jax; the module's own bindings are always read (a fix needs them)
        self.scopes = scopes(tree, names, self.is_jax_import, may_rebind(self.source, names, skip))

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
                self.imported.add(a.name)
                local = a.asname or self.pkg
                bound = a.name if a.asname else self.pkg
                self.bind(local, bound, a)
                if self.on_private(a, a.name):
                    self.reported_aliases.add(local)
                    continue
                hit = resolve(self.timeline, a.name, release, modules=a.name.count(".") + 1)
                if hit:
                    self.add(a, hit)
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
            self.add(node, mod_hit)
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
                self.add(a, hit, self.import_edit(node, a, hit))
                self.reported_aliases.add(local)

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
        self.add(sub, hit, self.chain_edit(sub, cur, root, hit))

    # --fix: plain renames only, and only to names present at the target
    def usable(self, hit: Hit) -> str:
        new = hit.state.replacement
        if not new or not is_rename(hit.name, new) or resolve(self.timeline, new, self.target.release):
            return ""
        must = _MUST_IMPORT.search(hit.state.message)
        if must and must.group(1) not in self.imported:
            return ""  # jax says the new home must be imported explicitly: left to the user
        new_mod, _ = self.timeline.split(new)
        if not new_mod or self.timeline.module(new_mod, self.target.release).broken:
            return ""
        return new

    def chain_edit(self, node, root_name: ast.Name, root: str, hit: Hit) -> Edit | None:
        new = self.usable(hit)
        old = segment(self.lines, node)
        if not new or old != root_name.id + hit.name[len(root):]:
            return None  # nothing to rename to, or a chain spelled over comments or lines: left as it is
        if new.startswith(root + "."):
            return Replace(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset,
                           root_name.id + new[len(root):], old)
        local = next((k for k, v in self.aliases.items() if v == self.pkg and self.scopes.module_jax.get(k)
                      and self.scopes.lookup(root_name, k)), None)
        if local is not None:
            return Replace(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset,
                           local + new[len(self.pkg):], old)
        added = self.import_added()  # no `import jax` at module level: the fix adds one
        if added is None or not self.scopes.lookup(root_name, self.pkg):
            return None
        return Several((added, Replace(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset,
                                       new, old)))

    def import_added(self) -> Replace | None:
        """``import jax`` on a line of its own above the module's first import (after
        ``from __future__``), or None when the module has no import at its top level."""
        first = next((n for n in (self.tree.body if self.tree else ()) if type(n) in (ast.Import, ast.ImportFrom)
                      and getattr(n, "module", None) != "__future__"), None)
        if first is None or first.col_offset:
            return None
        brk = line_break(self.lines[first.lineno - 1])
        return Replace(first.lineno, 0, first.lineno, 0, f"import {self.pkg}{brk}")

    def import_edit(self, node: ast.ImportFrom, a: ast.alias, hit: Hit) -> Edit | None:
        new = self.usable(hit)
        if not new or node.lineno != node.end_lineno:
            return None
        new_mod, rest = self.timeline.split(new)
        if len(rest) != 1 or new_mod == "jax" and rest[0] in ("numpy",):
            return None
        local = a.asname or a.name
        clause = rest[0] if local == rest[0] else f"{rest[0]} as {local}"
        if len(node.names) == 1:
            return Replace(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset,
                           f"from {new_mod} import {clause}", segment(self.lines, node))
        # several names on one line: this one moves to a line of its own below
        return SplitImport(node, a, f"from {new_mod} import {clause}")


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


def candidate_lines(source: str, words: frozenset[str], timeline: Timeline, release: str,
                    seen: dict[str, bool] | None = None) -> list[int] | None:
    """The lines that can hold a finding, read from the text before any parsing; None when the
    file cannot have one (most files: then it is not parsed at all).

    Every finding names its broken part in the source: in a jax import, or in a dotted chain that
    starts at a name a jax import binds. So: no identifier of the file among the last parts of
    everything broken at the target (``words``): none. Else the jax imports are read (``ast`` on
    each statement alone) and looked up, and so is every chain that starts at a name they bind.
    When an import cannot be read on its own, every line counts."""
    if words.isdisjoint(_IDENT.findall(source)) and "._" not in source:
        return None
    imports = [m.start() for m in _IMPORT_LINES[timeline.package].finditer(source)]
    aliases, broken = _read_imports(source, imports, timeline, release)
    starts = [0] + [m.end() for m in _NEWLINE.finditer(source)]
    if aliases is None:
        return list(range(1, len(starts) + 1))
    seen = {} if seen is None else seen
    keep = []
    if aliases:
        chains = re.compile(
            r"(?<![\w.])(?:" + "|".join(map(re.escape, sorted(aliases))) + r")(?:\s*\.\s*[A-Za-z_]\w*)+"
        )
        for m in chains.finditer(source):
            parts = _DOT.split(m.group())
            for root in aliases[parts[0]]:  # every binding of the name (a fallback import binds it again)
                dotted = ".".join([root, *parts[1:]])
                hit = seen.get(dotted)
                if hit is None:
                    if private_part(root):  # its import is reported: only a gone name says more
                        hit = seen[dotted] = bool(timeline.private_gone(dotted, release))
                    else:
                        hit = seen[dotted] = interesting(timeline, dotted, release)
                if hit:
                    keep.append(m.start())
                    break
        direct = [a for a, ds in aliases.items() if any(d in timeline.callables or d in BEHAVIOUR for d in ds)]
        if direct:  # `from jax.numpy import array` ... `array(x, None, False)`
            calls = re.compile(r"(?<![\w.])(?:" + "|".join(map(re.escape, sorted(direct))) + r")\s*\(")
            keep += [m.start() for m in calls.finditer(source)]
    if not keep and not broken:
        return None
    return sorted({bisect_right(starts, i) for i in keep + imports})


_DOT = re.compile(r"\s*\.\s*")


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
            or dotted in timeline.callables or dotted in BEHAVIOUR)


def call_words(timeline: Timeline) -> frozenset[str]:
    """The last part of every function and class whose signature ever changed (not methods: their
    receivers are not known statically), and of every name whose behaviour changed."""
    out = {q.rsplit(".", 1)[-1] for q in timeline.callables if timeline.is_module(q.rsplit(".", 1)[0])}
    return frozenset(out | {n.rsplit(".", 1)[-1] for n in BEHAVIOUR})


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


@dataclass
class Report:
    findings: list[Finding]
    files: int
    parse_errors: list[str]
    fixed: list[Finding] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)
    guarded: int = 0  # uses inside try/except AttributeError, `if hasattr(...)`, version checks: not reported
    not_fixed: list[str] = field(default_factory=list)  # files --fix left as they were, and why

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.code in ERROR_CODES]


def scan(paths: list[str], target: Target, timeline: Timeline | None = None, fix: bool = False,
         diff: bool = False, exhaustive: bool = False) -> Report:
    """``exhaustive``: parse and walk every file that mentions jax (no reading ahead of the
    parser: the same findings, slower; the tests hold the two to that)."""
    gc.disable()  # each file's tree is garbage once read: collections in between only walk the live ones
    try:
        return _scan(paths, target, timeline, fix, diff, exhaustive)
    finally:
        gc.enable()


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
        if timeline.package not in source:
            continue
        lines = None if exhaustive else candidate_lines(source, words, timeline, target.release, seen)
        if lines is None and not exhaustive:
            continue
        try:
            one = _File(str(path), source, timeline, target)
            got = one.run(lines)
            report.guarded += one.guarded
        except SyntaxError as e:
            report.parse_errors.append(f"{path}:{e.lineno}: {scansyntax.needs(source, e)}")
            continue
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


# ---------------------------------------------------------------- output


def render(report: Report, fmt: str, target: Target, timeline: Timeline) -> str:
    if fmt == "json":
        return json.dumps({timeline.package: target.release, "package": timeline.package,
                           "from": target.before or None, "files": report.files,
                           "findings": [f.to_dict() for f in report.findings],
                           "fixed": [f.to_dict() for f in report.fixed], "guarded": report.guarded,
                           "not_fixed": report.not_fixed,
                           "parse_errors": report.parse_errors},
                          indent=2) + "\n"
    if fmt == "sarif":
        return json.dumps(sarif(report, target, timeline), indent=2) + "\n"
    if fmt == "github":
        out = [f"::{'error' if f.level == 'error' else 'warning'} file={f.path},line={f.line},col={f.col},"
               f"endLine={f.end_line},endColumn={f.end_col},title={f.code}::{_gh(f.message)}" for f in report.findings]
        return "".join(x + "\n" for x in out)
    lines = ([f.text() for f in report.findings] + [f"error: {e}" for e in report.parse_errors]
             + [f"warning: --fix {e}" for e in report.not_fixed])
    n_err, n_warn = len(report.errors), len(report.findings) - len(report.errors)
    summary = (f"{timeline.package} {target.release}" + (f" (from {target.before})" if target.before else "")
               + f": {report.files} files, {n_err} errors, {n_warn} warnings")
    if report.parse_errors:
        summary += f" ({len(report.parse_errors)} not read: exit 2)"
    if report.guarded:
        summary += f" ({report.guarded} more inside try/except or hasattr/version checks, not reported)"
    if report.fixed:
        summary += f"; {len(report.fixed)} fixed"
    fixable = sum(f.fixable for f in report.findings)
    if fixable:
        summary += f"; [*] {fixable} fixable with --fix"
    return "".join(x + "\n" for x in lines + report.diffs + [summary])


def _gh(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def sarif(report: Report, target: Target, timeline: Timeline) -> dict:
    """SARIF 2.1.0, as GitHub code scanning reads it."""
    rules = [{"id": code, "name": name, "shortDescription": {"text": text},
              "defaultConfiguration": {"level": "error" if code in ERROR_CODES else "warning"}}
             for code, (name, text) in RULES.items()]
    results = []
    for f in report.findings:
        results.append({
            "ruleId": f.code, "level": f.level, "message": {"text": f.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": Path(f.path).as_posix()},
                "region": {"startLine": f.line, "startColumn": f.col, "endLine": f.end_line, "endColumn": f.end_col}}}],
            "properties": {"jaxName": f.name, "replacement": f.replacement, timeline.package: target.release},
        })
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "jax-compat scan",
                        "informationUri": "https://github.com/jax-ml/jax",
                        "rules": rules,
                        "properties": {"timeline": f"{timeline.package} {timeline.releases[0]}–{timeline.newest}"},
                    }
                },
                "results": results,
            }
        ],
    }

"""jax's own API history, read from its released wheels: what each public name was, release by release.

jax says what it deprecates and removes in its own source: a module keeps a ``_deprecations``
table (``{name: (message, object or None)}``; ``None``: removed, the message names the
replacement) served by ``__getattr__ = deprecation_getattr(__name__, _deprecations)``, and names
and whole modules that disappear can be seen by comparing releases. This module reads every jax
release from 0.4.13 on with ``ast`` (nothing is imported; the wheels are pure Python) and writes
the timeline ``jaxcompat/data/jax_api_timeline.json``:

- ``modules``: every public module (no ``_``-prefixed part) with its events, e.g.
  ``[["0.4.13", "+"], ["0.9.0", "-"]]`` (``+`` present, ``-`` gone), a module-level
  deprecation message where the module warns on import, and ``loaded``: the releases where
  importing its package imports it too (``+``; ``-`` not: ``import jax`` never imports
  ``jax.extend``), read from the package's own top-level imports that always run (``from jax
  import tree as tree``, ``import jax.core as _core``); what other modules import on the way
  is not counted, so ``+`` is sure and ``-`` may be too cautious;
- ``names``: per module, every public name whose state ever changed: ``events`` (``+`` present,
  ``D`` deprecated: reachable with a warning, ``R`` removed with a message in the table, ``-``
  gone), the deprecation and removal messages, and the ``replacement`` parsed from them.

A module's exports are what it defines or imports at top level (both branches of an ``if`` or
``try``, not what only type checkers see, not ``if __name__ == "__main__":``), its ``__all__``, its
``*`` imports from jax (resolved, honouring ``__all__``) and its ``_deprecations`` keys; a name
imported from outside jax (``import numpy as np``, ``from functools import partial``) is the
module's tool, not its API, unless re-exported (``X as X``) or listed in ``__all__``.

A name that stays reachable is never called removed: a name that vanishes from a module whose
exports cannot be read statically (an unresolvable ``*`` import, a hand-written ``__getattr__``)
is left out, and a name that is also a submodule file stays present.

Regenerate with ``nox -s timeline`` (``python -m jaxcompat.apihistory.apitimeline``): each release is read
once and cached (``--cache DIR``), so a new jax release only adds its column.
"""

from __future__ import annotations

import argparse
import ast
import gc
import json
import os
import re
import sys
import tarfile
import time
import zipfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from packaging.version import InvalidVersion, Version

from jaxcompat._util.atomic import write_bytes, write_text
from jaxcompat._util.text import quiet
from jaxcompat.apihistory.signatures import Callables, Params, absolute_module, parse, top_names, warns_when_called
from jaxcompat.env import resolution
from jaxcompat.env.releases import versions as released_versions
from jaxcompat.model.records import Record
from jaxcompat.model.vocab import TimelineState

FORMAT = 9  # the per-release columns' format too: bump it when what is read changes
FIRST = Version("0.4.13")
DATA = Path(__file__).resolve().parents[1] / "data" / "jax_api_timeline.json"
# The packages whose API history is kept: (first release read, the timeline file).
PACKAGES = {
    "jax": (FIRST, DATA),
    "equinox": (Version("0.10.0"), DATA.with_name("equinox_api_timeline.json")),
}
PRESENT, DEPRECATED, REMOVED, GONE = (TimelineState.PRESENT, TimelineState.DEPRECATED, TimelineState.REMOVED,
                                      TimelineState.GONE)  # the timeline file stores their one-letter values
SKIP_PARTS = {"tests", "examples"}


# ---------------------------------------------------------------- one release


@dataclass
class ModuleApi(Record):
    """What one module of one release exports, as far as its source shows."""

    names: dict[str, str] = field(default_factory=dict)  # public name -> PRESENT | DEPRECATED | REMOVED
    messages: dict[str, str] = field(default_factory=dict)  # name -> its _deprecations message
    opaque: bool = False  # some exports cannot be read statically: vanished names are not "gone"
    warns: str = ""  # the module warns (DeprecationWarning) on import: the message
    signatures: dict[str, str] = field(default_factory=dict)  # name or Class.method -> Params text
    private: list[str] = field(default_factory=list)  # names no API promises: ``_x`` here, or all of ``jax._src``
    loads: list[str] = field(default_factory=list)  # a package's submodules its top-level imports surely import


def read_sources(archive: Path, pkg: str = "jax") -> dict[str, str]:
    """``{"jax/lib/xla_bridge.py": source}`` for every .py under ``pkg``/ in a wheel or an sdist."""
    out: dict[str, str] = {}
    top = pkg + "/"
    if archive.name.endswith(".whl") or archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as z:
            for name in z.namelist():
                if name.startswith(top) and name.endswith(".py"):
                    out[name] = z.read(name).decode("utf-8", "replace")
    elif archive.name.endswith((".tar.gz", ".tgz")):
        with tarfile.open(archive) as t:
            for m in t.getmembers():
                parts = m.name.split("/", 1)  # jax-0.4.13/jax/...
                if m.isfile() and len(parts) == 2 and parts[1].startswith(top) and parts[1].endswith(".py"):
                    f = t.extractfile(m)
                    if f is not None:
                        out[parts[1]] = f.read().decode("utf-8", "replace")
    else:
        raise ValueError(f"{archive}: not a wheel (.whl) or an sdist (.tar.gz)")
    return out


def module_name(path: str) -> str:
    mod = path.removesuffix(".py").replace("/", ".")
    return mod.removesuffix(".__init__")


def is_public(mod: str, pkg: str = "") -> bool:
    parts = mod.split(".")
    return parts[0] == (pkg or parts[0]) and not any(p.startswith("_") or p in SKIP_PARTS for p in parts)


def read_release(archive: Path, pkg: str = "jax") -> dict[str, ModuleApi]:
    """Every public module of one release of ``pkg`` and what it exports."""
    gc.disable()  # the trees kept are millions of objects: each collection would walk them all (3x slower)
    try:
        return _read_release(archive, pkg)
    finally:
        gc.enable()


def _read_release(archive: Path, pkg: str) -> dict[str, ModuleApi]:
    sources = {module_name(p): s for p, s in read_sources(archive, pkg).items()}
    trees: dict[str, ast.Module] = {}
    reader = _Reader(sources, trees, pkg)
    out = {mod: reader.api(mod) for mod in sorted(sources) if is_public(mod)}
    callables = Callables(sources, trees)
    sigs = callables.read({mod: [n for n, s in api.names.items() if s != REMOVED] for mod, api in out.items()})
    for mod, api in out.items():
        api.signatures = sigs.get(mod, {})
        for name, state in list(api.names.items()):  # a function that warns of its own deprecation when called
            found = callables.definition(mod, name) if state == PRESENT else None
            msg = warns_when_called(found[1]) if found else ""
            if msg:
                api.names[name], api.messages[name] = DEPRECATED, msg
    for mod in sorted(sources):  # what no API promises: read for the release that removes it
        if mod.split(".")[0] != pkg or any(p in SKIP_PARTS for p in mod.split(".")):
            continue
        top = top_names(sources[mod])
        if is_public(mod):
            out[mod].private = sorted(n for n in top if n.startswith("_") and not n.startswith("__"))
        else:
            out[mod] = ModuleApi(private=sorted(n for n in top if not n.startswith("__")))
    return out


class _Reader:
    def __init__(self, sources: dict[str, str], trees: dict[str, ast.Module] | None = None, pkg: str = "jax"):
        self.sources, self.pkg = sources, pkg
        self.trees = {} if trees is None else trees  # parsed once, shared with the signatures' reader
        self.cache: dict[str, ModuleApi] = {}
        self.all_names: dict[str, set[str]] = {}

    def api(self, mod: str, depth: int = 0) -> ModuleApi:
        if mod in self.cache:
            return self.cache[mod]
        out = ModuleApi()
        self.cache[mod] = out  # a cycle of * imports ends here
        tree = self.trees.get(mod)
        if tree is None:
            tree = self.trees[mod] = parse(mod, self.sources[mod])
        seen = _ModuleVisit(self, mod, depth, out)
        seen.visit(tree.body)
        if seen.all_names is not None:
            self.all_names[mod] = set(seen.all_names)
        seen.finish()
        out.loads = sorted(seen.loads)
        return out


class _ModuleVisit:
    """What one module's top-level statements bind, export, deprecate and remove (``_Reader.api``)."""

    def __init__(self, reader: _Reader, mod: str, depth: int, out: ModuleApi):
        self.reader, self.mod, self.depth, self.out = reader, mod, depth, out
        self.defined: dict[str, None] = {}
        self.wrapped: set[str] = set()
        self.getattrs = {"deprecation_getattr"}  # the local names of jax's deprecation_getattr
        self.external: set[str] = set()  # bound by importing from outside jax, not re-exported (`X as X`)
        self.table: dict[str, tuple[str, bool]] = {}
        self.strings: dict[str, str] = {}
        self.all_names: list[str] | None = None
        self.is_pkg = any(k.startswith(mod + ".") for k in reader.sources)
        self.loads: set[str] = set()  # the submodules imported by statements that always run

    def visit(self, body: list[ast.stmt], sure: bool = True) -> None:
        """``sure``: the statements always run when the module is imported (not under an ``if``,
        nor in a ``try`` whose handler may have skipped them)."""
        for st in body:
            if isinstance(st, ast.If):
                if _is_main(st.test):
                    continue  # runs only as a script
                if not _is_type_checking(st.test):  # only type checkers see that branch
                    self.visit(st.body, False)
                self.visit(st.orelse, False)
            elif isinstance(st, ast.Try) or type(st).__name__ == "TryStar":
                self.visit(st.body, False)
                for h in st.handlers:
                    self.visit(h.body, False)
                self.visit(st.orelse, False)
                self.visit(st.finalbody, sure)
            elif isinstance(st, ast.With):
                self.visit(st.body, sure)
            else:
                if sure and isinstance(st, (ast.Import, ast.ImportFrom)):
                    self.loaded(st)
                self.statement(st)

    def loaded(self, st: ast.Import | ast.ImportFrom) -> None:
        """The submodules of this package an import statement imports (``import jax.core as _core``,
        ``from jax import tree as tree``, ``from . import primitives``, ``from .core import x``):
        after the package is imported, each is its attribute."""
        if not self.is_pkg:
            return
        if isinstance(st, ast.Import):
            found = [a.name for a in st.names]
        else:
            src = absolute_module(self.mod, self.is_pkg, st.module, st.level)
            found = [src, *(f"{src}.{a.name}" for a in st.names if a.name != "*")]
        prefix = self.mod + "."
        for m in found:
            child = m[len(prefix):].split(".")[0] if m.startswith(prefix) else ""
            if child and prefix + child in self.reader.sources:
                self.loads.add(child)

    def statement(self, st: ast.stmt) -> None:
        out = self.out
        if isinstance(st, ast.Import):
            self.imported(st)
        elif isinstance(st, ast.ImportFrom):
            for a in st.names:
                self.imported_from(st, a)
        elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if st.name == "__getattr__":
                out.opaque = True
            self.defined[st.name] = None
        elif isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            for t in targets:
                for n in _target_names(t):
                    self.assigned(st, n)
        elif isinstance(st, ast.Delete):
            for t in st.targets:
                for n in _target_names(t):
                    self.defined.pop(n, None)
        elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and not out.warns:
            out.warns = _warns(st.value, self.strings)

    def imported(self, st: ast.Import) -> None:
        for a in st.names:
            local = a.asname or a.name.split(".")[0]
            if a.asname or a.name.split(".")[0] != self.mod.split(".")[0]:  # `import jax.x` inside jax
                self.defined[local] = None
            if not _inside(a.name, self.reader.pkg) and a.asname != a.name:
                self.external.add(local)  # `import numpy as np`: a tool of the module, not its API

    def imported_from(self, st: ast.ImportFrom, a: ast.alias) -> None:
        if a.name == "*":
            self.star(st)
            return
        self.defined[a.asname or a.name] = None
        if a.name == "deprecation_getattr":
            self.getattrs.add(a.asname or a.name)
        if a.name.startswith("_deprecated_") and a.asname and not a.asname.startswith("_"):
            self.wrapped.add(a.asname)  # jax 0.4.13: a wrapper that warns when called
        if not st.level and not _inside(st.module or "", self.reader.pkg) and a.asname != a.name:
            self.external.add(a.asname or a.name)  # `from functools import partial`

    def star(self, st: ast.ImportFrom) -> None:
        src = absolute_module(self.mod, self.is_pkg, st.module, st.level)
        if src in self.reader.sources and self.depth < 8:
            inner = self.reader.api(src, self.depth + 1)
            self.out.opaque |= inner.opaque
            star = self.reader.all_names.get(src)  # `*` honours __all__
            for n, s in inner.names.items():
                if s == PRESENT and (star is None or n in star):
                    self.defined[n] = None
        else:
            self.out.opaque = True

    def assigned(self, st, n: str) -> None:
        value = st.value
        self.defined[n] = None
        if n == "__all__" and value is not None:
            listed = _string_list(value)
            if listed is None:
                self.out.opaque = True
            elif isinstance(st, ast.AugAssign):
                self.all_names = (self.all_names or []) + listed
            else:
                self.all_names = listed
        elif n == "_deprecations" and isinstance(value, ast.Dict):
            self.table.update(_table(value, self.strings))
        elif n == "__getattr__" and not _is_deprecation_getattr(value, self.getattrs):
            self.out.opaque = True
        elif value is not None:
            s = _string(value, self.strings)
            if s is not None:
                self.strings[n] = s

    def finish(self) -> None:
        """The module's names, from what it binds, lists in __all__, wraps and deprecates."""
        out, listed = self.out, set(self.all_names or [])
        for n in list(self.defined) + list(self.all_names or []):
            if not n.startswith("_") and (n not in self.external or n in listed):
                out.names[n] = PRESENT
        for n in self.wrapped:
            if n in out.names:
                out.names[n] = DEPRECATED
                out.messages[n] = ""
        for n, (msg, gone) in self.table.items():
            if n.startswith("_"):
                continue
            if n in self.defined and gone:
                continue  # a real attribute wins over __getattr__: still reachable
            out.names[n] = REMOVED if gone else DEPRECATED
            out.messages[n] = msg


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _inside(module: str, pkg: str) -> bool:
    return module == pkg or module.startswith(pkg + ".")


def _is_main(test: ast.expr) -> bool:
    return isinstance(test, ast.Compare) and "__main__" in ast.unparse(test)


def _is_deprecation_getattr(value: ast.expr | None, names: set[str]) -> bool:
    if not isinstance(value, ast.Call):
        return False
    f = value.func
    return (isinstance(f, ast.Name) and f.id in names) or "deprecation_getattr" in ast.unparse(f)


def _target_names(t: ast.expr) -> list[str]:
    if isinstance(t, ast.Name):
        return [t.id]
    if isinstance(t, (ast.Tuple, ast.List)):
        return [n for e in t.elts for n in _target_names(e)]
    if isinstance(t, ast.Starred):
        return _target_names(t.value)
    return []


def _string(node: ast.expr, strings: dict[str, str]) -> str | None:
    """A string expression's text: literals, f-strings (``{…}`` kept), ``+``, ``%``-less names."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            elif isinstance(v, ast.FormattedValue):
                inner = _string(v.value, strings)
                parts.append(inner if inner is not None else "{" + ast.unparse(v.value) + "}")
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _string(node.left, strings), _string(node.right, strings)
        return a + b if a is not None and b is not None else None
    if isinstance(node, ast.Name):
        return strings.get(node.id)
    return None


def _string_list(node: ast.expr) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return [e.value for e in node.elts]  # type: ignore[attr-defined]
    return None


def _table(node: ast.Dict, strings: dict[str, str]) -> dict[str, tuple[str, bool]]:
    out = {}
    for k, v in zip(node.keys, node.values, strict=True):
        if not (isinstance(k, ast.Constant) and isinstance(k.value, str)) or not isinstance(v, ast.Tuple) or not v.elts:
            continue
        msg = _string(v.elts[0], strings) or ""
        obj = v.elts[-1]
        out[k.value] = (" ".join(msg.split()), isinstance(obj, ast.Constant) and obj.value is None)
    return out


def _warns(call: ast.Call, strings: dict[str, str]) -> str:
    f = call.func
    if not (isinstance(f, ast.Attribute) and f.attr == "warn") or not call.args:
        return ""
    cats = [ast.unparse(a) for a in call.args[1:2]] + [
        ast.unparse(k.value) for k in call.keywords if k.arg == "category"
    ]
    if not any("Deprecation" in c or "FutureWarning" in c for c in cats):
        return ""
    return " ".join((_string(call.args[0], strings) or "").split())


# ---------------------------------------------------------------- the timeline


_USE = re.compile(
    r"(?:\b[Uu]se|\breplaced by|\bmoved to|\bin favou?r of|\bReplace with)\s+`?"
    r"((?:jax|equinox)(?:\.[A-Za-z_][A-Za-z0-9_]*)+)"
)


@lru_cache(maxsize=None)
def ver(release: str) -> Version:
    return Version(release)


def replacement(message: str) -> str:
    """The jax name a deprecation message tells you to use instead, or ""."""
    m = _USE.search(message)
    return m.group(1) if m else ""


def build(columns: dict[str, dict[str, ModuleApi]], pkg: str = "jax") -> dict:
    """The timeline from per-release exports (``{version: {module: ModuleApi}}``)."""
    releases = sorted(columns, key=Version)
    all_mods = sorted({m for col in columns.values() for m in col if is_public(m)})
    modules: dict[str, dict] = {}
    names: dict[str, dict] = {}
    ever_gone = {m for m in all_mods if any(m not in columns[r] for r in releases)}
    for mod in all_mods:
        events = _compress([(r, PRESENT if mod in columns[r] else GONE) for r in releases])
        rec: dict = {"events": events}
        warns = [(r, columns[r][mod].warns) for r in releases if mod in columns[r] and columns[r][mod].warns]
        if warns:
            rec["deprecated"] = [warns[0][0], warns[-1][1]]
        parent, _, leaf = mod.rpartition(".")
        loaded = [(r, PRESENT if leaf in columns[r][parent].loads else GONE) for r in releases
                  if mod in columns[r] and parent in columns[r]]
        if any(s == PRESENT for _, s in loaded):
            rec["loaded"] = _compress(loaded)
        modules[mod] = rec
        every = sorted({n for r in releases if mod in columns[r] for n in columns[r][mod].names})
        for n in every:
            seq = []
            for r in releases:
                api = columns[r].get(mod)
                if api is None:
                    continue  # the module's own events say it
                state = api.names.get(n)
                if state is None:
                    if f"{mod}.{n}" in columns[r]:
                        state = PRESENT  # a submodule: reachable by importing it
                    elif api.opaque:
                        state = None  # cannot tell: never call it gone
                    else:
                        state = GONE
                if state is not None:
                    seq.append((r, state))
            if {s for _, s in seq} <= {PRESENT} and f"{mod}.{n}" not in ever_gone:
                continue  # never changed (a module that goes keeps its record: is it still an attribute?)
            rec = {"events": _compress(seq)}
            dep = [(r, columns[r][mod].messages[n]) for r, s in seq if s == DEPRECATED]
            rem = [(r, columns[r][mod].messages[n]) for r, s in seq if s == REMOVED]
            if dep:
                rec["deprecated_msg"] = dep[-1][1]
            if rem:
                rec["removed_msg"] = rem[-1][1]
            repl = replacement(rec.get("removed_msg", "")) or replacement(rec.get("deprecated_msg", ""))
            if repl:
                rec["replacement"] = repl
            names.setdefault(mod, {})[n] = rec
    return {"format": FORMAT, "package": pkg, "releases": releases, "modules": modules, "names": names,
            "callables": _callables(columns, releases), "private": _private(columns, releases)}


def _callables(columns: dict[str, dict[str, ModuleApi]], releases: list[str]) -> dict[str, list[list[str]]]:
    """``{"jax.numpy.array": [[release, signature], ...]}`` for every callable whose signature ever
    changed (a release that cannot read it, or lacks it, says nothing: names' events say that)."""
    seqs: dict[str, list[tuple[str, str]]] = {}
    for r in releases:
        classes = set()  # the public classes whose methods this release shows
        for mod, api in columns[r].items():
            for key, sig in api.signatures.items():
                seqs.setdefault(f"{mod}.{key}", []).append((r, sig))
                if "." in key:
                    classes.add(f"{mod}.{key.split('.')[0]}")
        for qual, seq in seqs.items():  # a method its class no longer has: GONE
            cls = qual.rsplit(".", 1)[0]
            if cls in classes and seq[-1][0] != r and seq[-1][1] != GONE:
                seq.append((r, GONE))
    return {q: _compress(seq) for q, seq in sorted(seqs.items()) if len({s for _, s in seq}) > 1}


def _private(columns: dict[str, dict[str, ModuleApi]], releases: list[str]) -> dict[str, dict]:
    """What no API promises, where the wheels show it going: ``{module: {"events": [...], "names":
    {name: [[release, "+"|"-"], ...]}}}``; a private module that went away, or a private name that
    went away from a module that stayed (``jax.lib.xla_bridge._backends``, ``jax._src.core.x``)."""
    out: dict[str, dict] = {}
    mods = sorted({m for col in columns.values() for m, api in col.items() if api.private or not is_public(m)})
    for mod in mods:
        here = [r for r in releases if mod in columns[r]]
        events = _compress([(r, PRESENT if mod in columns[r] else GONE) for r in releases])
        names: dict[str, list[list[str]]] = {}
        every = sorted({n for r in here for n in columns[r][mod].private})
        sets = {r: set(columns[r][mod].private) for r in here}
        for n in every:
            seq = _compress([(r, PRESENT if n in sets[r] else GONE) for r in here])
            if any(s == GONE for _, s in seq[1:]):
                names[n] = seq
        if names or any(s == GONE for _, s in events[1:]):
            rec: dict = {"events": events}
            if names:
                rec["names"] = names
            out[mod] = rec
    return out


def _compress(seq: list[tuple[str, str]]) -> list[list[str]]:
    out: list[list[str]] = []
    for r, s in seq:
        if not out or out[-1][1] != s:
            out.append([r, s])
    return out


# ---------------------------------------------------------------- reading it back


@dataclass(frozen=True)
class State:
    """A module or name at one release."""

    state: str  # PRESENT | DEPRECATED | REMOVED | GONE | "" (not known: never changed, or never seen)
    since: str = ""  # the release it entered this state
    deprecated_in: str = ""
    removed_in: str = ""  # the first release (after ``since``) where it is removed or gone, if any
    message: str = ""
    replacement: str = ""

    @property
    def broken(self) -> bool:
        return self.state in (REMOVED, GONE)


class Timeline:
    def __init__(self, data: dict):
        self.package: str = data.get("package", "jax")
        if data.get("format") != FORMAT:
            raise ValueError(f"{self.package} API timeline: format {data.get('format')!r}, expected {FORMAT} "
                             "(fix: regenerate it with `nox -s timeline`)")
        self.releases: list[str] = data["releases"]
        self.modules: dict[str, dict] = data["modules"]
        self.names: dict[str, dict[str, dict]] = data["names"]
        self.callables: dict[str, list[list[str]]] = data.get("callables", {})
        self.private: dict[str, dict] = data.get("private", {})
        self._v = [Version(r) for r in self.releases]

    @classmethod
    @lru_cache(maxsize=4)
    def load(cls, path: Path = DATA) -> Timeline:
        """The timeline file at ``path`` (default: jax's; ``PACKAGES[pkg][1]`` for another)."""
        return cls(json.loads(Path(path).read_text(encoding="utf-8")))

    @property
    def newest(self) -> str:
        return self.releases[-1]

    def release(self, spec: str) -> str:
        """The release a ``--jax`` value names: ``0.10.0``, ``jax==0.10.0``, ``>=0.9,<0.10``, ``latest``."""
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        pkg = self.package
        s = spec.strip().removeprefix(pkg).strip()
        if s in ("", "latest"):
            return self.newest
        try:
            Version(s)
            s = "==" + s
        except InvalidVersion:
            pass
        try:
            spec_set = SpecifierSet(s)
        except InvalidSpecifier:
            raise ValueError(f"--{pkg} {spec!r}: not a {pkg} version or specifier (e.g. 0.10.0, '>=0.9')") from None
        ok = [r for r in self.releases if Version(r) in spec_set]
        if not ok:
            if s.startswith("==") and Version(s[2:]) > self._v[-1]:
                raise ValueError(f"--{pkg} {spec}: newer than the timeline's newest release {self.newest} "
                                 "(fix: regenerate it with `nox -s timeline`)")
            raise ValueError(f"--{pkg} {spec}: no {pkg} release from {self.releases[0]} to {self.newest} matches")
        return ok[-1]

    def _at(self, events: list[list[str]], release: str) -> tuple[str, str]:
        v = ver(release)
        cur = ("", "")
        for r, s in events:
            if ver(r) <= v:
                cur = (s, r)
            else:
                break
        return cur

    def module(self, mod: str, release: str) -> State:
        rec = self.modules.get(mod)
        if rec is None:
            return State("")
        state, since = self._at(rec["events"], release)
        removed = self._first_after(rec["events"], release, (GONE,)) if state != GONE else since
        parent, _, leaf = mod.rpartition(".")
        via_parent = self.names.get(parent, {}).get(leaf, {})  # jax.lib's table may say why it went
        msg = via_parent.get("removed_msg", "") if state == GONE else rec.get("deprecated", ["", ""])[1]
        dep = rec.get("deprecated", [""])[0] or self._first(via_parent.get("events", []), DEPRECATED)
        if state == PRESENT and rec.get("deprecated") and ver(rec["deprecated"][0]) <= ver(release):
            state = DEPRECATED
        return State(state, since, deprecated_in=dep, removed_in=removed, message=msg,
                     replacement=replacement(msg) or via_parent.get("replacement", ""))

    def name(self, mod: str, name: str, release: str) -> State:
        rec = self.names.get(mod, {}).get(name)
        if rec is None:
            return State("")
        state, since = self._at(rec["events"], release)
        if not state:
            return State("")
        removed = (self._broken_since(rec["events"], release) if state in (REMOVED, GONE)
                   else self._first_after(rec["events"], release, (REMOVED, GONE)))
        msg = rec.get("removed_msg", "") if state in (REMOVED, GONE) else rec.get("deprecated_msg", "")
        return State(state, since, deprecated_in=self._first(rec["events"], DEPRECATED), removed_in=removed,
                     message=msg or rec.get("deprecated_msg", ""), replacement=rec.get("replacement", ""))

    @staticmethod
    def _broken_since(events: list[list[str]], release: str) -> str:
        """The first release of the unbroken run of removed/gone states that ``release`` is in."""
        v, start = ver(release), ""
        for r, s in events:
            if ver(r) > v:
                break
            start = (start or r) if s in (REMOVED, GONE) else ""
        return start

    @staticmethod
    def _first(events: list[list[str]], state: str) -> str:
        return next((r for r, s in events if s == state), "")

    def _first_after(self, events: list[list[str]], release: str, states: tuple[str, ...]) -> str:
        v = ver(release)
        return next((r for r, s in events if ver(r) > v and s in states), "")

    def signature(self, qual: str, release: str) -> Params | None:
        """The parameters of ``qual`` (``jax.numpy.array``, ``jax.Array.reshape``) at ``release``,
        for a callable whose signature ever changed; None when the timeline has no reading."""
        events = self.callables.get(qual)
        if not events:
            return None
        sig, since = self._at(events, release)
        return Params.parse(sig) if since and sig != GONE else None

    def signature_history(self, qual: str) -> list[tuple[str, Params]]:
        return [(r, Params.parse(s)) for r, s in self.callables.get(qual, []) if s != GONE]

    def method_gone(self, qual: str, release: str) -> str:
        """The release from which the method ``qual`` (``jax.core.ShapedArray.lo_ty``) is gone from
        its class, as of ``release``; "" while it is there, or unknown."""
        sig, since = self._at(self.callables.get(qual, []), release)
        return since if sig == GONE else ""

    def private_gone(self, dotted: str, release: str) -> str:
        """The release from which the private module or name ``dotted`` (``jax._src.x``,
        ``jax.lib.xla_bridge._backends``) is gone, as of ``release``; "" while it is there or unknown."""
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            mod = ".".join(parts[:i])
            rec = self.private.get(mod)
            if rec is None:
                continue
            state, since = self._at(rec["events"], release)
            if state == GONE:
                return since
            if i < len(parts) and parts[i] in rec.get("names", {}):
                state, since = self._at(rec["names"][parts[i]], release)
                return since if state == GONE else ""
            return ""
        return ""

    def is_module(self, dotted: str) -> bool:
        return dotted in self.modules

    def loaded_with_parent(self, mod: str, release: str) -> bool:
        """Does importing ``mod``'s package surely import ``mod`` at ``release`` (``import jax``:
        ``jax.tree``, not ``jax.extend``)?"""
        state, _ = self._at(self.modules.get(mod, {}).get("loaded", []), release)
        return state == PRESENT

    def split(self, dotted: str, release: str = "") -> tuple[str, list[str]]:
        """The longest known module prefix of a dotted name (with ``release``: of the modules there
        at that release: ``jax.config`` went in 0.4.29, an attribute of ``jax`` from then on), and
        the rest."""
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            mod = ".".join(parts[:i])
            if mod in self.modules and not (release and self.module(mod, release).state == GONE):
                return mod, parts[i:]
        return "", parts


# ---------------------------------------------------------------- regenerating


def pypi_releases(cache: Path, first: Version = FIRST, pkg: str = "jax") -> list[str]:
    """Every final release of ``pkg`` from ``first`` on, from the index's own listing (the one client
    the tool uses: every release is listed, whatever Python this host runs; `pip index versions`
    hid those that require a newer Python)."""
    return [v for v in released_versions(pkg, cache, refresh=True) if Version(v) >= first]


def archive_for(version: str, wheels: Path, pkg: str = "jax") -> Path:
    """The release's wheel (or, for a release without one, its sdist), downloaded once."""
    def found() -> Path | None:
        for pat in (f"{pkg}-{version}-py3-none-any.whl", f"{pkg}-{version}.tar.gz"):
            hits = list(wheels.glob(pat))
            if hits:
                return hits[0]
        return None

    hit = found()
    if hit is None:
        # the wheels are pure Python (py3-none-any) and read as text: any Python reads any release
        name, blob = resolution.download(pkg, version, wheels.parent)
        write_bytes(wheels / name, blob)
        hit = found()
        if hit is None:
            raise RuntimeError(f"the index gave {name} for {pkg} {version}, neither its wheel nor its sdist")
    return hit


def _column_path(version: str, cache: Path, pkg: str = "jax") -> Path:
    prefix = "" if pkg == "jax" else f"{pkg}-"  # jax's columns keep the names they always had
    return cache / "columns" / f"{prefix}{version}-f{FORMAT}.json"  # only a release that parsed whole is kept


def column(version: str, cache: Path, pkg: str = "jax") -> dict[str, ModuleApi]:
    """One release's exports, read once and kept as JSON beside the wheels."""
    path = _column_path(version, cache, pkg)
    if path.is_file():
        return {m: ModuleApi.from_dict(d) for m, d in json.loads(path.read_text(encoding="utf-8")).items()}
    col = read_release(archive_for(version, cache / "wheels", pkg), pkg)
    write_text(path, json.dumps({m: a.to_dict() for m, a in col.items()}, sort_keys=True))
    return col


def regenerate(cache: Path, out: Path | None = None, releases: list[str] | None = None, progress=quiet,
               pkg: str = "jax") -> dict:
    t0 = time.perf_counter()
    first, default_out = PACKAGES[pkg]
    out = out or default_out
    releases = releases or pypi_releases(cache, first, pkg)
    todo = [r for r in releases if not _column_path(r, cache, pkg).is_file()]
    for r in todo:
        archive_for(r, cache / "wheels", pkg)  # downloads one at a time: the index is asked politely
    columns = {}
    if len(todo) > 1:  # reading is CPU-bound: one process per core
        with ProcessPoolExecutor(max_workers=min(len(todo), os.cpu_count() or 1)) as pool:
            for r, _ in zip(todo, pool.map(column, todo, [cache] * len(todo), [pkg] * len(todo)), strict=True):
                progress(f"read {pkg} {r}")
    for r in releases:
        columns[r] = column(r, cache, pkg)
    data = build(columns, pkg)
    text = json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n"
    write_text(out, text)
    n_names = sum(len(v) for v in data["names"].values())
    progress(f"{out.name}: {len(releases)} releases ({releases[0]}–{releases[-1]}), {len(data['modules'])} modules, "
             f"{n_names} changed names, {len(data['callables'])} changed signatures, {len(text) / 1024:.0f} KiB, "
             f"in {time.perf_counter() - t0:.1f}s")
    return data


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m jaxcompat.apihistory.apitimeline", description=__doc__.split("\n")[0])
    p.add_argument("--cache", default=str(Path.home() / ".cache" / "jax-compat" / "jax-api"),
                   help="where wheels and per-release columns are kept (default: %(default)s)")
    p.add_argument("--package", choices=sorted(PACKAGES), action="append",
                   help="whose API history (repeatable; default: every one: jax, equinox)")
    p.add_argument("--out", help="the timeline file (default: the package's own, jaxcompat/data/PKG_api_timeline.json)")
    p.add_argument("--release", action="append", help="only these releases (default: every one on the index)")
    args = p.parse_args(argv)
    pkgs = args.package or sorted(PACKAGES, key=lambda k: k != "jax")
    if (args.out or args.release) and len(pkgs) > 1:
        p.error("--out and --release need one --package")
    for pkg in pkgs:
        regenerate(Path(args.cache), Path(args.out) if args.out else None, args.release, progress=print, pkg=pkg)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""JXC001 jax-api-removed: a jax name in use is removed at the target release.

Removed: ``None`` in its module's ``_deprecations`` table, gone from its module, or its whole
module gone; said with the release that removed it, the one that deprecated it and what to use
instead (and when that replacement was removed in turn). Its fix, shared with JXC002: a plain
rename (the same object under a new name that exists at the target: ``jax.tree_map`` →
``jax.tree.map``, ``from jax import tree_map`` → ``from jax.tree import map as tree_map``),
adding the import the new chain needs at the target (``import jax``, or a submodule its package
does not import: ``import jax.extend.core`` for ``jax.extend.core.Primitive``) just before the
module-level import it hangs from, so that it runs exactly when that one does; withheld, and said
why, where there is none. The import of a module that moved whole and is gone at the target is
rewritten to the new module (``import jax.extend.ffi`` → ``import jax.ffi``) when the file needs
nothing more of it.
"""

from __future__ import annotations

import ast

from jaxcompat.apihistory.apitimeline import GONE, PRESENT, State, Timeline
from jaxcompat.apihistory.scanfix import Edit, Replace, Several, SplitImport, insert_before, segment
from jaxcompat.apihistory.scanlookup import Hit, is_rename, resolve
from jaxcompat.apihistory.scanrules.rule import Rule
from jaxcompat.model.scan import Target
from jaxcompat.model.vocab import FindingLevel

RULE = Rule("JXC001", "jax-api-removed", FindingLevel.ERROR, "A jax name in use is removed at the target jax release.",
            fix="a plain rename to a name present at the target")


def applies(hit: Hit) -> bool:
    return hit.state.broken


def use_instead(hit: Hit, target: Target, timeline: Timeline) -> str:
    """What the message says to use instead (also when that replacement went in its turn)."""
    st, pkg = hit.state, timeline.package
    use = f": use {st.replacement}" if st.replacement else ""
    gone = resolve(timeline, st.replacement, target.release) if st.replacement else None
    if gone is not None and gone.state.broken:  # the replacement one release gave, the next removed
        then = gone.state.replacement
        use = (f"; its replacement {st.replacement} was removed too, in {pkg} {gone.state.removed_in}"
               + (f": use {then}" if then and then != hit.name else ""))
    return use


def message(hit: Hit, target: Target, timeline: Timeline) -> str:
    """The finding's text, with the real figures from the timeline."""
    st, pkg = hit.state, timeline.package
    kind = "module " if hit.is_module else ""
    use = use_instead(hit, target, timeline)
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
    return text


def _before(hit: Hit, release: str, timeline: Timeline) -> State:
    if hit.is_module:
        return timeline.module(hit.name, release)
    mod, _, leaf = hit.name.rpartition(".")
    return timeline.name(mod, leaf, release)


def _clip(s: str, n: int = 160) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


# ---------------------------------------------------------------- the fix: a plain rename


def usable(f, hit: Hit) -> tuple[str, str]:
    """The replacement a rename writes, or "" and why not (when there is a rename to speak of)."""
    new = hit.state.replacement
    if not new or not is_rename(hit.name, new) or resolve(f.timeline, new, f.target.release):
        return "", ""
    new_mod, _ = f.timeline.split(new, f.target.release)
    was, _ = f.timeline.split(new)
    if was != new_mod:  # `jax.config`: a module once, now an attribute of jax (an object, not that module)
        return "", (f"{was} is no module in {f.pkg} {f.target.release} (an attribute of {f.pkg} there): "
                    f"{new} may not be what {hit.name} was")
    return (new, "") if new_mod else ("", "")


def chain_edit(f, node, root_name: ast.Name, root: str, hit: Hit) -> tuple[Edit | None, str]:
    """The rename of the chain ``node`` (``root_name`` bound to ``root``), with the import the new
    chain needs at the target (``import jax`` where the module has none at its top level; a
    submodule its package does not import: ``import jax.extend.core``); or None, and why when the
    rename exists but cannot be made to run."""
    new, why = usable(f, hit)
    kept = next((m for m in f.kept_gone if hit.name == m or hit.name.startswith(m + ".")), "")
    if new and kept:  # the file would still fail at that import: the rename alone would not make it run
        return None, f"the file would still fail at its import of {kept}, which is left as it is (see its finding)"
    old = segment(f.lines, node)
    if not new or old != root_name.id + hit.name[len(root):]:
        return None, why  # nothing to rename to, or a chain spelled over comments or lines: left as it is
    binds = False  # the import added must bind `jax` too
    if new.startswith(root + "."):
        written, need = root_name.id + new[len(root):], missing(f, root, new, node.lineno)
    else:
        local = next((k for k, v in f.aliases.items() if v == f.pkg and f.scopes.module_jax.get(k)
                      and f.scopes.lookup(root_name, k) and bound_above(f, k, node)), None)
        if local is not None:
            written, need = local + new[len(f.pkg):], missing(f, f.pkg, new, node.lineno)
        elif f.scopes.module_jax.get(f.pkg) is not False and f.scopes.lookup(root_name, f.pkg):
            # no `import jax` that surely ran above the use (none, a later one, one under `if TYPE_CHECKING:`)
            written, need, binds = new, missing(f, f.pkg, new, node.lineno) or f.pkg, True
        else:
            return None, ""
    rename = Replace(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset, written, old)
    if not need:
        return rename, ""
    sites = import_sites(f, root_name.id)
    if not sites or f.scopes.module_jax.get(f.pkg) is False:  # the import would bind `jax` over something else
        return None, (f"{new} needs `import {need}`, which the fix adds only beside a module-level import of "
                      f"{root_name.id}: add it by hand")
    if not binds:  # an import there that imports it already needs none beside it
        sites = [s for s in sites if not any(n == need or n.startswith(need + ".") for n in _imported(s))]
    return Several((*(insert_before(f.lines, s, f"import {need}") for s in sites), rename)), ""


def bound_above(f, name: str, node) -> bool:
    """Is ``name`` bound to the package by an ``import`` at the module's top level (in no ``if``,
    ``try`` or function) that ends before ``node`` starts, and bound to nothing else between?"""
    bound = False
    for st in f.tree.body if f.tree else ():
        if (st.end_lineno or st.lineno, st.end_col_offset or 0) > (node.lineno, node.col_offset):
            break
        if type(st) is ast.Import and any((a.asname or a.name.split(".")[0]) == name for a in st.names):
            a = [a for a in st.names if (a.asname or a.name.split(".")[0]) == name][-1]
            bound = a.name == f.pkg if a.asname else a.name.split(".")[0] == f.pkg
        elif any(_binds(x, name) for x in ast.walk(st)):
            bound = False  # anything else that may bind it (conservative: a function's own local too)
    return bound


def _binds(x: ast.AST, name: str) -> bool:
    if type(x) is ast.Name:
        return x.id == name and type(x.ctx) is not ast.Load
    if type(x) in (ast.Import, ast.ImportFrom):
        return any((a.asname or a.name.split(".")[0]) == name for a in x.names)
    return getattr(x, "name", None) == name or name in getattr(x, "names", ())  # def, class, except, global


def missing(f, base: str, new: str, line: int) -> str:
    """The module to import so that ``new``, reached from the module ``base`` that a name is bound
    to, resolves at the target; "" when every module on the way is imported already: by its
    package's own import (the timeline says so), or by an import at the module's top level above
    ``line``."""
    new_mod, _ = f.timeline.split(new, f.target.release)
    if not new_mod.startswith(base + "."):
        return ""
    mod = base
    for part in new_mod[len(base) + 1:].split("."):
        mod = f"{mod}.{part}"
        if not (f.timeline.loaded_with_parent(mod, f.target.release) or _imports_above(f, mod, line)):
            return new_mod
    return ""


def _imports_above(f, mod: str, line: int) -> bool:
    """Does a statement at the module's top level, ending above ``line``, import ``mod``?"""
    for st in f.tree.body if f.tree else ():
        if (st.end_lineno or st.lineno) >= line:
            break
        if any(n == mod or n.startswith(mod + ".") for n in _imported(st)):
            return True
    return False


def _imported(st: ast.stmt) -> list[str]:
    """The modules an import statement may import (``from M import x``: ``M`` and ``M.x``)."""
    if type(st) is ast.Import:
        return [a.name for a in st.names]
    if type(st) is ast.ImportFrom and not st.level and st.module:
        return [st.module, *(f"{st.module}.{a.name}" for a in st.names)]
    return []


def import_sites(f, name: str) -> list[ast.stmt]:
    """The jax imports that bind ``name`` at the module's level (in its ``if``/``try``/``with``
    blocks too, not in functions or classes, nor only for type checkers): where an import the
    fix needs goes, so that it runs exactly when they do."""
    out, todo = [], list(f.tree.body if f.tree else ())
    while todo:
        st = todo.pop()
        if type(st) in (ast.Import, ast.ImportFrom):
            if (f.is_jax_import(st) and any((a.asname or a.name.split(".")[0]) == name for a in st.names)
                    and not f.guards.under_type_checking(st.lineno)):
                out.append(st)
        elif not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            todo += [c for c in ast.iter_child_nodes(st) if isinstance(c, ast.stmt)]
            todo += [c for h in getattr(st, "handlers", ()) for c in h.body]
            todo += [c for case in getattr(st, "cases", ()) for c in case.body]
    return sorted(out, key=lambda st: st.lineno)


MODULE_MOVED = "imports of a moved module are left to you: not every name it is used for may have moved"


def moved_import_edit(f, node: ast.Import | ast.ImportFrom, a: ast.alias | None, hit: Hit) -> tuple[Edit | None, str]:
    """An import of a module gone at the target that moved whole (a plain rename to a module there:
    ``jax.extend.ffi`` → ``jax.ffi``), rewritten in its place: ``import OLD [as m]`` (``a``, one
    name of the statement) → ``import NEW [as m]``, ``from OLD import x, y as z`` → ``from NEW
    import x, y as z``; only when nothing in the file needs more than the new import gives (see
    :func:`unmoved_use`). Else None and why (the old import fails at the target either way)."""
    if not (hit.is_module and hit.state.replacement):
        return None, ""
    new, why = usable(f, hit) if hit.state.broken and f.tree is not None else ("", "")
    if not new or f.timeline.module(new, f.target.release).state != PRESENT:
        return None, why or MODULE_MOVED
    if a is not None:
        span, old = a, a.name + (f" as {a.asname}" if a.asname else "")
        text = new + old[len(a.name):]
        why = unmoved_use(f, hit.name, new, a.asname, [])
    else:
        span, clause = node, ", ".join(x.name + (f" as {x.asname}" if x.asname else "") for x in node.names)
        old, text = f"from {hit.name} import {clause}", f"from {new} import {clause}"
        why = unmoved_use(f, hit.name, new, None, [x.name for x in node.names])
    if span.lineno != span.end_lineno or segment(f.lines, span) != old:
        return None, MODULE_MOVED  # spelled over lines or with comments: left as it is
    if why:
        return None, f"the import of {hit.name} is left to you: {why}"
    return Replace(span.lineno, span.col_offset, span.end_lineno, span.end_col_offset, text, old), ""


def unmoved_use(f, old: str, new: str, local: str | None, imported: list[str]) -> str:
    """What in the file would fail once the import of module ``old`` imports ``new`` instead
    ("" when nothing): a name of ``old`` (``imported`` from it, or used through a chain) that did
    not move to ``new``; the module ``old`` itself bound to ``local`` and used bare; a package the
    old import imported on the way (``jax.extend``, which ``import jax`` does not import) used
    anywhere in the file."""
    release, tl = f.target.release, f.timeline
    parts = old.split(".")
    way = [".".join(parts[:i]) for i in range(2, len(parts))]
    way = [p for p in way if not new.startswith(p + ".")
           and not all(tl.loaded_with_parent(".".join(parts[:j]), release) for j in range(2, p.count(".") + 2))]

    def moved(name: str) -> bool:
        st = tl.name(old, name, release)
        return st.replacement == f"{new}.{name}" and resolve(tl, st.replacement, release) is None

    lost = [n for n in imported if not moved(n)]
    if lost:
        return f"{old}.{lost[0]} did not move to {new}"
    chains = [n for n in ast.walk(f.tree) if type(n) is ast.Attribute]
    inner, roots = {id(n.value) for n in chains}, set()
    for node in chains:
        names, cur = [], node
        while type(cur) is ast.Attribute:
            names.append(cur.attr)
            cur = cur.value
        if id(node) in inner or type(cur) is not ast.Name or cur.id not in f.aliases:
            continue
        roots.add(id(cur))
        dotted = ".".join([f.aliases[cur.id], *names[::-1]])
        if dotted.startswith(old + "."):
            name = dotted[len(old) + 1:].split(".")[0]
            if not moved(name):
                return f"{old}.{name} did not move to {new}"
        elif next((p for p in way if dotted == p or dotted.startswith(p + ".")), None):
            return f"the file uses {dotted}, which `import {old}` imports on the way and `import {new}` does not"
    bare = next((n for n in ast.walk(f.tree) if type(n) is ast.Name and local and n.id == local
                 and id(n) not in roots and type(n.ctx) is ast.Load), None)
    return f"{local} is used as the module {old} itself (line {bare.lineno})" if bare else ""


def import_edit(f, node: ast.ImportFrom, a: ast.alias, hit: Hit) -> tuple[Edit | None, str]:
    """The rename of one name a ``from`` import binds; or None, and why when the rename cannot be made."""
    new, why = usable(f, hit)
    if not new or node.lineno != node.end_lineno:
        return None, why
    new_mod, rest = f.timeline.split(new, f.target.release)
    if not rest:  # a module: `from jax.lib import xla_client`
        new_mod, _, leaf = new.rpartition(".")
        rest = [leaf]
    if len(rest) != 1 or new_mod == "jax" and rest[0] in ("numpy",):
        return None, ""
    local = a.asname or a.name
    clause = rest[0] if local == rest[0] and not a.asname else f"{rest[0]} as {local}"  # `as X` kept: a re-export
    if len(node.names) == 1:
        return Replace(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset,
                       f"from {new_mod} import {clause}", segment(f.lines, node)), ""
    # several names in one statement: this one moves to a statement of its own after it
    return SplitImport(node, a, f"from {new_mod} import {clause}"), ""

"""JXC001 jax-api-removed: a jax name in use is removed at the target release.

Removed: ``None`` in its module's ``_deprecations`` table, gone from its module, or its whole
module gone; said with the release that removed it, the one that deprecated it and what to use
instead (and when that replacement was removed in turn). Its fix, shared with JXC002: a plain
rename (the same object under a new name that exists at the target: ``jax.tree_map`` →
``jax.tree.map``, ``from jax import tree_map`` → ``from jax.tree import map as tree_map``),
adding ``import jax`` at the module's top where the new name needs it.
"""

from __future__ import annotations

import ast
import re

from jaxcompat.apihistory.apitimeline import GONE, State, Timeline
from jaxcompat.apihistory.scanfix import Edit, Replace, Several, SplitImport, line_break, segment
from jaxcompat.apihistory.scanlookup import Hit, is_rename, resolve
from jaxcompat.apihistory.scanrules.rule import Rule
from jaxcompat.model.scan import Target
from jaxcompat.model.vocab import FindingLevel

RULE = Rule("JXC001", "jax-api-removed", FindingLevel.ERROR, "A jax name in use is removed at the target jax release.",
            fix="a plain rename to a name present at the target")
_MUST_IMPORT = re.compile(r"import (jax(?:\.\w+)+)` explicitly")


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


def usable(f, hit: Hit) -> str:
    new = hit.state.replacement
    if not new or not is_rename(hit.name, new) or resolve(f.timeline, new, f.target.release):
        return ""
    must = _MUST_IMPORT.search(hit.state.message)
    if must and must.group(1) not in f.imported:
        return ""  # jax says the new home must be imported explicitly: left to the user
    new_mod, _ = f.timeline.split(new)
    if not new_mod or f.timeline.module(new_mod, f.target.release).broken:
        return ""
    return new


def chain_edit(f, node, root_name: ast.Name, root: str, hit: Hit) -> Edit | None:
    new = usable(f, hit)
    old = segment(f.lines, node)
    if not new or old != root_name.id + hit.name[len(root):]:
        return None  # nothing to rename to, or a chain spelled over comments or lines: left as it is
    if new.startswith(root + "."):
        return Replace(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset,
                       root_name.id + new[len(root):], old)
    local = next((k for k, v in f.aliases.items() if v == f.pkg and f.scopes.module_jax.get(k)
                  and f.scopes.lookup(root_name, k)), None)
    if local is not None:
        return Replace(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset,
                       local + new[len(f.pkg):], old)
    added = import_added(f)  # no `import jax` at module level: the fix adds one
    if added is None or not f.scopes.lookup(root_name, f.pkg):
        return None
    return Several((added, Replace(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset,
                                   new, old)))


def import_added(f) -> Replace | None:
    """``import jax`` on a line of its own above the module's first import (after
    ``from __future__``), or None when the module has no import at its top level."""
    first = next((n for n in (f.tree.body if f.tree else ()) if type(n) in (ast.Import, ast.ImportFrom)
                  and getattr(n, "module", None) != "__future__"), None)
    if first is None or first.col_offset:
        return None
    brk = line_break(f.lines[first.lineno - 1])
    return Replace(first.lineno, 0, first.lineno, 0, f"import {f.pkg}{brk}")


def import_edit(f, node: ast.ImportFrom, a: ast.alias, hit: Hit) -> Edit | None:
    new = usable(f, hit)
    if not new or node.lineno != node.end_lineno:
        return None
    new_mod, rest = f.timeline.split(new)
    if len(rest) != 1 or new_mod == "jax" and rest[0] in ("numpy",):
        return None
    local = a.asname or a.name
    clause = rest[0] if local == rest[0] else f"{rest[0]} as {local}"
    if len(node.names) == 1:
        return Replace(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset,
                       f"from {new_mod} import {clause}", segment(f.lines, node))
    # several names on one line: this one moves to a line of its own below
    return SplitImport(node, a, f"from {new_mod} import {clause}")

"""JXC006 jax-call-deprecated: a call the target accepts with a DeprecationWarning.

Positional arguments that named parameters took before now land in a deprecation shim's
``*args``; said with the release that turns the call into a ``TypeError``. Its fix: ``name=``
written before each of those arguments, nothing else touched.
"""

from __future__ import annotations

import ast

from jaxcompat.apihistory.scanfix import Edit, Replace, Several
from jaxcompat.apihistory.scanrules.calls import CallSite, kw_list, slot_names
from jaxcompat.apihistory.scanrules.rule import Rule
from jaxcompat.model.vocab import FindingLevel

RULE = Rule("JXC006", "jax-call-deprecated", FindingLevel.WARNING,
            "A call the target accepts with a DeprecationWarning: an argument by position that jax is making "
            "keyword-only.", fix="name= before the arguments by position")


def shimmed(dotted: str, c: CallSite, upto: list, named: int, after: list) -> tuple[str, str, Edit | None] | None:
    """Positional arguments that named parameters took before now land in a deprecation shim's *args."""
    pkg, now = dotted.split(".")[0], upto[-1][1]
    first = len(now.slots)
    moved = slot_names(upto[named][1], first, c.n_pos)
    if not moved or not all(m in now.names() for m in moved):
        return None
    since = upto[named + 1][0]
    later = next((r for r, p in after if not c.bind(p).ok), "")
    fails = f"; a TypeError from {pkg} {later}" if later else ""
    text = (f"{dotted}: {', '.join(moved)} passed by position is deprecated since {pkg} {since} "
            f"(a DeprecationWarning{fails}): pass {kw_list(moved)} by keyword")
    return RULE.code, text, by_keyword(c, first, moved)


def by_keyword(c: CallSite, first: int, names: list[str]) -> Edit | None:
    """``name=`` written before each of these positional arguments, nothing else touched."""
    call = c.node
    args = call.args[first:first + len(names)]
    if len(args) != len(names) or any(type(a) is ast.Starred for a in args) or call.keywords and any(
            (k.lineno, k.col_offset) < (args[-1].lineno, args[-1].col_offset) for k in call.keywords):
        return None
    return Several(tuple(Replace(a.lineno, a.col_offset, a.lineno, a.col_offset, f"{n}=")
                         for n, a in zip(names, args, strict=True)))

"""JXC003 jax-call-rejected: a call that the target release's signature rejects.

As Python would decide it from the call site: an argument by position that is keyword-only now, a
keyword removed or renamed (the name the release that broke the call put in its place, followed
through later renames), a newly required parameter, or the new spelling on an older release. A
call is judged only where some release bound it for sure (not by handing an unknown keyword to
``**kwargs``). Its fixes: ``name=`` before the arguments that went keyword-only (JXC006's), the
renamed keyword.
"""

from __future__ import annotations

import ast

from jaxcompat.apihistory.apitimeline import ver
from jaxcompat.apihistory.scanfix import Edit, Replace
from jaxcompat.apihistory.scanrules.calls import CallSite, binds_at, kw_list, pretty, slot_names
from jaxcompat.apihistory.scanrules.jxc006 import by_keyword, shimmed
from jaxcompat.apihistory.scanrules.rule import Rule
from jaxcompat.apihistory.signatures import Params
from jaxcompat.model.scan import Target
from jaxcompat.model.vocab import BindProblem, FindingLevel

RULE = Rule("JXC003", "jax-call-rejected", FindingLevel.ERROR,
            "A call that the target release's signature rejects: an argument by position that is keyword-only "
            "now, a keyword removed or renamed, a newly required parameter.",
            fix="name= before arguments by position that went keyword-only; a renamed keyword")


def judge_call(dotted: str, hist: list[tuple[str, Params]], target: Target, call: ast.Call,
               source: str) -> tuple[str, str, Edit | None] | None:
    """(code, message, fix) for a call of a jax callable whose signature changed, or None when the
    target binds it as before. A call is only judged where some release in the history bound it
    (a call that never bound anywhere is the reader's blind spot or the user's own bug: not ours)."""
    c = CallSite.of(call, source)
    upto = [(r, p) for r, p in hist if ver(r) <= ver(target.release)]
    if not upto:
        return None
    binds = [c.bind(p) for _, p in upto]
    named = next((i for i in range(len(upto) - 1, -1, -1) if binds[i].ok and not binds[i].into_varargs), None)
    after = [(r, p) for r, p in hist if ver(r) > ver(target.release)]
    if binds[-1].ok:
        if not binds[-1].into_varargs or named is None:
            return None
        return shimmed(dotted, c, upto, named, after)
    # a release where the call bound for sure: not by handing an unknown keyword to **kwargs
    ok = next((i for i in range(len(upto) - 2, -1, -1) if binds[i].ok and not binds[i].into_varkw), None)
    if ok is None:
        return _never_bound(dotted, c, binds[-1], upto[-1][1], target, after)
    text, edit = _broken(dotted, c, upto, binds, ok, named)
    if text is None:
        return None
    pkg = dotted.split(".")[0]
    text = f"{dotted}: {text}; its parameters at {pkg} {target.release}: {pretty(upto[-1][1])}"
    if target.before and not binds_at(hist, target.before, c):
        text += f" (already failing in {pkg} {target.before})"
    return RULE.code, text, edit


def _never_bound(dotted: str, c: CallSite, b, now: Params, target: Target, after: list):
    pkg = dotted.split(".")[0]
    later = next((r for r, p in after if (x := c.bind(p)).ok and not x.into_varkw), "")
    if not later:
        return None  # never bound in any release we read: not a change of jax's
    return RULE.code, (f"{dotted}: this call is accepted only from {pkg} {later} ({b.problem}"
                       f"{' ' + b.name if b.name else ''} at {pkg} {target.release}); "
                       f"its parameters at {pkg} {target.release}: {pretty(now)}"), None


def _broken(dotted: str, c: CallSite, upto: list, binds: list, ok: int, named: int | None):
    """What the target rejects of a call that bound at ``upto[ok]``, and its fix where it has one."""
    pkg, now = dotted.split(".")[0], upto[-1][1]
    broke, was = upto[ok + 1][0], upto[ok][1]
    b = binds[-1]
    if b.problem is BindProblem.TOO_MANY_POSITIONAL:
        ref = upto[named][1] if named is not None else was
        moved = slot_names(ref, b.index, c.n_pos)
        if not moved or len(moved) != c.n_pos - b.index:
            return None, None
        kwonly = [m for m in moved if m in {x.name for x in now.kwonly}]
        shim = next((r for (r, p), bd in zip(upto[ok:], binds[ok:], strict=True) if bd.ok and bd.into_varargs), "")
        warned = f" (by position it warned since {pkg} {shim})" if shim else ""
        text = f"{', '.join(moved)} passed by position, keyword-only since {pkg} {broke}{warned}"
        if len(kwonly) == len(moved):
            return text + f": pass {kw_list(moved)} by keyword", by_keyword(c, b.index, moved)
        return text, None
    if b.problem is BindProblem.UNKNOWN_KEYWORD:
        return _unknown_keyword(c, b.name, [p for _, p in upto[ok:]], f"{pkg} {broke}")
    if b.problem is BindProblem.MISSING_REQUIRED:
        return f"{b.name} is required since {pkg} {broke}", None
    if b.problem is BindProblem.POSITIONAL_ONLY_BY_KEYWORD:
        return f"{b.name} is positional-only since {pkg} {broke}: pass it by position", None
    return f"{b.problem} since {pkg} {broke}", None


def _unknown_keyword(c: CallSite, old: str, since: list[Params], when: str):
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

"""What the call rules (JXC003, JXC006) share: a call site's arguments, bound against one
release's signature, and how a signature or a list of names is written in a message."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jaxcompat.apihistory.apitimeline import ver
from jaxcompat.apihistory.signatures import Params


@dataclass(frozen=True)
class CallSite:
    """What a call site shows of its arguments."""

    node: ast.Call
    source: str
    n_pos: int
    kws: list[str]
    star: bool
    dstar: bool

    @classmethod
    def of(cls, call: ast.Call, source: str) -> CallSite:
        return cls(call, source, sum(type(a) is not ast.Starred for a in call.args),
                   [k.arg for k in call.keywords if k.arg], any(type(a) is ast.Starred for a in call.args),
                   any(k.arg is None for k in call.keywords))

    def bind(self, p: Params, kws: list[str] | None = None):
        return p.bind(self.n_pos, self.kws if kws is None else kws, self.star, self.dstar)


def pretty(p: Params) -> str:
    return "(" + p.text().replace(",", ", ").replace("=", "=…") + ")"


def slot_names(p: Params, first: int, last: int) -> list[str]:
    return [x.name for x in p.slots[first:last]]


def kw_list(names: list[str]) -> str:
    return ", ".join(f"{n}=" for n in names)


def binds_at(hist: list[tuple[str, Params]], release: str, c: CallSite) -> bool:
    upto = [p for r, p in hist if ver(r) <= ver(release)]
    return not upto or c.bind(upto[-1]).ok

"""A jax name in use, looked up in the timeline at the target release: what scan's rules and its
walk of a file ask of jax's API history (removed or deprecated on the way from ``jax``,
private, renamed)."""

from __future__ import annotations

from dataclasses import dataclass

from jaxcompat.apihistory.apitimeline import DEPRECATED, GONE, PACKAGES, PRESENT, REMOVED, State, Timeline


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

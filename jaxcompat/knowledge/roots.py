"""Which package a broken test's failure lies in, read from its traceback, and the root causes
across dependents (``model/roots.py``'s records).

The root is the traceback's deepest frame in an installed package other than the test's own
dependent and the test harness (pytest, pluggy, jaxcompat, hypothesis, the standard library): an
error raised in ``site-packages/equinox/…`` in diffrax's tests is equinox's; one raised in
``jax/_src/…`` is jax's (the candidate's, in a jax crater); when only the dependent's own frames are
seen (its checkout, or its own installed package), the dependent broke in its own code. A frame's
path names its package: the folder below ``site-packages`` (or ``dist-packages``), a module file
there, an egg; outside them, the standard library's folder is the harness, and any other path
(an editable install, a checkout) is the first of its folders that names a known package, else the
dependent's own checkout. Import names map to distributions through the side's installed versions
(``ml_dtypes`` -> ``ml-dtypes``), a few known aliases, or else stay the module's name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from jaxcompat._util.text import frames
from jaxcompat.model.roots import Attribution, RootCause
from jaxcompat.plugin.packages import KEY_DISTS

# the test harness: frames in these are how the test ran, never what broke
HARNESS = frozenset({"pytest", "_pytest", "pluggy", "py", "jaxcompat", "hypothesis", "_hypothesis_pytestplugin",
                     "xdist", "pytest_xdist", "typeguard", "beartype", "jaxtyping", "unittest", "coverage",
                     "pytest_cov", "pytest_timeout", "pytest_randomly", "pytest_rerunfailures"})
# jax's transformations carry a call from one package to another (jax.grad(f), jax.jit(f), lax.scan):
# a jax frame between the dependent and the root is the transport, not a package it fails through
CARRIERS = frozenset({"jax", "jaxlib"})
# import name -> distribution, where the two differ by more than "-"/"_"/"." and case
ALIASES = {"sklearn": "scikit-learn", "yaml": "pyyaml", "PIL": "pillow", "attr": "attrs",
           "jax_plugins": "jaxlib", "mpl_toolkits": "matplotlib", "dateutil": "python-dateutil"}
_INSTALLED = re.compile(r"(?:^|/)(?:site|dist)-packages/(?P<rest>.+)$")
_STDLIB = re.compile(r"(?:^|/)lib/(?:python|pypy)\d(?:\.\d+)?/")


def key(name: str) -> str:
    """A distribution's or module's name as compared (PEP 503's normalisation, ``_`` for ``-``)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def known_names(*dists: Iterable[str]) -> dict[str, str]:
    """{normalised import name: distribution} for the distributions given (a side's installed
    versions, the dependent's own name) and the ecosystem's."""
    out = {key(a): d for a, d in ALIASES.items()}
    for names in (KEY_DISTS, *dists):
        out.update({key(d): d for d in names})
    return out


def distribution(module: str, known: dict[str, str]) -> str:
    """The distribution a top-level module belongs to (``jax._src`` -> ``jax``), or the module."""
    top = module.split(".", 1)[0]
    return known.get(key(top), top)


def _installed(rest: str) -> str:
    """The top-level module of a path below site-packages (``equinox/_jit.py`` -> ``equinox``,
    ``typing_extensions.py``, ``foo-1.0-py3.egg/foo/x.py`` -> ``foo``), or "" for metadata."""
    parts = rest.split("/")
    while parts and parts[0].endswith((".egg", ".egg-link")):
        parts = parts[1:]
    if not parts or parts[0].endswith((".dist-info", ".egg-info", ".pth")) or parts[0].startswith("__editable__"):
        return ""
    return parts[0][:-3] if len(parts) == 1 and parts[0].endswith(".py") else parts[0]


def package_of(path: str, dependent: str, known: dict[str, str]) -> str:
    """The distribution a frame's file lies in: ``dependent`` for its own code (its checkout, its
    installed package), "" for the harness and the standard library (and ``<frozen …>`` frames)."""
    path = path.replace("\\", "/")
    m = _INSTALLED.search(path)
    if m:
        top = _installed(m.group("rest"))
        if not top or top in HARNESS:
            return ""
        return distribution(top, known)
    if _STDLIB.search(path) or (path.startswith("<") and not path.startswith("<root>")):
        return ""
    for part in path.split("/")[:-1]:  # an editable install or a checkout: a folder naming a package
        if key(part) in known and part not in HARNESS:
            return known[key(part)]
    return dependent


def attribute(traceback: str, dependent: str, known: dict[str, str] | None = None) -> Attribution:
    """Where one broken test's failure lies (its traceback, outermost frame first); its dependent's
    own code when no frame lies in another package."""
    known = dict(known or known_names())
    known[key(dependent)] = dependent
    pkgs = [package_of(f.path, dependent, known) for f in frames(traceback)]
    at = next((i for i in range(len(pkgs) - 1, -1, -1) if pkgs[i] not in ("", dependent)), None)
    if at is None:
        return Attribution(dependent)
    root = pkgs[at]
    own = max((i for i in range(at) if pkgs[i] == dependent), default=-1)
    through: list[str] = []
    for p in pkgs[own + 1:at]:
        if p not in ("", dependent, root, *through) and p not in CARRIERS:
            through.append(p)
    return Attribution(root, tuple(through))


def rule_package(failure, candidate: Iterable[str] = ()) -> str:
    """The one package a ``[[failure]]`` rule says the failure lies in: the single distribution its
    ranges name besides jax, jaxlib and the candidate's packages ("" when none, or several)."""
    if failure is None:
        return ""
    moved = {key(d) for d in (*CARRIERS, *candidate)}
    named = {key(d) for clause in failure.affects for d in clause} - moved
    return next(iter(named)) if len(named) == 1 else ""


def with_rule(where: Attribution, dependent: str, package: str) -> Attribution:
    """A test's attribution read with its rule's package: where the rule names another package than
    the frames do (jax's traceback filtering hides equinox's own frames, so the deepest frame kept may
    be lineax's that called it), the rule's package is the root, reached through the frames' root; where
    the rule names the dependent itself (equinox's own suite, its frames ending in jax), its own code.
    Also how a group's one root is laid over each of its tests (``package``: the group's root)."""
    if not package or key(package) == key(where.root):
        return where
    if key(package) == key(dependent):
        return Attribution(dependent)
    via = () if key(where.root) == key(dependent) else (*where.through, where.root)
    return Attribution(package, tuple(p for p in via if key(p) != key(package)))


def tree(failures: Iterable[tuple[str, str, Attribution]], candidate: Iterable[str] = ()) -> list[RootCause]:
    """The root causes of (dependent, group key, attribution) for every broken test: one per package,
    with every group and dependent failing in it, the package's own suite counted apart; the widest
    first (most dependents, then most tests)."""
    moved = {key(c) for c in candidate}
    out: dict[str, RootCause] = {}
    for dependent, group, where in failures:
        rc = out.setdefault(where.root, RootCause(where.root, candidate=key(where.root) in moved))
        if group not in rc.groups:
            rc.groups.append(group)
        if dependent == where.root:
            rc.own_tests += 1
            continue
        rc.dependents[dependent] = rc.dependents.get(dependent, 0) + 1
        chains = rc.through.setdefault(dependent, [])
        if where.chain(dependent) not in chains:
            chains.append(where.chain(dependent))
    for rc in out.values():
        rc.dependents = dict(sorted(rc.dependents.items(), key=lambda kv: (-kv[1], kv[0])))
        rc.through = dict(sorted(rc.through.items()))
    return sorted(out.values(), key=lambda r: (-(len(r.dependents) + (r.own_tests > 0)), -r.tests, r.package))

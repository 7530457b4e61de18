"""A failing test explained by jax's API history: the name it used is removed at the installed jax.

Most of what breaks on a jax upgrade is jax removing names. A test that fails with
``AttributeError: module 'jax' has no attribute 'tree_map'``, ``No module named
'jax.lib.xla_bridge'``, ``cannot import name 'safe_map' from 'jax.util'`` or with the message of
a ``_deprecations`` entry whose object is ``None`` is matched against the timeline
(:mod:`jaxcompat.apihistory.apitimeline`) at the installed jax: "jax.tree_map was removed in jax 0.6.0
(deprecated in 0.4.26): use jax.tree.map, used at chex/_src/asserts.py:932". The frame named is
the last one outside jax itself: the user's code or the dependency that used the name.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from jaxcompat._util.text import frames
from jaxcompat.apihistory.apitimeline import Timeline, ver
from jaxcompat.apihistory.scanlookup import Hit, resolve
from jaxcompat.apihistory.scanrules import CALL_CODE, CALL_DEPRECATED_CODE
from jaxcompat.apihistory.scanrules.jxc003 import judge_call, renamed_keyword
from jaxcompat.knowledge.deprecations import apis
from jaxcompat.model.deprecations import History
from jaxcompat.model.scan import InstalledScan, Report, Target
from jaxcompat.model.vocab import FindingLevel, Phase
from jaxcompat.plugin.packages import DEPENDENTS

_NO_ATTR = re.compile(r"module '(jax(?:\.\w+)*)' has no attribute '(\w+)'")
_NO_NAME = re.compile(r"cannot import name '(\w+)' from '(jax(?:\.\w+)*)'")
_NO_MODULE = re.compile(r"No module named '(jax(?:\.\w+)+)'")
_ERRORS = ("AttributeError", "ImportError", "ModuleNotFoundError")


@dataclass(frozen=True)
class Explanation:
    name: str  # the jax name, e.g. jax.lib.xla_bridge
    removed_in: str
    deprecated_in: str
    replacement: str
    where: str  # file:line of the frame that used it ("" when the traceback does not say)

    def text(self) -> str:
        dep = (
            f" (deprecated in {self.deprecated_in})"
            if self.deprecated_in and self.deprecated_in != self.removed_in
            else ""
        )
        use = f": use {self.replacement}" if self.replacement else ""
        at = f", used at {self.where}" if self.where else ""
        return f"{self.name} was removed in jax {self.removed_in}{dep}{use}{at}"


@lru_cache(maxsize=2)
def _by_message(timeline: Timeline) -> dict[str, str]:
    """The removal messages of the ``_deprecations`` tables -> the dotted name they are about."""
    out = {}
    for mod, names in timeline.names.items():
        for name, rec in names.items():
            for key in ("removed_msg", "deprecated_msg"):
                if rec.get(key):
                    out.setdefault(rec[key], f"{mod}.{name}")
    return out


def _named(error_type: str, message: str, timeline: Timeline) -> tuple[str, int] | None:
    """The dotted jax name an error is about, and how many leading parts must be modules."""
    m = _NO_MODULE.search(message)
    if m and error_type in ("ModuleNotFoundError", "ImportError"):
        return m.group(1), m.group(1).count(".") + 1
    m = _NO_NAME.search(message)
    if m:
        return f"{m.group(2)}.{m.group(1)}", m.group(2).count(".") + 1
    m = _NO_ATTR.search(message)
    if m:
        return f"{m.group(1)}.{m.group(2)}", 0
    text = " ".join((message.split(": ", 1)[1] if message.startswith(_ERRORS) else message).split())
    for msg, name in _by_message(timeline).items():  # the table's own message (deprecation_getattr raises it)
        if text.strip().startswith(msg[:120]):
            return name, 0
    return None


def history(api: str, timeline: Timeline | None = None) -> History | None:
    """What jax's API history says of one deprecated jax name (``jax.core.get_aval``): the release
    that deprecated it and the first that no longer has it (None when the history does not know
    the name as deprecated or removed in any release)."""
    timeline = timeline or Timeline.load()
    hit = resolve(timeline, api, timeline.newest)
    if hit is not None and (hit.state.broken or hit.state.deprecated_in):
        st = hit.state
        removed = st.removed_in if st.broken else ""
        return History(deprecated_in=st.deprecated_in, removed_in=removed, newest=timeline.newest,
                       replacement=st.replacement)
    # deprecated once, and back (or never removed) at the newest: ask the release it was deprecated in
    for release in reversed(timeline.releases):
        hit = resolve(timeline, api, release)
        if hit is not None and hit.state.deprecated_in:
            return History(deprecated_in=hit.state.deprecated_in, removed_in=hit.state.removed_in,
                           newest=timeline.newest, replacement=hit.state.replacement)
    return None


def histories(records: list) -> dict[str, History]:
    """For ``knowledge.deprecations.forecast``: each recorded deprecation's API -> its history, so
    the warnings before the break say the release that removes it from the same history as scan
    (``{}`` without a timeline: the messages' own announcements are used)."""
    try:
        timeline = Timeline.load()
    except (OSError, ValueError):
        return {}
    out = {}
    for api in apis(records):
        found = history(api, timeline) if api.startswith("jax.") else None
        if found is not None:
            out[api] = found
    return out


def where(traceback: str) -> str:
    """file:line of the last frame outside jax itself (site-packages paths shortened)."""
    for f in reversed(frames(traceback)):
        p, line = f.path.replace("\\", "/"), f.line
        short = p.split("site-packages/", 1)[-1]
        if short.startswith(("jax/", "jaxlib/")) or short.startswith("<"):
            continue
        return f"{short}:{line}"
    return ""


def explain_removed(error_type: str, message: str, traceback: str, jax_version: str,
                    timeline: Timeline | None = None) -> Explanation | None:
    """Why a test failed, if the reason is a jax name removed at ``jax_version`` (else None)."""
    if error_type not in _ERRORS or not jax_version:
        return None
    timeline = timeline or Timeline.load()
    message = re.sub(r"^\[(setup|teardown|collect|call)\]\s*", "", message or "")
    found = _named(error_type, message, timeline)
    if found is None:
        return None
    try:
        release = timeline.release(jax_version)
    except ValueError:
        return None
    hit: Hit | None = resolve(timeline, found[0], release, modules=found[1])
    if hit is None or not hit.state.broken:
        return None
    st = hit.state
    return Explanation(hit.name, st.removed_in, st.deprecated_in, st.replacement, where(traceback))


_POSITIONAL = re.compile(r"(\w+)\(\) takes (?:from \d+ to |at most |exactly )?(\d+) positional arguments? "
                         r"but (\d+) (?:were|was) given")
_KEYWORD = re.compile(r"(\w+)\(\) got an unexpected keyword argument '(\w+)'")
_MISSING = re.compile(r"(\w+)\(\) missing \d+ required (?:keyword-only |positional )?arguments?: (.*)")


def explain_call(message: str, traceback: str, jax_version: str, timeline: Timeline | None = None) -> str:
    """A ``TypeError`` from calling a jax function with arguments its signature at ``jax_version``
    rejects (an argument by position that became keyword-only, a keyword renamed or removed, a
    newly required parameter), explained from the signatures' history; "" when none fits."""
    timeline = timeline or Timeline.load()
    try:
        release = timeline.release(jax_version)
    except ValueError:
        return ""
    if m := _POSITIONAL.search(message):
        func, call = m.group(1), f"f({', '.join(['x'] * int(m.group(3)))})"
    elif m := _KEYWORD.search(message):
        func, call = m.group(1), ""
    elif m := _MISSING.search(message):
        func, call = m.group(1), ""
    else:
        return ""
    at = where(traceback)
    keyword = m.group(2) if m.re is _KEYWORD else ""
    found = []
    for qual in timeline.callables:
        if qual.rsplit(".", 1)[-1] != func:
            continue
        hist = timeline.signature_history(qual)
        if call:
            node = ast.parse(call).body[0].value
            got = judge_call(qual, hist, Target(release), node, call)
            if got and got[0] in (CALL_CODE, CALL_DEPRECATED_CODE):
                found.append(got[1].split("; its parameters")[0])
        elif keyword:
            upto = [(r, p) for r, p in hist if ver(r) <= ver(release)]
            for (_, was), (r1, now) in zip(upto, upto[1:], strict=False):
                if keyword in was.names() and keyword not in now.names() and not now.varkw:
                    new = renamed_keyword(keyword, was, now)
                    found.append(f"{qual}: keyword {keyword}= was " + (f"renamed {new}= in jax {r1}: write {new}="
                                                                      if new else f"removed in jax {r1}"))
        else:
            for name in re.findall(r"'(\w+)'", m.group(2)):
                since = _required_since(hist, name, release)
                if since:
                    found.append(f"{qual}: {name} is required since jax {since}")
                    break
    # one change, maybe under several public names (jax.make_mesh is jax.sharding's too): the shortest
    changes = {f.split(": ", 1)[1]: f for f in sorted(found, key=len, reverse=True)}
    if len(changes) != 1:
        return ""  # nothing, or different jax functions of that name changed: not ours to pick
    return next(iter(changes.values())) + (f", called at {at}" if at else "")


_NO_METHOD = re.compile(r"'(\w+)' object has no attribute '(\w+)'")


def explain_method(message: str, traceback: str, jax_version: str, timeline: Timeline | None = None) -> str:
    """``'ShapedArray' object has no attribute 'lo_ty'``: a method of a public jax class that the
    release at ``jax_version`` no longer has; "" when the history knows of none."""
    m = _NO_METHOD.search(message)
    if not m:
        return ""
    timeline = timeline or Timeline.load()
    try:
        release = timeline.release(jax_version)
    except ValueError:
        return ""
    tail = f".{m.group(1)}.{m.group(2)}"
    found = {q: timeline.method_gone(q, release) for q in timeline.callables if q.endswith(tail)}
    found = {q: r for q, r in found.items() if r}
    if not found:
        return ""
    qual = min(found, key=len)  # the same class is public under several modules: the shortest name
    at = where(traceback)
    return f"{qual} was removed in jax {found[qual]}" + (f", used at {at}" if at else "")


def _required_since(hist: list, name: str, release: str) -> str:
    """The release from which ``name`` is a required parameter, if it was not before."""
    since = ""
    for r, p in hist:
        if ver(r) > ver(release):
            break
        required = any(x.name == name and not x.default for x in p.slots + p.kwonly)
        since = (since or r) if required else ""
    first = hist[0][0] if hist else ""
    return since if since and since != first else ""


def explain_result(raw, versions: dict[str, str]) -> str:
    """For usertests.classify: the explanation of a failing RawResult, or ""."""
    types = list(getattr(raw, "error_types", []) or [])
    error_type = next((t for t in types if t in _ERRORS), types[0] if types else "")
    try:
        got = explain_removed(error_type, raw.message, raw.traceback, versions.get("jax", ""))
        if got is None and "TypeError" in types + [error_type]:
            return explain_call(raw.message or "", raw.traceback or "", versions.get("jax", ""))
        if got is None and "AttributeError" in types + [error_type]:
            return explain_method(raw.message or "", raw.traceback or "", versions.get("jax", ""))
    except (OSError, ValueError):
        return ""  # no timeline: nothing to say, never a crash of the check
    return got.text() if got else ""


_WARNINGS = ("DeprecationWarning", "FutureWarning", "PendingDeprecationWarning")


@dataclass(frozen=True)
class WarningAsError:
    """A test not collected (or failed) because a jax deprecation warning, raised while a package
    imported (or while the test ran), was turned into an error by the project's own warning filter."""

    name: str  # the jax name the warning is about (jax.interpreters.batching.NotMapped)
    category: str  # DeprecationWarning, FutureWarning
    package: str  # the import name whose code used it ("" : the project's own code)
    version: str  # that package's installed version
    where: str  # file:line of the use
    deprecated_in: str  # the jax release that deprecated it ("" when the history does not say)
    removed_in: str  # the jax release that removes it ("" while the newest still has it)
    setting: str  # the project's setting that makes it an error ("" when not found in its configuration)
    upgrade: str = ""  # a release of ``package`` that no longer uses it, from a rule ("" when none is known)
    replacement: str = ""  # what jax says to use instead
    collected: bool = False  # the warning was raised while the test ran (not while its module imported)

    def text(self) -> str:
        who = f"{self.package} {self.version}".strip() if self.package else "your code"
        at = f" ({self.where})" if self.where else ""
        since = f"deprecated in jax {self.deprecated_in}" if self.deprecated_in else "deprecated in jax"
        gone = f", removed in {self.removed_in}" if self.removed_in else ""
        made = (f"the project's own warning filter ({self.setting}) makes that {self.category} an error"
                if self.setting else f"a warning filter of the project makes that {self.category} an error")
        return f"{'failed' if self.collected else 'not collected'}: {who} uses {self.name}{at}, {since}{gone}; {made}"

    def fix(self) -> str:
        """What to pin or change, most direct first."""
        out = []
        if self.upgrade:
            out.append(self.upgrade)
        if self.package:
            out.append(f'add "ignore::{self.category}:{self.package}" to the project\'s filterwarnings, after '
                       f"its \"error\" (the warning comes from {self.package}, not from your code)")
        else:
            instead = (f"use {self.replacement} instead of {self.name}" if self.replacement else
                       f"stop using {self.name}")
            out.append(f"{instead} in your code")
        if self.deprecated_in:
            until = f" (jax {self.removed_in} removes it: this only postpones the break)" if self.removed_in else ""
            out.append(f"pin jax<{self.deprecated_in}{until}")
        return "; or ".join(out)


def explain_warning(error_types: list[str], message: str, traceback: str, versions: dict[str, str],
                    setting: str, failures=(), timeline: Timeline | None = None) -> WarningAsError | None:
    """Why a test was not collected (or failed), if the reason is a jax deprecation warning raised as an error
    (``filterwarnings = ["error"]``, ``-W error``): the name, the package that used it and the jax
    release that deprecated it (jax's API history), the project's setting, and, when a rule knows
    the package's release that no longer uses the name, that release (else None)."""
    category = next((t for t in error_types if t in _WARNINGS), "")
    text = re.sub(r"^\[(setup|teardown|collect|call)\]\s*", "", message or "")
    name = next(iter(apis([{"message": text}])), "")
    if not category or not name.startswith("jax."):
        return None
    timeline = timeline or Timeline.load()
    known = history(name, timeline)
    used = where(traceback)
    package = next((f.package for f in reversed(frames(traceback))
                    if f.package and f.package not in ("jax", "jaxlib", "_pytest", "pluggy")), "")
    package = package if package and used.startswith(package + "/") else ""
    version = versions.get(package, "") if package else ""
    upgrade = ""
    for f in failures:
        ranges = [c[package] for c in f.affects if package in c]
        if package and version and f.match.search(text) and any(version in r for r in ranges):
            upgrade = f"{f.fix} (known failure {f.id}: what this warning becomes on a later jax)"
            break
    return WarningAsError(name, category, package, version, used,
                          known.deprecated_in if known else "", known.removed_in if known else "",
                          setting, upgrade, known.replacement if known else "")


def explain_warning_result(raw, versions: dict[str, str], setting: str, matrix=None) -> WarningAsError | None:
    """For usertests.classify: a test not collected because of a jax deprecation warning made an
    error, or None (also when there is no timeline: never a crash of the check)."""
    try:
        found = explain_warning(list(raw.error_types or []), raw.message, raw.traceback, versions, setting,
                                matrix.failures if matrix is not None else ())
    except (OSError, ValueError):
        return None
    return replace(found, collected=raw.phase != Phase.COLLECT) if found is not None else None


def _scan_at(paths: list[Path], jax_version: str) -> Report | None:
    """jax-compat scan of ``paths`` at the jax release ``jax_version`` (None without a timeline, or
    when the timeline does not know that release)."""
    from jaxcompat.apihistory.scan import scan

    try:
        timeline = Timeline.load()
        return scan([str(p) for p in paths], Target(timeline.release(jax_version)), timeline)
    except (OSError, ValueError):
        return None


def project_scan(root: Path | None, jax_version: str) -> Report | None:
    """The project's own uses of names the candidate's jax deprecates or removed (a scan of
    ``root``); None without a project folder, a jax version or a timeline that knows it."""
    if root is None or not jax_version:
        return None
    return _scan_at([root], jax_version)


def source_findings(root: Path, jax_version: str) -> list[dict]:
    """A dependent's own source read as ``project_scan`` reads the user's project (the crater): each
    use of a name the candidate's jax deprecates or removed, removed first, its path relative to
    ``root`` ([] without a jax version or a timeline that knows it)."""
    report = project_scan(root, jax_version)
    found = sorted(report.findings if report else [], key=lambda f: (f.level != FindingLevel.ERROR, f.path, f.line))
    prefix = str(root).rstrip("/") + "/"
    return [{**f.to_dict(), "path": f.path.removeprefix(prefix)} for f in found]


def ecosystem_scan(env: Path, jax_version: str) -> InstalledScan | None:
    """The candidate's own ecosystem read against jax's API history: a scan of the
    equinox/diffrax/optimistix/lineax/chex installed in ``env`` (the candidate's environment
    folder) at the candidate's jax; None when none is installed, without a jax version or a
    timeline that knows it."""
    roots = [p for name in DEPENDENTS for p in sorted(env.glob(f"lib/python*/site-packages/{name}"))]
    if not roots or not jax_version:
        return None
    report = _scan_at(roots, jax_version)
    return None if report is None else InstalledScan(tuple(p.name for p in roots), report)


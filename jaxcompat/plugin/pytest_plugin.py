"""The pytest plugin that runs inside each cell: backend markers and raw result recording.

Only the standard library and pytest are used here — it runs on every cell's Python and pytest.
When ``JAXCOMPAT_RESULTS`` names a file, one JSON line is appended per event, flushed at once,
so a case that hangs or kills the interpreter leaves behind everything recorded before it:
    {"event": "collected", "cases": [...]}
    {"event": "env", "versions": {...}, "shadowed": [...], "imports": {...}, "jax_backend": "cpu",
     "device": {"platform": "cpu", "kind": "cpu", "count": 1, ...}}
    {"event": "start", "case": id, "t": time}
    {"event": "result", "case": id, "status": ..., "error_types": [...], "message": ..., ...}
    {"event": "deprecation", "package": "equinox", "where": "equinox/_x.py:12", "message": ..., "case": id}
    {"event": "warning", "case": id, "category": "DeprecationWarning", "message": ...}
The "deprecation" kind: a Deprecation/FutureWarning that jax emits into the code of a package of
the ecosystem (at import, or while a case runs): the warning before the break. The "warning" kind,
in a user's project only (``JAXCOMPAT_OWN_FRAMES``): each distinct Deprecation, PendingDeprecation
or FutureWarning a test raised (whoever raised it), or that was raised while its module, a folder
above it (its conftest) or the session was collected (a package that reads a deprecated name when
imported), at most ``WARNINGS_PER_TEST`` per test, each message clipped; pytest reports a test's
warnings after its result, so they follow it.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import traceback
import unittest
import warnings

import pytest

from jaxcompat.plugin.backends import MARKERS, backend_of, device_info, marker  # stdlib-only modules
from jaxcompat.plugin.loaded import scan
from jaxcompat.plugin.packages import DEPENDENTS, IMPORTED, NOT_INSTALLED, SKIP_MISSING, WATCHED

_WHERE = re.compile(r"[/\\](" + "|".join(WATCHED) + r")[/\\](.*)$")
_seen_warnings: set[tuple[str, str]] = set()


def _record_warning(w, case: str | None) -> None:
    """Emit a deprecation that jax raised into a watched package's code (once per place)."""
    if not issubclass(w.category, (DeprecationWarning, FutureWarning)):
        return
    m = _WHERE.search(str(w.filename))
    text = str(w.message)
    if m is None or "jax" not in text.lower():
        return
    key = (f"{m.group(1)}/{m.group(2)}:{w.lineno}", text)
    if key in _seen_warnings:
        return
    _seen_warnings.add(key)
    _emit({"event": "deprecation", "package": m.group(1), "where": key[0], "message": text[:1000],
           "category": w.category.__name__, "case": case})


def pytest_warning_recorded(warning_message, when, nodeid, location):
    _record_warning(warning_message, nodeid or None)
    _record_test_warning(warning_message, nodeid)
    if not nodeid and when in ("config", "collect") and _passed_on.get(id(warning_message)) is not warning_message:
        _note_collect_warnings("", [warning_message])  # a conftest's import, a plugin's: every test's


WARNINGS_PER_TEST = 20
WARNING_CHARS = 500
_ANNOUNCING = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)
_test_warnings: dict[str, set[tuple[str, str]]] = {}
# warnings raised while a collector ran (a test module's import, a folder's conftest): its node id ->
# them, given to each of its tests with its result (the commonest shape of a removed name: a
# package reading it at import); "" is the session's
_collect_warnings: dict[str, list[tuple[str, str]]] = {}
_passed_on: dict[int, object] = {}  # the collectors' warnings handed on to pytest (its summary shows them)


def _announcing(w) -> tuple[str, str] | None:
    """(category, message clipped) of a warning that announces a removal, else None."""
    if not (isinstance(w.category, type) and issubclass(w.category, _ANNOUNCING)):
        return None
    return (w.category.__name__, str(w.message)[:WARNING_CHARS])


def _record_test_warning(w, nodeid: str) -> None:
    """One event per distinct (category, message) a user's test raised: what announces a removal."""
    if not nodeid or not os.environ.get("JAXCOMPAT_OWN_FRAMES"):
        return
    key = w if isinstance(w, tuple) else _announcing(w)
    if key is None:
        return
    seen = _test_warnings.setdefault(nodeid, set())
    if key in seen or len(seen) >= WARNINGS_PER_TEST:
        return
    seen.add(key)
    _emit({"event": "warning", "case": nodeid, "category": key[0], "message": key[1]})


def _note_collect_warnings(nodeid: str, caught) -> None:
    keys = [k for k in map(_announcing, caught) if k is not None]
    if keys and os.environ.get("JAXCOMPAT_OWN_FRAMES"):
        found = _collect_warnings.setdefault(nodeid, [])
        found += [k for k in dict.fromkeys(keys) if k not in found]


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """A collector's warnings (a module's import: its package read a deprecated jax name at its top)
    kept for its tests; pytest is handed them as its own collection would (its summary lists them).
    The filters in force stay (pytest's, the project's: one that makes them errors still does)."""
    if not os.environ.get("JAXCOMPAT_OWN_FRAMES"):
        yield
        return
    _collecting.append(collector.nodeid)  # where a skip made now is made (``_note_import_skips``)
    try:
        with warnings.catch_warnings(record=True) as caught:
            yield
    finally:
        _collecting.pop()
    _note_collect_warnings(collector.nodeid, caught)
    _passed_on.update((id(w), w) for w in caught)
    for w in caught:
        collector.config.hook.pytest_warning_recorded.call_historic(
            kwargs={"warning_message": w, "nodeid": "", "when": "collect", "location": None})


# where a skip is made: the collectors being collected (innermost last), else the test being run
_collecting: list[str] = []
_running: list[str] = [""]
# that node -> (the reason of a skip made there, the classes of the import error it was made for)
_import_skips: dict[str, list[tuple[str, list[str]]]] = {}
_MINVERSION = re.compile(r"^module '.*' has __version__")  # importorskip's minimum-version skip
_IMPORTING = re.compile(r"^\s*(?:from\s+\S+\s+)?import\s|__import__\(|import_module\(|importorskip\(")


def _import_failure(handled: BaseException | None) -> list[str]:
    """The classes of the import error being handled when a skip is made (``handled``: what
    ``sys.exc_info`` holds then), [] for none: an ImportError, or any error raised while a module ran
    its top-level code (an import that raised AttributeError: a name jax removed), found through
    pytest's and unittest's own wrappers of it (a doctest module pytest skips when it cannot be
    imported, unittest's SkipTest made in ``except ImportError``), never through an error of another
    kind. So ``pytest.importorskip`` is, whatever reason it was given (it makes its skip while the
    import error is handled; its minimum-version skip is none); ``except ImportError:
    pytest.skip("...")`` and unittest's ``skipTest`` there too."""
    wrappers = (pytest.skip.Exception, pytest.Collector.CollectError, unittest.SkipTest)
    seen: set[int] = set()
    error = handled
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, ImportError) or _raised_importing(error):
            return [c.__name__ for c in type(error).__mro__ if c is not object]
        if not isinstance(error, wrappers):  # another error of its own: whatever it was raised for is not
            return []  # the test's lost import (a library's "needs X" for an X absent on both sides: red team 13, B4)
        error = error.__cause__ or error.__context__
    return []


def _raised_importing(error: BaseException) -> bool:
    """Whether ``error`` was raised while an import ran a module's top-level code: a ``<module>``
    frame below the one that caught it, entered from an import statement (or importlib's
    ``import_module``, ``__import__``; Python leaves the import system's own frames out), not from
    runpy's or exec's running of a script (red team 13, B2)."""
    import linecache

    previous, tb = None, error.__traceback__
    while tb is not None:
        if previous is not None and tb.tb_frame.f_code.co_name == "<module>":
            caller = previous.tb_frame.f_code.co_filename
            by_importlib = caller.endswith(os.path.join("importlib", "__init__.py"))
            if by_importlib or _IMPORTING.search(linecache.getline(caller, previous.tb_lineno)):
                return True
        previous, tb = tb, tb.tb_next
    return False


def _note_import_skips() -> None:
    """Every skip made (``pytest.skip``'s, ``pytest.xfail``'s, unittest's ``SkipTest``) notes the
    import error it was made for (``_import_failure``), on itself and under the node where it is made
    and its reason (``_import_skips``): a skip at collection leaves pytest no exception to hand its
    report, only its reason, and pytest turns unittest's SkipTest into a skip of its own."""
    for cls in (pytest.skip.Exception, pytest.xfail.Exception, unittest.SkipTest):
        if getattr(cls.__init__, "_jaxcompat", False):
            continue
        own = cls.__dict__.get("__init__")

        def init(self, *args, _cls=cls, _own=own, **kwargs):
            if _own is not None:
                _own(self, *args, **kwargs)
            else:  # the class's own bases decide, as without this (a subclass with a base of its own)
                super(_cls, self).__init__(*args, **kwargs)
            reason = str(getattr(self, "msg", None) or (args[0] if args else ""))
            self._jaxcompat_import = found = [] if _MINVERSION.match(reason) else _import_failure(sys.exc_info()[1])
            if found:
                node = _collecting[-1] if _collecting else _running[0]
                _import_skips.setdefault(node, []).append((reason, found))

        init._jaxcompat = True
        cls.__init__ = init


def _skip_import(node: str, reason: str) -> list[str]:
    """The import error that a skip made at ``node`` (a collector, a test) with this reason was made
    for: pytest's report says "Skipped: REASON" or "unittest.case.SkipTest: REASON" (or the class
    alone, for no reason), the reason's end stripped."""
    said = _bare(reason)
    for made, found in reversed(_import_skips.get(node, [])):
        if _bare(made) == said:
            return found
    return []


_SKIP_CLASS = re.compile(r"^\s*(?:[\w.]*(?:Skipped|SkipTest|XFailed)\b:?)?")


def _bare(reason: str) -> str:
    return _SKIP_CLASS.sub("", reason, count=1).strip()


def _collected_for(nodeid: str) -> list[tuple[str, str]]:
    """The collection warnings of the collectors above a test: its module's, its folders', the session's."""
    return [w for key, found in _collect_warnings.items()
            if key in ("", ".") or nodeid.startswith(key + "::") or nodeid.startswith(key + "/") for w in found]
_results: dict[str, dict] = {}


def _emit(event: dict) -> None:
    path = os.environ.get("JAXCOMPAT_RESULTS")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(event) + "\n")
        f.flush()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    if os.environ.get("JAXCOMPAT_OWN_FRAMES") and getattr(config.option, "numprocesses", None):
        # A user's `-n auto` (pytest-xdist) in addopts: the runner here is the one that restarts
        # a dead process from the next test, and it reads one stream of events, so run in one.
        config.option.numprocesses = 0
        config.option.dist = "no"
    for name, what in (("cpu", "runs only on the CPU backend"),
                       ("gpu", "runs only on a GPU backend (cuda12, cuda13, rocm)"),
                       ("tpu", "runs only on a TPU backend")):
        config.addinivalue_line("markers", f"{name}: {what}; reported skipped elsewhere")


def _current_backend() -> str:
    """The cell's backend: what the runner says (a built cell's, or the backend ``check --env``
    found); without it, what jax reports here together with what is installed (jax says "gpu"
    for CUDA 12, CUDA 13 and ROCm alike; the plugin wheels say which)."""
    backend = os.environ.get("JAXCOMPAT_BACKEND")
    if backend:
        return backend
    try:
        import jax

        platform = jax.default_backend()
        version = str(getattr(jax.devices()[0].client, "platform_version", ""))
        return backend_of(platform, scan()["distributions"], version)
    except Exception:  # noqa: BLE001 - without jax, nothing backend-specific can run anyway
        return "cpu"


def pytest_sessionstart(session):
    """Import the cell's packages once, up front: a package that cannot even be imported is a
    cell-level result (reported with the interpreter's own message), not N identical failures."""
    if not os.environ.get("JAXCOMPAT_RESULTS"):
        return
    imports: dict[str, str] = {}
    failed = False
    for module in filter(None, os.environ.get("JAXCOMPAT_IMPORTS", "").split(",")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                __import__(module)
                imports[module] = IMPORTED
            except BaseException as e:  # noqa: BLE001 - SystemExit from a broken import counts too
                failed = True
                tb = traceback.format_exception(type(e), e, e.__traceback__)
                imports[module] = "".join(tb[-6:])[-3000:]
        for w in caught:
            _record_warning(w, None)
    jax_backend, device = None, {}
    if not failed and "jax" in imports:
        try:
            import jax

            jax_backend = jax.default_backend()
            device = device_info()
        except Exception as e:  # noqa: BLE001
            jax_backend = jax_backend or f"error: {type(e).__name__}: {e}"
    loaded = scan()  # what `import` loads: the first distribution of each name on sys.path
    _emit({"event": "env", "versions": loaded["distributions"], "shadowed": loaded["shadowed"],
           "imports": imports, "jax_backend": jax_backend, "device": device})
    if failed:
        pytest.exit("a cell package failed to import; see the cell report", returncode=3)


def pytest_collection_modifyitems(config, items):
    if _skip_missing():
        _skip_items_missing(items)
    backend = _current_backend()
    wanted = marker(backend)
    for item in items:
        marks = {m.name for m in item.iter_markers()} & set(MARKERS)
        if marks and wanted not in marks:
            item.add_marker(pytest.mark.skip(
                reason=f"needs backend {'/'.join(sorted(marks))}; this cell runs on {backend}"))
    _emit({"event": "collected", "cases": [item.nodeid for item in items]})


_NEEDS = re.compile(r"^\s*(?:import|from)\s+(" + "|".join(DEPENDENTS) + r")\b", re.M)


def _absent(names) -> list[str]:
    """Of ``names``, the libraries not installed at all here (installed and broken is not this)."""
    import importlib.util

    return sorted({m for m in names if importlib.util.find_spec(m) is None})


def _reason(missing: list[str]) -> str:
    return f"needs {', '.join(missing)}, {NOT_INSTALLED} (not judged here)"


class _NotInstalled(pytest.Module):
    """A case module that imports, at its top, a library this existing environment does not have:
    skipped whole, the library named, instead of an import error that stops every other case."""

    missing: list[str] = []

    def collect(self):
        _emit({"event": "result", "case": self.nodeid, "status": "skipped", "error_types": [],
               "message": _reason(self.missing), "phase": "collect", "duration_s": 0.0})
        raise pytest.skip.Exception(_reason(self.missing), allow_module_level=True)


def _skip_missing() -> bool:
    """Only where the run sets it (``packages.SKIP_MISSING``), only for our own cases: the matrix's
    cells never skip this way."""
    return bool(os.environ.get(SKIP_MISSING)) and not os.environ.get("JAXCOMPAT_OWN_FRAMES")


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path, parent):
    if not _skip_missing():
        return None
    try:
        missing = _absent(_top_imports(module_path.read_text(encoding="utf-8")))
    except (OSError, SyntaxError, ValueError):
        return None
    if not missing:
        return None
    module = _NotInstalled.from_parent(parent, path=module_path)
    module.missing = missing
    return module


def _top_imports(text: str) -> set[str]:
    """The ecosystem's libraries a module imports when it is imported (its top level, also inside a
    top-level ``if``/``try``), read with ``ast``: a child script's text is not an import."""
    import ast

    found: set[str] = set()
    todo = list(ast.parse(text).body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            todo += [n for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt)]
    return found & set(DEPENDENTS)


def _needs(func, depth: int = 3, seen: set | None = None) -> set[str]:
    """The libraries a test imports in its body, in a child script it writes, or in the module's
    helper functions it calls (a few calls deep)."""
    import inspect

    seen = set() if seen is None else seen
    if func in seen or depth < 0:
        return set()
    seen.add(func)
    try:
        found = set(_NEEDS.findall(inspect.getsource(func)))
    except (OSError, TypeError):
        return set()
    module = getattr(func, "__globals__", {})
    for name in getattr(getattr(func, "__code__", None), "co_names", ()):
        helper = module.get(name)
        if inspect.isfunction(helper) and helper.__module__ == func.__module__:
            found |= _needs(helper, depth - 1, seen)
        elif isinstance(helper, str):  # a child script kept in a module-level constant
            found |= set(_NEEDS.findall(helper))
    return found


def _skip_items_missing(items) -> None:
    for item in items:
        fn = getattr(item, "function", None)
        missing = _absent(_needs(fn)) if fn is not None else []
        if missing:
            item.add_marker(pytest.mark.skip(reason=_reason(missing)))


_ERROR_LINE = re.compile(r"^E\s+([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)):", re.M)


def pytest_collectreport(report):
    """A user's test module that cannot even be collected (an import error), or that skips itself
    whole at import (``pytest.skip(..., allow_module_level=True)``, a module-level
    ``pytest.importorskip``), is a result: its tests would otherwise vanish from the run. (Our own
    cases keep pytest's behaviour.)"""
    if not os.environ.get("JAXCOMPAT_OWN_FRAMES"):
        return
    if report.skipped:
        longrepr = report.longrepr
        reason = str(longrepr[2] if isinstance(longrepr, tuple) else longrepr)
        _emit({"event": "result", "case": report.nodeid or ".", "status": "skipped",
               "error_types": _skip_import(report.nodeid, reason), "message": _clip(reason),
               "phase": "collect", "duration_s": 0.0})
    if not report.failed:
        return
    text = str(report.longrepr)
    types = _ERROR_LINE.findall(text)
    error = [ln[1:].strip() for ln in text.splitlines() if ln.startswith("E ")]
    message = "\n".join(error) or next((ln.strip() for ln in reversed(text.splitlines()) if ln.strip()), "")
    _emit({"event": "result", "case": report.nodeid or ".", "status": "failed",
           "error_types": _builtin_mro(types[-1].rsplit(".", 1)[-1]) if types else [],
           "message": _clip(message), "phase": "collect", "duration_s": 0.0,
           "traceback": _clip(_own_frames_first(text), 2000, 6000)})


def _own_frames_first(longrepr: str) -> str:
    """A collection error's text from the first frame that is not the import machinery (pytest's
    own `importlib/__init__.py` frame names the machine's Python, and says nothing)."""
    lines = longrepr.splitlines()
    frames = [i for i, ln in enumerate(lines) if re.match(r"^\S.*:\d+: in ", ln)]
    own = next((i for i in frames if not os.path.isabs(lines[i].split(":", 1)[0])), None)
    if own is None or own == (frames[0] if frames else None):
        return longrepr
    return "\n".join(lines[:frames[0]] + lines[own:])


def _builtin_mro(name: str) -> list[str]:
    """``ModuleNotFoundError`` -> its classes up to BaseException (a rule naming ImportError matches)."""
    import builtins

    cls = getattr(builtins, name, None)
    if isinstance(cls, type) and issubclass(cls, BaseException):
        return [c.__name__ for c in cls.__mro__ if c is not object]
    return [name]


def pytest_runtest_logstart(nodeid, location):
    _running[0] = nodeid
    _results[nodeid] = {"case": nodeid, "status": "passed", "error_types": [], "message": "",
                        "duration_s": 0.0}
    _emit({"event": "start", "case": nodeid, "t": time.time()})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    rec = _results.setdefault(item.nodeid, {"case": item.nodeid, "status": "passed",
                                            "error_types": [], "message": "", "duration_s": 0.0})
    rec["duration_s"] += float(getattr(report, "duration", 0.0) or 0.0)
    if report.skipped and rec["status"] == "passed":
        rec["status"] = "skipped"
        longrepr = report.longrepr
        rec["message"] = str(longrepr[2] if isinstance(longrepr, tuple) else longrepr)
        if os.environ.get("JAXCOMPAT_OWN_FRAMES"):
            _skipped(rec, item.nodeid, report, call.excinfo.value if call.excinfo is not None else None)
    elif report.failed and rec["status"] != "failed":
        rec["status"] = "failed"
        exc = call.excinfo.value if call.excinfo is not None else None
        if exc is not None:
            rec["error_types"] = [c.__name__ for c in type(exc).__mro__ if c is not object]
            rec["message"] = f"{type(exc).__name__}: {exc}"
            rec["traceback"] = _short_traceback(exc)
            rec["phase"] = call.when  # collect | setup | call | teardown
        else:
            rec["message"] = str(report.longrepr)[-2000:]


def _skipped(rec: dict, nodeid: str, report, exc: BaseException | None) -> None:
    """A user's skipped test: the import error it was skipped for (a lost module, whatever its reason
    says: ``model/usertests.import_skip``); an expected failure shown by its reason and its error's
    first line, not pytest's whole failure text (red team 12, B2), and an import error if that is
    what it failed for (red team 13, A2/A4)."""
    noted = getattr(exc, "_jaxcompat_import", None)
    if not hasattr(report, "wasxfail"):
        rec["error_types"] = noted or _skip_import(nodeid, rec["message"])
        return
    raised = exc is not None and not isinstance(exc, pytest.xfail.Exception)
    rec["error_types"] = noted or (_import_failure(exc) if raised else [])
    error = str(exc).strip().splitlines()[0] if raised and str(exc).strip() else ""
    rec["message"] = ("expected to fail" + (f" ({report.wasxfail})" if report.wasxfail else "")
                      + (f": {type(exc).__name__}: {error}" if raised else ""))


def _clip(text: str, head: int = 4000, tail: int = 12000) -> str:
    """Keep both ends: equinox's runtime errors put the stack first and the message last."""
    return text if len(text) <= head + tail else f"{text[:head]}\n[…]\n{text[-tail:]}"


_INSTALLED_TOP = re.compile(r"[/\\](?:site|dist)-packages[/\\]([^/\\]+)")


def _short_traceback(exc: BaseException) -> str:
    """The case's own frames and the library frame that raised: enough to act on. In a user's
    project, also the frame where the call first enters each installed package after its last own
    frame: the path from the project to the code that raised (diffrax, then equinox), which the
    crater reads to attribute a failure to the package it lies in (knowledge/roots.py)."""
    frames = traceback.extract_tb(exc.__traceback__)
    own = os.environ.get("JAXCOMPAT_OWN_FRAMES")  # a user's project: its own frames

    def mine(filename: str) -> bool:
        if own:
            return filename.startswith(own) and "site-packages" not in filename
        return "/cases/" in filename.replace("\\", "/")

    kept = [i for i, f in enumerate(frames) if mine(f.filename)]
    if own and kept:
        seen = set()
        for i in range(kept[-1] + 1, len(frames) - 1):
            m = _INSTALLED_TOP.search(frames[i].filename)
            if m and m.group(1) not in seen:
                seen.add(m.group(1))
                kept.append(i)
    if frames and len(frames) - 1 not in kept:
        kept.append(len(frames) - 1)
    return "".join(traceback.format_list([frames[i] for i in sorted(set(kept))]))[-2000:]


def pytest_runtest_logfinish(nodeid, location):
    rec = _results.pop(nodeid, None)
    if rec is not None:
        rec["message"] = _clip(rec["message"])
        _emit({"event": "result", **rec})
        for w in _collected_for(nodeid):  # after its result, as pytest reports a test's own warnings
            _record_test_warning(w, nodeid)


if os.environ.get("JAXCOMPAT_OWN_FRAMES"):  # before any conftest or test module is imported
    _note_import_skips()

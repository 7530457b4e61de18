"""The package draws its stages: every module imports only its own stage or a lower one, no two
modules import each other in a loop, and everything the pytest plugin imports inside a cell lives
in ``jaxcompat/plugin/`` (the folder the result cache hashes). Imports are read with ``ast``, the
ones inside functions too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "jaxcompat"
# lowest first; a module may import its own stage and any stage before it
STAGES = ("_util", "plugin", "model", "knowledge", "env", "apihistory", "report", "run", "operations", "commands")


def _modules() -> dict[str, Path]:
    out = {}
    for p in sorted(PACKAGE.rglob("*.py")):
        if "bundle" in p.parts or "__pycache__" in p.parts:
            continue
        parts = p.relative_to(PACKAGE.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


MODULES = _modules()


def _imports(path: Path) -> set[str]:
    """The jaxcompat modules ``path`` imports (a ``from pkg import name`` counts as ``pkg.name``
    when that is a module)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "jaxcompat"}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import (write jaxcompat.<stage>.<module>)"
            if node.module and node.module.split(".")[0] == "jaxcompat":
                for a in node.names:
                    full = f"{node.module}.{a.name}"
                    out.add(full if full in MODULES else node.module)
    return out & set(MODULES)


GRAPH = {name: _imports(path) for name, path in MODULES.items()}


def stage(module: str) -> int:
    parts = module.split(".")
    if len(parts) < 2 or parts[1] == "__main__":
        return len(STAGES)  # jaxcompat, jaxcompat.__main__: the top, above every stage
    assert parts[1] in STAGES, f"{module}: not in a stage folder ({', '.join(STAGES)})"
    return STAGES.index(parts[1])


def test_every_module_lives_in_a_stage():
    loose = [m for m in MODULES if m.count(".") == 1 and m not in ("jaxcompat.__main__",)
             and m.split(".")[1] not in STAGES]
    assert not loose, f"modules outside the stage folders: {loose}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_only_go_down(module):
    up = sorted(d for d in GRAPH[module] if stage(d) > stage(module))
    assert not up, f"{module} (stage {STAGES[stage(module)] if stage(module) < len(STAGES) else 'top'}) " \
                   f"imports a higher stage: {up}"


def test_no_circular_imports():
    state: dict[str, int] = {}
    cycles = []

    def visit(m, path):
        state[m] = 1
        for d in sorted(GRAPH[m]):
            if d == m or d == m.rsplit(".", 1)[0]:  # a package's own __init__ is not a loop
                continue
            if state.get(d) == 1:
                cycles.append(path[path.index(d):] + [d] if d in path else [m, d])
            elif d not in state:
                visit(d, path + [d])
        state[m] = 2

    for m in sorted(GRAPH):
        if m not in state:
            visit(m, [m])
    assert not cycles, f"circular imports: {cycles}"


def _closure(start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        todo += GRAPH[m]
    return seen


def test_the_plugin_imports_nothing_outside_its_folder():
    """The result cache fingerprints jaxcompat/plugin/ as the code that runs inside a cell; a
    module the plugin imports from elsewhere would change results without changing the key."""
    closure = _closure("jaxcompat.plugin.pytest_plugin")
    outside = sorted(
        m for m in closure if not (m.startswith("jaxcompat.plugin.") or m in ("jaxcompat", "jaxcompat.plugin"))
    )
    assert not outside, f"the pytest plugin imports modules outside jaxcompat/plugin/: {outside}"


def test_the_stage_packages_import_nothing_on_their_own():
    """``import jaxcompat.plugin.pytest_plugin`` inside a cell runs ``jaxcompat/__init__.py`` and
    ``jaxcompat/plugin/__init__.py``; they must not pull in the harness (or packaging, absent there)."""
    for name in ("jaxcompat", "jaxcompat.plugin"):
        assert not GRAPH[name], f"{name}/__init__.py imports {GRAPH[name]}"


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_function_is_over_60_lines(module):
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    long = [f"{n.name} ({n.end_lineno - n.lineno + 1} lines)" for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > 60]
    assert not long, f"{module}: split {', '.join(long)}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_private_name_crosses_a_stage(module):
    """``from jaxcompat.x.y import _name`` or ``y._name`` from another stage: make it public in its home."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    aliases: dict[str, str] = {}  # local name -> the jaxcompat module it stands for
    bad = []
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("jaxcompat"):
            for a in n.names:
                target = f"{n.module}.{a.name}"
                if target in MODULES:
                    aliases[a.asname or a.name] = target
                elif a.name.startswith("_") and not a.name.startswith("__") and _stage(n.module) != _stage(module):
                    bad.append(f"{a.name} from {n.module}")
    for n in ast.walk(tree):
        if (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in aliases
                and n.attr.startswith("_") and not n.attr.startswith("__")
                and _stage(aliases[n.value.id]) != _stage(module)):
            bad.append(f"{n.value.id}.{n.attr}")
    assert not bad, f"{module} uses private names of another stage: {', '.join(sorted(set(bad)))}"


def _defined(module: str) -> set[str]:
    """The names ``module`` binds itself at its top: defs, classes, assignments, and what it imports
    inside a top-level ``try``/``if`` (a shim such as ``_util.toml``'s ``tomllib``)."""
    out: set[str] = set()
    for n in ast.parse(MODULES[module].read_text(encoding="utf-8")).body:
        if isinstance(n, ast.Import):  # a module it imports whole: reached through it to patch it in tests
            out |= {(a.asname or a.name).split(".")[0] for a in n.names}
        elif isinstance(n, ast.ImportFrom) and n.module:
            out |= {a.asname or a.name for a in n.names if f"{n.module}.{a.name}" in MODULES}
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            out |= {x.id for x in ast.walk(n) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store)}
        elif isinstance(n, (ast.Try, ast.If)):
            for x in ast.walk(n):
                if isinstance(x, (ast.Import, ast.ImportFrom)):
                    out |= {(a.asname or a.name).split(".")[0] for a in x.names}
                elif isinstance(x, (ast.FunctionDef, ast.ClassDef)):
                    out.add(x.name)
                elif isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store):
                    out.add(x.id)
    return out


DEFINED = {}
USERS = {**MODULES, **{f"tests.{p.stem}": p for p in sorted((PACKAGE.parent / "tests").glob("*.py"))},
         **{f"benchmarks.{p.stem}": p for p in sorted((PACKAGE.parent / "benchmarks").glob("*.py"))}}


@pytest.mark.parametrize("module", sorted(USERS))
def test_each_name_is_imported_from_its_home(module):
    """A name is imported from the module that defines it, never through another that imported it
    (``from x import name as name`` to pass it on): one home per name, so a move updates its callers."""
    tree = ast.parse(USERS[module].read_text(encoding="utf-8"))
    aliases: dict[str, str] = {}
    bad = []
    for n in ast.walk(tree):
        if not (isinstance(n, ast.ImportFrom) and n.module and n.module in MODULES):
            continue
        for a in n.names:
            target = f"{n.module}.{a.name}"
            if target in MODULES:
                aliases[a.asname or a.name] = target
            elif a.name not in DEFINED.setdefault(n.module, _defined(n.module)):
                bad.append(f"{a.name} from {n.module}")
            elif a.asname == a.name and module in MODULES:
                bad.append(f"{a.name} passed on as itself (`as {a.name}`)")
    for n in ast.walk(tree):
        if (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in aliases
                and isinstance(n.ctx, ast.Load) and f"{aliases[n.value.id]}.{n.attr}" not in MODULES
                and not n.attr.startswith("__")
                and n.attr not in DEFINED.setdefault(aliases[n.value.id], _defined(aliases[n.value.id]))):
            bad.append(f"{n.value.id}.{n.attr}")
    assert not bad, f"{module} imports names not from their home: {', '.join(sorted(set(bad)))}"


def test_every_function_and_class_is_used_by_the_package_itself():
    """Dead code gone: a top-level function or class of ``jaxcompat`` (or a method) that nothing in
    the package names (as a name, an attribute or a word-like string) is used by tests alone, or by
    nothing: delete it, or move it to ``tests/``. Plugin hooks and each command's ``add_parser`` and
    ``run`` are called by pytest and the registry; the workflows and noxfile count as users."""
    import re

    used: set[str] = set()
    defined = []
    for path in MODULES.values():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for n in tree.body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.append((path, n.name))
            if isinstance(n, ast.ClassDef):
                defined += [(path, f"{n.name}.{m.name}") for m in n.body
                            if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and not m.name.startswith("__")]
        for n in ast.walk(tree):
            if isinstance(n, ast.Name):
                used.add(n.id)
            elif isinstance(n, ast.Attribute):
                used.add(n.attr)
            elif isinstance(n, ast.alias):
                used.add(n.name.rsplit(".", 1)[-1])
            elif isinstance(n, ast.Constant) and isinstance(n.value, str) and re.fullmatch(r"\w+", n.value):
                used.add(n.value)
    root = PACKAGE.parent
    outside = "".join(p.read_text(encoding="utf-8") for p in [root / "noxfile.py", root / "conftest.py",
                                                             *sorted((root / ".github").rglob("*.yml"))])
    dead = [f"{path.relative_to(root)}: {name}" for path, name in defined
            if (leaf := name.rsplit(".", 1)[-1]) not in used and leaf not in outside
            and not leaf.startswith("pytest_") and leaf not in ("add_parser", "run")]
    assert not dead, "used by nothing in the package: " + ", ".join(dead)


def test_the_words_the_plugin_writes_are_the_models_words():
    """The plugin cannot import ``model/`` (the result cache hashes ``plugin/`` alone), so it spells the
    words it writes into the result stream; each must be a word of ``model/vocab``'s type for its key,
    which is how the harness reads it back (a typo would be a result no verdict understands)."""
    from jaxcompat.model.vocab import Phase, TestStatus

    types = {"status": TestStatus, "phase": Phase}
    written: list[tuple[str, str]] = []
    tree = ast.parse(MODULES["jaxcompat.plugin.pytest_plugin"].read_text(encoding="utf-8"))
    for n in ast.walk(tree):
        if isinstance(n, ast.Dict):
            written += [(k.value, v.value) for k, v in zip(n.keys, n.values, strict=True)
                        if isinstance(k, ast.Constant) and k.value in types
                        and isinstance(v, ast.Constant) and isinstance(v.value, str)]
        elif (isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
              and isinstance(t := n.targets[0], ast.Subscript) and isinstance(t.slice, ast.Constant)
              and t.slice.value in types):
            written.append((t.slice.value, n.value.value))
    assert {k for k, _ in written} == set(types), written  # the test reads what the plugin writes
    wrong = [f"{k}={v!r}" for k, v in written if v not in {w.value for w in types[k]}]
    assert not wrong, f"the plugin writes words its readers do not know: {wrong}"


# A name joined onto the state folder: ``state_dir / "cache"``, ``Path(args.state) / "envs"``,
# ``cache_dir / f"releases-{dist}.json"`` (the state folder's cache). apihistory/apitimeline's
# ``--cache`` is a folder of its own, not the state folder's.
STATE_NAMES = {"state_dir", "state", "cache_dir"}


def _state_folder(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id in STATE_NAMES
    if isinstance(node, ast.Attribute):
        return node.attr in ("state", "state_dir")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Path" and node.args:
        return _state_folder(node.args[0])
    return False


def test_only_statedir_joins_a_name_onto_the_state_folder():
    """What lives where in the state folder is said in one module, ``_util/statedir.py``: any other
    module reaches a path in it through ``StateDir``/``CacheDir``, never by joining a name itself."""
    bad = []
    for module, path in MODULES.items():
        if module == "jaxcompat._util.statedir":
            continue
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) and _state_folder(n.left)
                    and isinstance(n.right, (ast.Constant, ast.JoinedStr, ast.Name, ast.Attribute))):
                bad.append(f"{path.relative_to(PACKAGE.parent)}:{n.lineno}: {ast.unparse(n)}")
    assert not bad, "joined onto the state folder outside _util/statedir.py: " + "; ".join(bad)


# -- report files are written in jaxcompat/report/ alone (report.emit) --------------------------------

# A file is written, outside report/, only where this says why: the state folder (environments, caches,
# locks, logs), the user's own files, the data the repository keeps, and the raw records a run keeps
# to be merged, resumed or read back (not a report: nobody reads them but the tool). What a person or
# CI reads (.json summaries, .md, .html, .xml, .sarif, .jsonl, draft-rules.toml, a file named by
# --output) is rendered and written by report/: ``report.emit`` (or its ``write_file``).
# Below report/ (these stages cannot import it), by module:
WRITES_BELOW_REPORT = {
    "jaxcompat._util.atomic": "the atomic writers themselves",
    "jaxcompat._util.lock": "the lock file of a reports folder",
    "jaxcompat.plugin.pytest_plugin": "inside a cell: its result stream, read back by the runner",
    "jaxcompat.apihistory.apitimeline": "the wheels' cache and the generated data/*_api_timeline.json",
    "jaxcompat.apihistory.scanfix": "scan --fix: the user's own source files",
    "jaxcompat.env.commits": "the state folder: a package's checkout and its markers",
    "jaxcompat.env.gitsource": "the state folder: a git source's bare mirror and its markers",
    "jaxcompat.env.projects": "the state folder: a dependent's sources and their markers",
    "jaxcompat.env.envs": "the state folder: an environment's requirements, lock, notes and spec",
    "jaxcompat.env.probe": "the state folder: the import probe's caches",
    "jaxcompat.env.releases": "the state folder: the release listing's cache",
    "jaxcompat.env.resolution": "the state folder: resolution caches",
    "jaxcompat.env.sides": "the state folder: the baseline's constraints file",
    "jaxcompat.knowledge.compat": "checks.json: check runs kept as evidence (compat --add), read back",
    "jaxcompat.knowledge.flaky": "the learned flaky-tests file",
    "jaxcompat.knowledge.learned": "data/learned.json, the requirements releases really have",
}
# Above report/ (run, operations, commands: they call report.emit), by function:
WRITES_ABOVE_REPORT = {
    "jaxcompat.run.resultcache.ResultCache._store": "the result cache",
    "jaxcompat.run.runner.run_cases": "the cell's pytest log in the state folder",
    "jaxcompat.run.runner.watch": "the cell's pytest log in the state folder",
    "jaxcompat.operations.crater._child": "a dependent's raw result, handed from its forked child",
    "jaxcompat.operations.crater._one": "the crater's result cache",
    "jaxcompat.operations.crater.run": "dependents/<name>.json: each raw result the moment it is known (merged by "
                                       "--report-only)",
    "jaxcompat.operations.crater.store_plan": "dependents/plans/: what a shard planned (read by --report-only)",
    "jaxcompat.operations.crater.finish_plan": "dependents/plans/: when a shard stopped (read by --report-only)",
    "jaxcompat.operations.craterbisect.run": "bisect.json: crater --bisect's answers, read back into the report",
    "jaxcompat.operations.craterparts.store_weights": "the parts' weights the next deal reads",
    "jaxcompat.operations.edges._ledger": "edges-cost.json: every search run's cost, read back",
    "jaxcompat.operations.latest.update_baseline": "baseline.json: the stored baseline (an explicit user action)",
}


def _writes(module: str) -> list[tuple[str, int, str]]:
    """(the function, line, how) of every call in ``module`` that writes a file: ``write_text`` /
    ``write_bytes`` (the atomic writers, ``Path``'s), ``open``/``fdopen`` with a mode that writes,
    ``json.dump`` (and any ``module.dump``)."""
    def mode(call: ast.Call, at: int) -> str:
        for k in call.keywords:
            if k.arg == "mode" and isinstance(k.value, ast.Constant):
                return str(k.value.value)
        arg = call.args[at] if len(call.args) > at else None
        return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else "r"

    def how(call: ast.Call) -> str:
        f = call.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        on_module = isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
        if name in ("write_text", "write_bytes") or (name == "dump" and on_module):
            return name
        if name in ("open", "fdopen"):  # open(path, mode), os.fdopen(fd, mode), io.open(…); path.open(mode)
            m = mode(call, 1 if isinstance(f, ast.Name) or name == "fdopen" or
                     (on_module and f.value.id in ("io", "os", "codecs")) else 0)
            return f"open({m!r})" if set(m) & set("wax+") else ""
        return ""

    out = []

    def visit(node, scope):
        for n in ast.iter_child_nodes(node):
            inner = scope + [n.name] if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else scope
            if isinstance(n, ast.Call) and how(n):
                out.append((".".join(scope), n.lineno, how(n)))
            visit(n, inner)

    visit(ast.parse(MODULES[module].read_text(encoding="utf-8")), [])
    return out


def test_report_files_are_written_in_report_alone():
    """Outputs are data: a stage hands ``report.emit`` a record of ``report/outputs.py`` and prints the
    files it wrote; only ``jaxcompat/report/`` writes a report file. Any other write names its
    reason above (a new cache or state file: add it there, with why)."""
    report = STAGES.index("report")
    bad = []
    for module in sorted(MODULES):
        if _stage(module) == "report" or module in WRITES_BELOW_REPORT:
            continue
        for function, line, how in _writes(module):
            if stage(module) < report or f"{module}.{function}" not in WRITES_ABOVE_REPORT:
                bad.append(f"{MODULES[module].relative_to(PACKAGE.parent)}:{line} {function or '<module>'} {how}")
    assert not bad, ("files written outside jaxcompat/report/ (render a record and write it with report.emit, or "
                     "name the state/cache file in WRITES_BELOW_REPORT / WRITES_ABOVE_REPORT with why):\n  "
                     + "\n  ".join(bad))

"""What the user's tests need besides the project: its test dependencies, the way it declares them.

Projects declare them in many places, and the test run is only as good as this guess:
- an extra of ``[project.optional-dependencies]`` (``setup.cfg``'s ``[options.extras_require]``,
  or a literal ``extras_require`` in ``setup.py``) named ``test``/``tests``/``testing``, else ``dev``;
- a PEP 735 ``[dependency-groups]`` group with the same names (``{include-group = …}`` followed);
- a requirements file (``requirements-test.txt``, ``requirements-dev.txt``, … with its ``-r`` lines).
Found automatically and said ("test dependencies: extra `dev`"); ``--extra``/``--group`` name
exactly which extras and groups to use instead, ``--with`` adds any requirement.

Requirements on a package the candidate pins (jax, equinox …) are left out: the candidate's pin
is what is being judged, and a test file's own pin of it would only make the pair unresolvable.

When the tests still cannot start, ``diagnose`` reads pytest's output for the cause and names
where it comes from ("needed by `addopts` in pyproject.toml") and what would provide it.
"""

from __future__ import annotations

import ast
import configparser
import os
import re
from pathlib import Path

from jaxcompat._util.toml import tomllib
from jaxcompat.model.target import Declared, TestDeps, normalise, requirement_name

PREFERRED = ("test", "tests", "testing")  # used when declared
FALLBACK = ("dev",)  # used only when none of the preferred names is declared
REQUIREMENT_FILES = ("requirements-test.txt", "requirements_test.txt", "test-requirements.txt",
                     "test_requirements.txt", "requirements-tests.txt", "requirements/test.txt",
                     "requirements/tests.txt", "requirements/requirements-test.txt", "tests/requirements.txt",
                     "test/requirements.txt",
                     "requirements-dev.txt", "requirements_dev.txt", "dev-requirements.txt", "requirements/dev.txt")


class TestDepsError(ValueError):
    """A declared test dependency that cannot be used (one line: file, key, fix)."""


def _checked(requirements: list, where: str) -> list[str]:
    from packaging.requirements import InvalidRequirement, Requirement

    out = []
    for req in requirements:
        if not isinstance(req, str):
            raise TestDepsError(f"{where}: {req!r} is not a requirement string")
        try:
            Requirement(req)
        except InvalidRequirement as e:
            raise TestDepsError(f"{where}: {req!r} is not a PEP 508 requirement ({e})") from None
        out.append(req)
    return out


def declared(root: Path) -> Declared:
    """Read every place of ``root`` that may declare test dependencies (nothing is installed)."""
    project: dict = {}
    groups_table: dict = {}
    path = root / "pyproject.toml"
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except ValueError as e:
            raise TestDepsError(f"{path}: not valid TOML ({e})") from None
        project = data.get("project", {})
        groups_table = data.get("dependency-groups", {})
    extras, extras_file = {}, ""
    if project.get("optional-dependencies"):
        extras = {k: _checked(v, f"pyproject.toml: project.optional-dependencies.{k}")
                  for k, v in project["optional-dependencies"].items()}
        extras_file = "pyproject.toml"
    elif (root / "setup.cfg").is_file() and (found := _setup_cfg_extras(root / "setup.cfg")):
        extras, extras_file = found, "setup.cfg"
    elif (root / "setup.py").is_file() and (found := _setup_py_extras(root / "setup.py")):
        extras, extras_file = found, "setup.py"
    groups = {g: _expand_group(groups_table, g, ()) for g in groups_table}
    files = {}
    for name in REQUIREMENT_FILES:
        if (root / name).is_file():
            files[name] = _requirements_file(root / name, root, ())
    return Declared(normalise(project.get("name", "")), extras, extras_file, groups, files,
                    str(project.get("requires-python", "")))


def _expand_group(table: dict, group: str, seen: tuple[str, ...]) -> list[str]:
    if group in seen:
        raise TestDepsError(
            f"pyproject.toml: dependency-groups.{group} includes itself ({' -> '.join(seen + (group,))})"
        )
    if group not in table:
        raise TestDepsError(f"pyproject.toml: dependency-groups.{seen[-1]}: include-group {group!r} is not a group "
                            f"(groups: {', '.join(table)})")
    out: list[str] = []
    for item in table[group]:
        if isinstance(item, dict) and "include-group" in item:
            out += _expand_group(table, item["include-group"], seen + (group,))
        else:
            out += _checked([item], f"pyproject.toml: dependency-groups.{group}")
    return out


_INCLUDE = re.compile(r"^(?:-r|--requirement)(?:\s+|=|(?=[^\s-]))(\S+)$")


def _requirements_file(path: Path, root: Path, seen: tuple[Path, ...]) -> list[str]:
    """PEP 508 lines of a requirements file, following ``-r``; other options are not followed."""
    if path in seen:
        return []
    out: list[str] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = re.split(r"\s+#", raw.strip(), maxsplit=1)[0].strip()
        if not line or line.startswith("#"):
            continue
        include = _INCLUDE.match(line)
        if include:
            nested = (path.parent / include.group(1)).resolve()
            if nested.is_file():
                out += _requirements_file(nested, root, seen + (path,))
            continue
        if line.startswith("-") or line in (".", "./"):
            continue  # -e ., -c, --index-url …: the project itself is installed anyway
        out += _checked([line], _shown(path, root))
    return out


def _shown(path: Path, root: Path) -> str:
    """A requirements file as a report names it: relative to the project, also one an ``-r`` reached
    outside it (``../shared/req.txt``)."""
    try:
        return str(path.relative_to(root))
    except ValueError:
        return os.path.relpath(path, root)


def _setup_cfg_extras(path: Path) -> dict[str, list[str]]:
    cfg = configparser.ConfigParser()
    try:
        cfg.read(path, encoding="utf-8")
    except configparser.Error:
        return {}
    if not cfg.has_section("options.extras_require"):
        return {}
    return {k: _checked([ln.strip() for ln in v.splitlines() if ln.strip() and not ln.strip().startswith("#")],
                        f"setup.cfg: options.extras_require.{k}")
            for k, v in cfg.items("options.extras_require")}


def _setup_py_extras(path: Path) -> dict[str, list[str]]:
    """A literal ``extras_require={…}`` (or a module-level dict it names) in setup.py; no code runs."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError):
        return {}
    names = {t.id: node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
             for t in node.targets if isinstance(t, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "extras_require":
            value = names.get(node.value.id) if isinstance(node.value, ast.Name) else node.value
            try:
                found = ast.literal_eval(value) if value is not None else None
            except ValueError:
                return {}
            if isinstance(found, dict):
                return {str(k): _checked(list(v), f"setup.py: extras_require[{k!r}]") for k, v in found.items()
                        if isinstance(v, (list, tuple))}
    return {}


def choose(root: Path, extras: list[str] | None = None, groups: list[str] | None = None,
           with_: list[str] | None = None) -> TestDeps:
    """The test dependencies to install: those named (``--extra``/``--group``), else those found."""
    found = declared(root)
    chosen_extras: list[str]
    chosen_groups: list[str]
    files: list[str] = []
    if extras or groups:
        for e in extras or []:
            if e not in found.extras:
                raise TestDepsError(f"--extra {e}: {root.name} declares no such extra "
                                    f"({_listing(found.extras, found.extras_file or 'pyproject.toml')})")
        for g in groups or []:
            if g not in found.groups:
                raise TestDepsError(f"--group {g}: {root.name} declares no such dependency group "
                                    f"({_listing(found.groups, 'pyproject.toml [dependency-groups]')})")
        chosen_extras, chosen_groups = list(extras or []), list(groups or [])
    else:
        chosen_extras = _pick(found.extras)
        chosen_groups = _pick(found.groups)
        if not chosen_extras and not chosen_groups:
            test_files = [f for f in found.files if "dev" not in Path(f).name]
            files = (test_files or list(found.files))[:1]
    reqs: list[str] = []
    sources = [f"extra `{e}`" + (f" ({found.extras_file})" if found.extras_file != "pyproject.toml" else "")
               for e in chosen_extras]
    own_extras = list(chosen_extras)
    for g in chosen_groups:
        for req in found.groups[g]:
            if found.name and requirement_name(req) == found.name:  # "myproject[test]" inside a group
                own_extras += [x for x in _extras_of(req) if x not in own_extras]
            else:
                reqs.append(req)
        sources.append(f"dependency group `{g}`")
    for f in files:
        reqs += found.files[f]
        sources.append(f)
    for req in _checked(list(with_ or []), "--with"):
        reqs.append(req)
        sources.append(f"--with {req}")
    return TestDeps(tuple(own_extras), tuple(dict.fromkeys(reqs)), tuple(sources), found)


def _pick(declared_names: dict) -> list[str]:
    preferred = [n for n in PREFERRED if n in declared_names]
    return preferred or [n for n in FALLBACK if n in declared_names]


def _extras_of(requirement: str) -> list[str]:
    from packaging.requirements import Requirement

    return sorted(Requirement(requirement).extras)


def _listing(names: dict, where: str) -> str:
    return f"declared in {where}: {', '.join(names)}" if names else f"none declared in {where}"


# ---------------------------------------------------------------- why the tests could not start

_MISSING = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '([\w.]+)'")
_UNRECOGNISED = re.compile(r"error: unrecognized arguments: (.+)")
_FATAL = re.compile(r"^Fatal Python error: (.+)$", re.M)
_ERROR = re.compile(r"^(?:E\s+)?((?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception)): (.+)$", re.M)
# The files pytest takes its configuration from, in the order it looks at them in each folder
# (pytest 9: _pytest/config/findpaths.py): the first one that holds a configuration is the one.
_CONFIG_FILES = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")


def config_file(root: Path) -> str:
    """The name of the file at ``root`` that holds the project's pytest configuration, or ""."""
    return _ini_options(root)[1]


def addopts(root: Path) -> tuple[str, str]:
    """(the pytest ``addopts`` of the project's configuration, the file that holds it)."""
    opts, name = _ini_options(root)
    value = opts.get("addopts", "")
    return (" ".join(value) if isinstance(value, list) else str(value)), name


def _ini_options(root: Path) -> tuple[dict[str, object], str]:
    """The project's pytest options (``filterwarnings``, ``addopts`` …) from the first configuration
    file pytest would read at ``root``, and its name: ``pytest.toml``'s ``[pytest]``, ``pytest.ini``
    (even empty), ``[tool.pytest]`` (pytest 9's native TOML) or ``[tool.pytest.ini_options]`` in
    pyproject.toml, tox.ini's ``[pytest]``, setup.cfg's ``[tool:pytest]``."""
    for name in _CONFIG_FILES:
        path = root / name
        if path.is_file():
            opts = _options_in(path)
            if opts is not None:
                return opts, name
    return {}, ""


def _options_in(path: Path) -> dict[str, object] | None:
    """The pytest options ``path`` holds, or None when pytest would not take it as configuration."""
    if path.suffix == ".toml":
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (ValueError, OSError, UnicodeDecodeError):
            return None
        if path.name in ("pytest.toml", ".pytest.toml"):
            return dict(data.get("pytest", {}) or {})  # taken even empty
        table = data.get("tool", {}).get("pytest", {})
        native = {k: v for k, v in table.items() if k != "ini_options"} if isinstance(table, dict) else {}
        if native:
            return native
        ini = table.get("ini_options") if isinstance(table, dict) else None
        return dict(ini) if isinstance(ini, dict) else None
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return {} if path.name in ("pytest.ini", ".pytest.ini") else None
    section = "tool:pytest" if path.suffix == ".cfg" else "pytest"
    if cfg.has_section(section):
        return dict(cfg.items(section))
    return {} if path.name in ("pytest.ini", ".pytest.ini") else None


def warning_filter(root: Path, category: str = "DeprecationWarning") -> str:
    """The project's own pytest setting that turns a warning of ``category`` into an error
    (``filterwarnings = ["error"]`` in pyproject.toml, ``-W error::DeprecationWarning`` in
    ``addopts``), as a person would write it, or "" when its configuration has none."""
    opts, config = _ini_options(root)
    entries = opts.get("filterwarnings", [])
    if isinstance(entries, str):
        entries = [e.strip() for e in entries.splitlines() if e.strip() and not e.strip().startswith("#")]
    for entry in entries:
        action, _, rest = str(entry).partition(":")
        wanted = rest.split(":")[1].strip().rsplit(".", 1)[-1] if rest.count(":") >= 1 else ""
        if action.strip() == "error" and wanted in ("", category, "Warning"):
            return f'filterwarnings "{entry}" in {config}'
    addopts = opts.get("addopts", "")
    addopts = " ".join(addopts) if isinstance(addopts, list) else str(addopts)
    for m in re.finditer(r"(?:-W\s*|--pythonwarnings[=\s])(\S+)", addopts):
        action, _, rest = m.group(1).partition(":")
        wanted = rest.split(":")[1].strip().rsplit(".", 1)[-1] if rest.count(":") >= 1 else ""
        if action == "error" and wanted in ("", category, "Warning"):
            return f'addopts "{m.group(0).strip()}" in {config}'
    return ""


def diagnose(log: str, root: Path, deps: TestDeps) -> str:
    """One line: why pytest could not collect or run the user's tests, where the need comes from,
    and how to provide it (``--with``, or an extra/group that declares it)."""
    opts, config = addopts(root)
    missing = _MISSING.findall(log)
    if missing:
        module = missing[-1]
        top = module.split(".")[0]
        where = _where(log, top, opts, config)
        return (f"ModuleNotFoundError: No module named '{module}'{where}; " + _provide(top, deps)
                + _left_out(log, root, top))
    unrecognised = _UNRECOGNISED.findall(log)
    if unrecognised:
        args = unrecognised[-1].strip()
        where = (
            f", given by `addopts` in {config}" if config and any(a.split("=")[0] in opts for a in args.split()) else ""
        )
        return (f"pytest: unrecognized arguments: {args}{where}: the pytest plugin that provides them is not "
                f"installed; add it with --with PACKAGE" + _hint_extras(deps))
    if "no tests ran" in log or "collected 0 items" in log:
        return "pytest collected no tests (its configuration's testpaths/python_files found none)"
    fatal = _FATAL.findall(log)
    if fatal:  # the interpreter died (a segfault in a compiled extension): its last lines list modules
        return f"the test process died: Fatal Python error: {fatal[-1].strip()}"
    errors = _ERROR.findall(log)
    if errors:
        kind, message = errors[-1]
        return f"{kind.rsplit('.', 1)[-1]}: {message.strip()}" + _where(log, "", opts, config)
    tail = [ln.strip() for ln in log.splitlines() if ln.strip()]
    return tail[-1] if tail else "pytest printed nothing"


def _left_out(log: str, root: Path, module: str) -> str:
    """A source distribution (PKG-INFO at its root) whose test module imports by name a helper that
    stood beside it in the project's repository and that the sdist left out (jaxlie 1.5.0:
    ``from utils import …`` and no tests/utils.py): said beside ``--with``, which would install
    whatever the index holds under that name."""
    found = re.search(r"ImportError while importing test module '([^']+)'", log)
    if found is None or not (root / "PKG-INFO").is_file():
        return ""
    test_module = Path(found.group(1))
    folder = test_module.parent if test_module.is_absolute() else root / test_module.parent
    if (folder / f"{module}.py").exists() or (folder / module).is_dir():
        return ""
    shown = folder.relative_to(root).as_posix() if folder.is_relative_to(root) else folder.name
    return (f" - unless {module} is the project's own module beside its tests ({shown}/{module}.py), which this "
            "source distribution left out: then run the tests of the project's git checkout")


def _where(log: str, module: str, opts: str, config: str) -> str:
    if module and module in opts:
        return f", needed by `addopts` in {config}"
    conftest = re.search(r"ImportError while loading conftest '([^']+)'", log)
    if conftest:
        return f", needed by {Path(conftest.group(1)).name} (conftest)"
    test_module = re.search(r"ImportError while importing test module '([^']+)'", log)
    if test_module:
        return f", needed by {Path(test_module.group(1)).name}"
    return ""


def _provide(module: str, deps: TestDeps) -> str:
    holders = [f"--extra {e}" for e, reqs in deps.declared.extras.items() if e not in deps.extras
               and any(_provides(r, module) for r in reqs)]
    holders += [f"--group {g}" for g, reqs in deps.declared.groups.items()
                if any(_provides(r, module) for r in reqs) and f"dependency group `{g}`" not in deps.sources]
    return f"add it with --with {module}" + (f" or {' or '.join(holders)}" if holders else "")


def _provides(requirement: str, module: str) -> bool:
    try:
        return requirement_name(requirement) in (normalise(module), normalise(module).replace("-", ""))
    except ValueError:
        return False


def _hint_extras(deps: TestDeps) -> str:
    unused = [f"--extra {e}" for e in deps.declared.extras if e not in deps.extras]
    unused += [f"--group {g}" for g in deps.declared.groups if f"dependency group `{g}`" not in deps.sources]
    return f" (or one of {', '.join(unused)})" if unused else ""

"""Load and validate ``matrix.toml`` (and ``--rules`` files of ``[[failure]]`` tables) into typed records.

Everything is checked before anything is installed: TOML syntax, unknown keys, version
specifiers, requirement strings, duplicate ids and case paths.  Every problem is raised as a
:class:`ConfigError` that names the file, the key and what to write instead.
"""

from __future__ import annotations

import ast
import datetime
import itertools
import re
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from jaxcompat.knowledge.tables import read_toml, str_list, table_list, text_value, unknown_keys
from jaxcompat.model.matrix import (
    ANY,
    LATEST,
    STAGES,
    CaseEntry,
    Cell,
    ConfigError,
    Failure,
    KnownRequirement,
    Matrix,
    Settings,
    is_exact,
)
from jaxcompat.plugin.backends import BACKENDS, JAX_EXTRAS

ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
PYTHON_RE = re.compile(r"^3\.\d{1,2}$")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

# --------------------------------------------------------------------------------------------
# Loading


_SETTINGS_KEYS = {"python", "backend", "case_timeout_s", "cases_dir", "harness"}
_CELL_KEYS = {"id", "python", "backend", "pins", "constraints", "date", "note"}
_GRID_KEYS = {"id", "python", "backend", "axes", "pins", "constraints", "exclude", "note"}
_FAILURE_KEYS = {"id", "title", "stage", "cases", "affects", "backend", "error", "match",
                 "upstream", "fix", "workaround", "advisory", "collateral"}
_TOP_KEYS = {"settings", "cell", "grid", "failure", "requirement"}


def load(path: Path | str, rules: Iterable[Path | str] = ()) -> Matrix:
    """Parse and validate a matrix file, then merge each ``rules`` file's ``[[failure]]`` tables
    into it (validated by the same code; ids are unique across all of them). Raises ConfigError
    on any problem."""
    path = Path(path)
    matrix = parse(read_toml(path, "pass an existing matrix file (default: matrix.toml)"), path)
    for rules_path in rules:
        matrix = merge_rules(matrix, rules_path)
    return matrix


def merge_rules(matrix: Matrix, path: Path | str) -> Matrix:
    """Add the ``[[failure]]`` tables of a rules file (``--rules FILE``) to ``matrix``.

    A rules file holds only ``[[failure]]`` tables, written and checked exactly as in
    matrix.toml; their ``cases`` name the matrix's cases (relative to its folder)."""
    path = Path(path)
    data = read_toml(path, "pass an existing rules file (a TOML file of [[failure]] tables)")
    if not isinstance(data, dict):
        raise ConfigError(path, "(top)", "expected a TOML table at the top level")
    unknown_keys(path, "(top)", data, {"failure"})
    if not data.get("failure"):
        raise ConfigError(path, "failure", "missing",
                          "a rules file holds [[failure]] tables (id, affects, error, match, upstream, fix)")
    failures = _failures(path, data, matrix.root, matrix.settings)
    known = {f.id: f.source for f in matrix.failures}
    for f in failures:
        if f.id in known:
            raise ConfigError(path, f"failure[{f.id}].id", f"duplicate id {f.id!r}: {known[f.id]} already defines it",
                              "give the rule a new id (ids are shared by the matrix file and every --rules file)")
    return replace(matrix, failures=matrix.failures + tuple(failures), rules=matrix.rules + (path,))


def parse(data: object, path: Path | str = "matrix.toml", root: Path | None = None) -> Matrix:
    path = Path(path)
    root = root if root is not None else path.resolve().parent
    if not isinstance(data, dict):
        raise ConfigError(path, "(top)", "expected a TOML table at the top level")
    unknown_keys(path, "(top)", data, _TOP_KEYS)
    settings = _settings(path, data.get("settings", {}))
    cells: list[Cell] = []  # grids first (the cross product), then the hand-picked cells
    for i, raw in enumerate(table_list(path, "grid", data.get("grid", []))):
        cells.extend(_grid(path, f"grid[{i}]", raw, settings))
    for i, raw in enumerate(table_list(path, "cell", data.get("cell", []))):
        cells.append(_cell(path, f"cell[{i}]", raw, settings))
    _no_duplicates(path, "cell", [c.id for c in cells])
    failures = _failures(path, data, root, settings)
    requirements = tuple(_known_requirement(path, f"requirement[{i}]", raw)
                         for i, raw in enumerate(table_list(path, "requirement", data.get("requirement", []))))
    return Matrix(path, settings, tuple(cells), tuple(failures), root, requirements=requirements)


def _known_requirement(path: Path, key: str, raw: dict) -> KnownRequirement:
    """One ``[[requirement]]`` table: package, release, requires, note."""
    unknown_keys(path, key, raw, {"package", "release", "requires", "note"})
    for name in ("package", "release", "requires", "note"):
        if not isinstance(raw.get(name), str) or not raw[name].strip():
            raise ConfigError(path, f"{key}.{name}", "missing or not a string",
                              'e.g. package = "optimistix", release = "0.0.7", requires = "equinox>=0.11.3", '
                              'note = "reads eqx.StrictConfig, new in equinox 0.11.3"')
    package = canonicalize_name(raw["package"])
    try:
        Version(raw["release"])
    except InvalidVersion:
        raise ConfigError(
            path, f"{key}.release", f"{raw['release']!r} is not a version", 'write e.g. "0.0.7"'
        ) from None
    try:
        req = Requirement(raw["requires"])
    except InvalidRequirement as e:
        raise ConfigError(path, f"{key}.requires", f"{raw['requires']!r} is not a requirement ({e})",
                          'write a package and a range, e.g. "equinox>=0.11.3"') from None
    if not req.specifier or req.marker is not None or req.url or canonicalize_name(req.name) == package:
        raise ConfigError(path, f"{key}.requires", f"{raw['requires']!r} names no range of another package",
                          'write a package and a range, e.g. "equinox>=0.11.3"')
    return KnownRequirement(package, raw["release"], str(req), raw["note"])


def _failures(path: Path, data: dict, root: Path, settings: Settings) -> list[Failure]:
    """The ``[[failure]]`` tables of a matrix or rules file, each validated, ids unique."""
    failures = [_failure(path, f"failure[{i}]", raw, root, settings)
                for i, raw in enumerate(table_list(path, "failure", data.get("failure", [])))]
    _no_duplicates(path, "failure", [f.id for f in failures])
    return failures


def _python(path: Path, key: str, value: object) -> str:
    if value == "auto":  # the lowest Python that every pin supports (jaxcompat.env.resolution)
        return value
    if not isinstance(value, str) or not PYTHON_RE.match(value):
        raise ConfigError(path, key, f"invalid Python version {value!r}",
                          'write a minor version as a string, e.g. python = "3.11", or "auto"')
    return value


def _backend(path: Path, key: str, value: object) -> str:
    if value not in BACKENDS:
        raise ConfigError(path, key, f"unknown backend {value!r}",
                          f"use one of: {', '.join(BACKENDS)}")
    return str(value)


def _settings(path: Path, raw: object) -> Settings:
    if not isinstance(raw, dict):
        raise ConfigError(path, "settings", "expected a table", "write [settings]")
    unknown_keys(path, "settings", raw, _SETTINGS_KEYS)
    s = Settings()
    timeout = raw.get("case_timeout_s", s.case_timeout_s)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ConfigError(path, "settings.case_timeout_s", f"expected a positive number, got {timeout!r}",
                          "e.g. case_timeout_s = 300")
    harness = str_list(path, "settings.harness", raw.get("harness", list(s.harness)))
    for i, req in enumerate(harness):
        _requirement(path, f"settings.harness[{i}]", req)
    return Settings(
        python=_python(path, "settings.python", raw.get("python", s.python)),
        backend=_backend(path, "settings.backend", raw.get("backend", s.backend)),
        case_timeout_s=float(timeout),
        cases_dir=text_value(path, "settings.cases_dir", raw.get("cases_dir", s.cases_dir)),
        harness=harness,
    )


def _requirement(path: Path, key: str, text: object) -> Requirement:
    if not isinstance(text, str):
        raise ConfigError(path, key, f"expected a requirement string, got {text!r}")
    try:
        req = Requirement(text)
    except InvalidRequirement as e:
        raise ConfigError(path, key, f"invalid requirement {text!r}: {e}",
                          'write a PEP 508 requirement, e.g. "numpy<2"') from None
    if req.url:
        raise ConfigError(path, key, f"URL requirements are not allowed: {text!r}",
                          "pin a released version from the package index")
    return req


def _pins(path: Path, key: str, raw: object) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise ConfigError(path, key, "expected a table of dist = version",
                          'e.g. pins = { jax = "0.4.33", equinox = "0.11.7", diffrax = "*" }')
    pins: dict[str, str] = {}
    for dist, value in raw.items():
        k = f"{key}.{dist}"
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", dist):
            raise ConfigError(path, k, f"invalid distribution name {dist!r}")
        if not isinstance(value, str):
            raise ConfigError(path, k, f"expected a string, got {value!r}",
                              f'quote the version: {dist} = "{value}"')
        value = value.strip()
        if value not in (ANY, LATEST) and not is_exact(value):
            try:
                SpecifierSet(value)
            except InvalidSpecifier:
                raise ConfigError(
                    path, k, f"invalid version {value!r}",
                    'write an exact version ("0.4.33"), a specifier (">=0.6,<0.7"), '
                    '"*" (any release that co-installs) or "latest"') from None
            if not value:
                raise ConfigError(path, k, "empty version", 'write "*" for any version')
        pins[canonicalize_name(dist)] = value
    # jaxlib is not defaulted here: at run time it is the one jax's own metadata asks for
    # (jaxcompat.env.resolution), which does not always carry jax's number.
    return pins


def _date(path: Path, key: str, value: object) -> str | None:
    if value is None:
        return None
    if hasattr(value, "isoformat"):  # TOML local date
        value = value.isoformat()
    if not isinstance(value, str) or not DATE_RE.match(value):
        raise ConfigError(path, key, f"invalid date {value!r}", 'write date = "YYYY-MM-DD"')
    try:  # the pattern lets 2024-02-30 and 2024-13-45 by; uv refuses them only after the downloads
        datetime.date.fromisoformat(value)
    except ValueError:
        raise ConfigError(path, key, f"{value!r} is not a day of the calendar",
                          'write a real day, "YYYY-MM-DD"') from None
    return value


def _cell_id(path: Path, key: str, value: object) -> str:
    value = text_value(path, key, value)
    if not ID_RE.match(value):
        raise ConfigError(path, key, f"invalid cell id {value!r}",
                          "use letters, digits and . _ + - only (it becomes a file name)")
    return value


def _cell(path: Path, where: str, raw: dict, settings: Settings) -> Cell:
    unknown_keys(path, where, raw, _CELL_KEYS)
    if "id" not in raw:
        raise ConfigError(path, f"{where}.id", "missing", 'give every cell an id = "..."')
    if "pins" not in raw:
        raise ConfigError(path, f"{where}.pins", "missing",
                          'e.g. pins = { jax = "0.4.33", equinox = "0.11.7" }')
    constraints = str_list(path, f"{where}.constraints", raw.get("constraints", []))
    for i, c in enumerate(constraints):
        _requirement(path, f"{where}.constraints[{i}]", c)
    return Cell(
        id=_cell_id(path, f"{where}.id", raw["id"]),
        python=_python(path, f"{where}.python", raw.get("python", settings.python)),
        backend=_cell_backend(path, where, raw, settings),
        pins=_pins(path, f"{where}.pins", raw["pins"]),
        constraints=constraints,
        date=_date(path, f"{where}.date", raw.get("date")),
        note=text_value(path, f"{where}.note", raw.get("note", ""), required=False),
    )


def _cell_backend(path: Path, where: str, raw: dict, settings: Settings) -> str:
    """A built cell's backend must be one its jax can install: the jax extra (jax[cuda12],
    jax[cuda13]) is declared from a jax release on; rocm has no extra at all."""
    key = f"{where}.backend" if "backend" in raw else "settings.backend"
    backend = _backend(path, key, raw.get("backend", settings.backend))
    if backend == "rocm":
        raise ConfigError(path, key, "jax declares no rocm extra, so a built cell cannot install ROCm",
                          "check a ROCm environment where it already exists: jax-compat check --env PATH/bin/python")
    jax = raw.get("pins", {}).get("jax") if isinstance(raw.get("pins"), dict) else None
    if backend in JAX_EXTRAS and isinstance(jax, str) and jax[:1].isdigit():
        extra, since = JAX_EXTRAS[backend]
        try:
            too_old = Version(jax) < Version(since)
        except InvalidVersion:
            too_old = False  # the pin's own check reports it
        if too_old:
            raise ConfigError(path, key, f"jax {jax} does not declare the {extra} extra (jax[{extra}] exists from "
                              f"jax {since}), so backend = {backend!r} cannot be installed with it",
                              f"pin jax >= {since} for backend = {backend!r}, or use another backend")
    return backend


def _grid(path: Path, where: str, raw: dict, settings: Settings) -> list[Cell]:
    """Expand a [[grid]]: the cross product of its axes, minus exclusions."""
    unknown_keys(path, where, raw, _GRID_KEYS)
    axes = raw.get("axes")
    if not isinstance(axes, dict) or not axes or not all(
            isinstance(v, list) and v and all(isinstance(x, str) for x in v) for v in axes.values()):
        raise ConfigError(path, f"{where}.axes", "expected a table of dist = [versions]",
                          'e.g. axes = { jax = ["0.4.31", "0.4.33"], equinox = ["0.11.6", "0.11.7"] }')
    template = raw.get("id", "-".join(f"{d}{{{d}}}" for d in axes))
    excludes = table_list(path, f"{where}.exclude", raw.get("exclude", []))
    for i, ex in enumerate(excludes):
        unknown_keys(path, f"{where}.exclude[{i}]", ex, set(axes))
    base_pins = raw.get("pins", {})
    cells = []
    names = list(axes)
    for combo in itertools.product(*(axes[n] for n in names)):
        chosen = dict(zip(names, combo, strict=True))
        if any(all(chosen.get(k) == v for k, v in ex.items()) for ex in excludes):
            continue
        try:
            cell_id = template.format(**chosen)
        except (KeyError, IndexError, ValueError) as e:
            raise ConfigError(path, f"{where}.id", f"bad id template {template!r}: {e}",
                              f"use placeholders among: {', '.join('{' + n + '}' for n in names)}") from None
        cell_raw = {k: raw[k] for k in ("python", "backend", "constraints", "note") if k in raw}
        cell_raw.update(id=cell_id, pins={**base_pins, **chosen})
        cells.append(_cell(path, f"{where}[{cell_id}]", cell_raw, settings))
    return cells


def _affects(path: Path, key: str, raw: object) -> tuple[dict[str, SpecifierSet], ...]:
    clauses = raw if isinstance(raw, list) else [raw]
    if not clauses or not all(isinstance(c, dict) and c for c in clauses):
        raise ConfigError(path, key, "expected a table of dist = specifier, or a list of them (OR-ed)",
                          'e.g. affects = { jax = ">=0.4.32", equinox = "<0.11.8" }')
    out = []
    for i, clause in enumerate(clauses):
        spec: dict[str, SpecifierSet] = {}
        for dist, value in clause.items():
            k = f"{key}[{i}].{dist}" if isinstance(raw, list) else f"{key}.{dist}"
            if not isinstance(value, str):
                raise ConfigError(path, k, f"expected a specifier string, got {value!r}")
            try:
                spec[canonicalize_name(dist)] = SpecifierSet(value)
            except InvalidSpecifier:
                raise ConfigError(path, k, f"invalid version specifier {value!r}",
                                  'write e.g. ">=0.4.32" or ">=0.11.0,<0.11.8" ("*" is not a specifier; '
                                  'use ">=0" for any version)') from None
        out.append(spec)
    return tuple(out)


def _failure(path: Path, where: str, raw: dict, root: Path, settings: Settings) -> Failure:
    unknown_keys(path, where, raw, _FAILURE_KEYS)
    for required in ("id", "affects", "error", "match", "upstream", "fix"):
        if required not in raw:
            raise ConfigError(path, f"{where}.{required}", "missing",
                              "every [[failure]] needs id, affects, error, match, upstream and fix")
    fid = text_value(path, f"{where}.id", raw["id"])
    where = f"failure[{fid}]"
    stage = raw.get("stage", "case")
    if stage not in STAGES:
        raise ConfigError(path, f"{where}.stage", f"unknown stage {stage!r}",
                          f"use one of: {', '.join(STAGES)}")
    cases = _cases(path, f"{where}.cases", raw.get("cases", []))
    if stage == "case" and not cases:
        raise ConfigError(path, f"{where}.cases", "missing",
                          'list the reproducing tests, e.g. cases = ["cases/test_x.py::test_y"]')
    for i, entry in enumerate(cases):
        _check_case(path, f"{where}.cases[{i}]", entry.case, root, settings)
    _no_duplicates(path, f"{where}.cases", [entry.case for entry in cases])
    backends = str_list(path, f"{where}.backend", raw.get("backend", []))
    for i, b in enumerate(backends):
        _backend(path, f"{where}.backend[{i}]", b)
    pattern = text_value(path, f"{where}.match", raw["match"])
    try:
        match = re.compile(pattern, re.DOTALL)
    except re.error as e:
        raise ConfigError(path, f"{where}.match", f"invalid regular expression: {e}",
                          "escape special characters, e.g. \\( \\. \\[") from None
    upstream = str_list(path, f"{where}.upstream", raw["upstream"])
    for i, url in enumerate(upstream):
        if not url.startswith("https://"):
            raise ConfigError(path, f"{where}.upstream[{i}]", f"not an https URL: {url!r}",
                              "link the upstream issue, PR or commit")
    return Failure(
        id=fid, title=text_value(path, f"{where}.title", raw.get("title", fid)), stage=stage,
        cases=cases, affects=_affects(path, f"{where}.affects", raw["affects"]),
        backends=backends, errors=str_list(path, f"{where}.error", raw["error"]), match=match,
        upstream=upstream, fix=text_value(path, f"{where}.fix", raw["fix"]),
        workaround=text_value(path, f"{where}.workaround", raw.get("workaround", ""), required=False),
        advisory=_bool(path, f"{where}.advisory", raw.get("advisory", False)),
        collateral=_collateral(path, f"{where}.collateral", raw.get("collateral", []), root, settings),
        source=str(path),
    )


def _collateral(path: Path, key: str, raw: object, root: Path, settings: Settings) -> tuple[str, ...]:
    items = str_list(path, key, raw)
    for i, item in enumerate(items):
        if item.rstrip("/") == settings.cases_dir.rstrip("/"):
            continue
        _check_case(path, f"{key}[{i}]", item, root, settings)
    return items


def _bool(path: Path, key: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(path, key, f"expected true or false, got {value!r}")
    return value


def _cases(path: Path, key: str, raw: object) -> tuple[CaseEntry, ...]:
    """``cases`` entries: "file::test" strings, or { case = "...", affects = {...} } tables."""
    items = raw if isinstance(raw, list) else [raw]
    entries: list[CaseEntry] = []
    for i, item in enumerate(items):
        k = f"{key}[{i}]"
        if isinstance(item, dict):
            unknown_keys(path, k, item, {"case", "affects"})
            if "case" not in item:
                raise ConfigError(path, f"{k}.case", "missing",
                                  'write { case = "cases/test_x.py::test_y", affects = {...} }')
            narrowed = _affects(path, f"{k}.affects", item["affects"]) if "affects" in item else None
            entries.append(CaseEntry(text_value(path, f"{k}.case", item["case"]), narrowed))
        elif isinstance(item, str):
            entries.append(CaseEntry(item))
        else:
            raise ConfigError(path, k, f"expected a node id string or a table, got {item!r}",
                              'e.g. "cases/test_x.py::test_y"')
    return tuple(entries)


def _check_case(path: Path, key: str, case: str, root: Path, settings: Settings) -> None:
    file, _, name = case.partition("::")
    target = root / file
    if not file.startswith(settings.cases_dir.rstrip("/") + "/") or not target.is_file():
        raise ConfigError(path, key, f"case file {file!r} does not exist",
                          f"name a file under {settings.cases_dir}/, e.g. "
                          f"\"{settings.cases_dir}/test_callback_error_deferral.py::test_error_if\"")
    if name:
        tests = test_names(target)
        if name.split("[")[0] not in tests:
            raise ConfigError(path, key, f"no test {name!r} in {file}",
                              f"use one of: {', '.join(sorted(tests)) or '(none found)'}")


def test_names(path: Path) -> set[str]:
    """Top-level test function names in a case file, read without importing it."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return {n.name for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test")}


def _no_duplicates(path: Path, key: str, ids: list[str]) -> None:
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            raise ConfigError(path, key, f"duplicate id {i!r}",
                              f"give each {key} a unique id (grids generate ids from their template)")
        seen.add(i)

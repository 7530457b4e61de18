"""What releases really need: requirements observed by importing them, not the ones declared.

A candidate cell holds the user's pins and the packages the suite added so every case can run
(diffrax, optimistix, lineax, chex: ``Cell.added``). After the cell is installed, each added
package is imported with the user's pins (``probe``, one ``python -c`` before pytest). When one
fails, it is walked back along its releases, newest first, to the newest one that imports
(``settle``); the cell is re-locked with that pin. If none imports, the package is left out and
the cases that need it are skipped with the reason. A package the suite added never makes the
user's candidate "not work".

What a failed import shows (``optimistix 0.0.7`` reads ``equinox.internal.X``, which equinox
0.11.2 lacks although optimistix declares ``equinox>=0.11.0``) becomes a record: in
``<state>/learned.json`` at once, and in the committed ``jaxcompat/data/learned.json`` with
``python -m jaxcompat learned --save``. Every later resolution applies the records as constraints
(``optimistix!=0.0.7`` when the cell pins equinox 0.11.2), so the walk is paid once.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from jaxcompat._util.atomic import write_text
from jaxcompat._util.statedir import StateDir
from jaxcompat.model.learned import Added, ImportFailure, Learned
from jaxcompat.model.matrix import Cell
from jaxcompat.plugin.packages import IMPORT_FAILED, IMPORTED

DATA = Path(__file__).resolve().parents[1] / "data" / "learned.json"
SAVE_COMMAND = "python -m jaxcompat learned --save"
SCHEMA = 1
MAX_TRIES = 8  # releases tried per package before it is left out

# What an import error says it lacked, and from which module.
_MISSING = (
    re.compile(r"module '(?P<mod>[\w.]+)' has no attribute '(?P<name>\w+)'"),
    re.compile(r"cannot import name '(?P<name>\w+)' from '(?P<mod>[\w.]+)'"),
    re.compile(r"No module named '(?P<mod>[\w.]+)'"),
)


class LearnedError(ValueError):
    """The learned-requirements file is malformed: the message names the file, the key and the fix."""


def _is_version(v: object) -> bool:
    try:
        Version(str(v))
        return isinstance(v, str)
    except InvalidVersion:
        return False


def parse(data: object, path: Path) -> list[Learned]:
    """Records from the file's JSON, validated at the boundary (file, key, fix)."""
    def bad(key: str, problem: str, fix: str) -> LearnedError:
        return LearnedError(f"{path}: {key}: {problem}; fix: {fix} (or regenerate it: {SAVE_COMMAND})")

    if not isinstance(data, dict) or not isinstance(data.get("learned"), list):
        raise bad("learned", "missing or not a list", 'write {"schema": 1, "learned": [...]}')
    if data.get("schema") != SCHEMA:
        raise bad("schema", f"is {data.get('schema')!r}, this version reads {SCHEMA}", f'set "schema": {SCHEMA}')
    out = []
    for i, rec in enumerate(data["learned"]):
        where = f"learned[{i}]"
        if not isinstance(rec, dict):
            raise bad(where, "not a table", "each record is an object with package, release, requires, ...")
        for key in ("package", "release", "requires", "declares", "error", "frame"):
            if not isinstance(rec.get(key), str):
                raise bad(f"{where}.{key}", "missing or not a string", f"give {key} as a string")
        unknown = set(rec) - {f for f in Learned.__dataclass_fields__}
        if unknown:
            raise bad(f"{where}.{sorted(unknown)[0]}", "unknown key", "remove it")
        if canonicalize_name(rec["package"]) != rec["package"]:
            raise bad(f"{where}.package", f"{rec['package']!r} is not a canonical name",
                      f"write {canonicalize_name(rec['package'])!r}")
        if not _is_version(rec["release"]):
            raise bad(f"{where}.release", f"{rec['release']!r} is not a version", "write a release, e.g. 0.0.7")
        try:
            req = Requirement(rec["requires"])
        except InvalidRequirement as e:
            raise bad(f"{where}.requires", f"{rec['requires']!r} is not a requirement ({e})",
                      'write e.g. "equinox>0.11.2"') from None
        if not req.specifier or req.marker is not None or req.url:
            raise bad(f"{where}.requires", f"{rec['requires']!r} names no version range",
                      'write a name and a range, e.g. "equinox>0.11.2"')
        try:
            SpecifierSet(rec["declares"])
        except InvalidSpecifier:
            raise bad(
                f"{where}.declares", f"{rec['declares']!r} is not a specifier", 'write e.g. ">=0.11.0" or ""'
            ) from None
        tried = rec.get("tried", [])
        if not isinstance(tried, list) or not all(isinstance(t, dict) and isinstance(t.get("with"), dict)
                                                  and t.get("imports") in (IMPORTED, IMPORT_FAILED) for t in tried):
            raise bad(f"{where}.tried", "not a list of {with: {dist: version}, imports: ok|error}",
                      "fix or remove the list")
        out.append(Learned(package=rec["package"], release=rec["release"], requires=str(req),
                           declares=rec["declares"], error=rec["error"], frame=rec["frame"],
                           tried=tuple(tried), observed=str(rec.get("observed", ""))))
    return out


def load(path: Path) -> list[Learned]:
    """The records of ``path`` ([] when it does not exist)."""
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as e:
        raise LearnedError(f"{path}: not JSON ({e}); fix the file or regenerate it: {SAVE_COMMAND}") from None
    return parse(data, path)


def dump(records: list[Learned]) -> str:
    ordered = sorted(records, key=lambda r: (r.package, Version(r.release), r.requires))
    return json.dumps({"schema": SCHEMA, "generated_by": SAVE_COMMAND,
                       "learned": [{**asdict(r), "tried": list(r.tried)} for r in ordered]}, indent=2) + "\n"


def merge(old: list[Learned], new: list[Learned]) -> list[Learned]:
    """One record per (package, release, needed package); a later observation with a tighter
    bound replaces the looser one, its evidence added."""
    out: dict[tuple[str, str, str], Learned] = {}
    for r in old + new:
        key = (r.package, r.release, canonicalize_name(r.needs.name))
        prev = out.get(key)
        if prev is None:
            out[key] = r
            continue
        tried = prev.tried + tuple(t for t in r.tried if t not in prev.tried)
        out[key] = replace(_tighter(prev, r), tried=tried)
    return list(out.values())


def _tighter(a: Learned, b: Learned) -> Learned:
    """Of two records for one release, the one whose bound excludes more (same direction)."""
    sa, sb = list(a.needs.specifier), list(b.needs.specifier)
    if len(sa) == len(sb) == 1 and sa[0].operator == sb[0].operator:
        va, vb = Version(sa[0].version), Version(sb[0].version)
        if sa[0].operator in (">", ">="):
            return b if vb > va else a
        if sa[0].operator in ("<", "<="):
            return b if vb < va else a
    return b


def state_file(state_dir: Path) -> Path:
    return StateDir(state_dir).learned


def known(state_dir: Path, committed: Path = DATA, by_hand: tuple = ()) -> list[Learned]:
    """The committed records and those this state observed since; a ``[[requirement]]`` of
    matrix.toml (``by_hand``) confirms or overrides the record of its release."""
    records = merge(load(committed), load(state_file(state_dir)))
    if not by_hand:
        return records
    hand = {(k.package, k.release): k for k in by_hand}
    kept = [r for r in records if (r.package, r.release) not in hand]
    for k in by_hand:
        seen = next((r for r in records if (r.package, r.release) == (k.package, k.release)), None)
        kept.append(Learned(package=k.package, release=k.release, requires=k.requires,
                            declares=seen.declares if seen else "", error=k.note, frame="matrix.toml [[requirement]]",
                            tried=seen.tried if seen else (), observed=seen.observed if seen else ""))
    return kept


def record(state_dir: Path, new: list[Learned]) -> None:
    if new:
        path = state_file(state_dir)
        write_text(path, dump(merge(load(path), new)))


def constraints(records: list[Learned], pins: dict[str, str], added: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(uv requirements, reasons): ``pkg!=release`` for every learned release of an added package
    whose real requirement the cell's exact pins leave unmet."""
    reqs, reasons = [], []
    for r in records:
        if r.package in added and r.unmet(pins) and f"{r.package}!={r.release}" not in reqs:
            reqs.append(f"{r.package}!={r.release}")
            reasons.append(r.reason())
    return reqs, reasons


# --- observing ---------------------------------------------------------------------------------

def culprit(failure: ImportFailure, added: list[str], importing: str) -> str:
    """The added package whose own code raised: the innermost frame in one of them (else the
    package being imported)."""
    for pkg in reversed([f.package for f in failure.frames if f.package]):
        if pkg in added:
            return pkg
    return importing


def frame(failure: ImportFailure, package: str) -> str:
    """``optimistix/_misc.py:12``: the innermost frame in ``package``'s own code."""
    found = [f"{f.in_package}:{f.line}" for f in failure.frames if f.package == package]
    return found[-1] if found else ""


def lacked(failure: ImportFailure) -> tuple[str, str] | None:
    """(distribution, name) that the import error says it lacked, e.g. ("equinox", "X")."""
    for pattern in _MISSING:
        m = pattern.search(failure.error)
        if m:
            return canonicalize_name(m.group("mod").split(".")[0]), m.groupdict().get("name") or m.group("mod")
    return None


def learn(package: str, release: str, failure: ImportFailure, versions: dict[str, str], dates: dict[str, str],
          declared: str, user: dict[str, str], first: Callable[[str, str, str], str | None] = None) -> Learned | None:
    """The real requirement a failed import shows, or None when it names nothing we can pin.

    ``versions``: what was installed; ``dates``: {dist: release date} of the release that failed
    and of the lacking package's installed release. An attribute the lacking package's release
    predates was added later (needs a newer one: ``>``); one it postdates was removed (``<``)."""
    what = lacked(failure)
    if what is None:
        return None
    dep, name = what
    if dep == package or dep not in versions:
        return None
    have = versions[dep]
    newer_needed = dates.get(dep, "") <= dates.get(package, "")
    requires = f"{dep}{'>' if newer_needed else '<'}{have}"
    if newer_needed and first is not None:
        # the first later release whose code defines the name: "needs equinox>=0.11.3"
        found = first(dep, name, have)
        requires = f"{dep}>={found}" if found else requires
    return Learned(package=package, release=release, requires=requires, declares=declared,
                   error=failure.error[:300], frame=frame(failure, package),
                   tried=({"with": dict(sorted(user.items())), "imports": IMPORT_FAILED},),
                   observed=dt.date.today().isoformat())


# --- settling the added packages ---------------------------------------------------------------

@dataclass
class World:
    """What settling needs from the outside (the real one: ``real_world``; tests: recordings)."""

    lock: Callable[[Cell], str]  # the cell's lock text (raises envs.BuildError)
    imports: Callable[[Cell, str, list[str]], dict[str, str]]  # install the lock, import these
    dates: Callable[[str], dict[str, str]]  # {version: upload date} of a distribution
    declared: Callable[[str, str, str], str]  # what dist==version declares of another ("" = anything)
    # the first release of dist after a version whose code defines a name (None: none found)
    defines: Callable[[str, str, str], str | None] = lambda dist, name, after: None


@dataclass
class Settled:
    cell: Cell
    lock_text: str
    added: dict[str, Added]
    learned: list[Learned]
    notes: list[str]
    user_failed: dict[str, str]  # the user's pins that did not import: {module: traceback}


def prepare(cell: Cell, records: list[Learned],
            released: Callable[[str, str], str] | None = None) -> tuple[Cell, list[Learned]]:
    """The cell with every learned release it must not install avoided (before it is locked),
    and the records that applied: only releases the resolver could pick (uploaded before the
    cell's date, per ``released``; their declared requirement met by the pins)."""
    if not cell.added:
        return cell, []
    pins = cell.exact_pins()

    def could_pick(r: Learned) -> bool:
        have = pins.get(canonicalize_name(r.needs.name))
        if have and r.declares and not SpecifierSet(r.declares).contains(Version(have), prereleases=True):
            return False  # its metadata already rules it out
        return not (released and cell.date and (released(r.package, r.release) or "") >= cell.date)

    applied = [r for r in records if r.package in cell.added and r.unmet(pins)
               and f"{r.package}!={r.release}" not in cell.avoid and could_pick(r)]
    new = tuple(dict.fromkeys(f"{r.package}!={r.release}" for r in applied))
    return (replace(cell, avoid=cell.avoid + new) if new else cell), applied


def settle(cell: Cell, lock_text: str, world: World, lock_versions: Callable[[str], dict[str, str]],
           ecosystem: tuple[str, ...], applied: list[Learned] = ()) -> Settled:
    """Import the user's pins and every added package; walk each added package that fails back
    along its releases, newest first, to the newest one that imports (or leave it out).
    ``applied``: the learned records ``prepare`` avoided releases by (reported as skipped)."""
    out = Settled(cell, lock_text, {d: Added() for d in cell.added}, [], [], {})
    for r in applied:
        out.added[r.package].skipped.append({"version": r.release, "reason": f"{r.reason()} [learned]",
                                             "error": r.error, "frame": r.frame})
        out.notes.append(f"{r.package} {r.release} skipped: {r.reason()} [learned]")
    tries: dict[str, int] = {}
    for _ in range(MAX_TRIES * max(1, len(cell.added)) + 1):
        versions = lock_versions(out.lock_text)
        present = [d for d in out.cell.added if d in versions]
        user = [d for d in out.cell.pins if d in ecosystem and d not in out.cell.added and d in versions]
        if not present:
            break
        imports = world.imports(out.cell, out.lock_text, user + present)
        out.user_failed = {m: tb for m in user if (tb := imports.get(m, "not probed")) != IMPORTED}
        if out.user_failed:
            break  # the user's own pins fail: that is the verdict (pytest observes it again)
        failing = [m for m in present if imports.get(m) != IMPORTED]
        if not failing:
            break
        failure = ImportFailure.of(imports[failing[0]])
        pkg = culprit(failure, present, failing[0])
        if f"{pkg}!={versions[pkg]}" in out.cell.avoid or pkg not in out.cell.pins:
            pkg = failing[0]  # already avoided, yet installed as another added package's dependency
        release = versions[pkg]
        tries[pkg] = tries.get(pkg, 0) + 1
        exact = {d: versions[d] for d in user}
        dates = world.dates(pkg)
        lacking = lacked(failure)
        dep_dates = world.dates(lacking[0]) if lacking and lacking[0] in versions and lacking[0] != pkg else {}
        declared = world.declared(pkg, release, lacking[0]) if lacking else ""
        rec = learn(pkg, release, failure, versions,
                    {pkg: dates.get(release, ""), **({lacking[0]: dep_dates.get(versions[lacking[0]], "")}
                                                     if dep_dates else {})}, declared, exact, world.defines)
        where = frame(failure, pkg)
        why = rec.reason() if rec else f"{pkg} {release} does not import with your pins (`{failure.error[:200]}`)"
        if rec:
            out.learned.append(rec)
        out.added[pkg].skipped.append({"version": release, "reason": why, "error": failure.error[:300],
                                       "frame": where})
        out.notes.append(f"{pkg} {release} skipped: {why}")
        if tries[pkg] >= MAX_TRIES:
            out.cell = _drop(out.cell, pkg)
        else:
            out.cell = replace(out.cell, avoid=out.cell.avoid + (f"{pkg}!={release}",))
        try:
            out.lock_text = world.lock(out.cell)
        except Exception:  # noqa: BLE001 - envs.BuildError: nothing older co-installs; leave it out
            out.cell = _drop(out.cell, pkg)
            out.lock_text = world.lock(out.cell)
    _settled_versions(out, lock_versions(out.lock_text))
    return out


def _settled_versions(out: Settled, versions: dict[str, str]) -> None:
    """Each added package's final release, or why it was left out."""
    for d, a in out.added.items():
        a.version = versions.get(d)
        if a.version is None:
            a.left_out = ("no release imports with your pins: " + "; ".join(s["reason"] for s in a.skipped)
                          if a.skipped else "it does not co-install with your pins")
        elif a.skipped:
            out.notes.append(f"{d} {a.version}: the newest release that imports with your pins")


def _drop(cell: Cell, pkg: str) -> Cell:
    """The cell without added package ``pkg`` (the cases that need it skip)."""
    return replace(cell, pins={d: v for d, v in cell.pins.items() if d != pkg},
                   added=tuple(d for d in cell.added if d != pkg))


def save(state_dir: Path, committed: Path = DATA) -> list[Learned]:
    """Merge what this state observed into the committed file (``python -m jaxcompat learned --save``)."""
    records = known(state_dir, committed)
    write_text(committed, dump(records))
    return records

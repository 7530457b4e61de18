"""What a combination really needs before the resolver sees it: the jaxlib that jax's own
metadata asks for, and a Python that every pinned release supports.

jaxlib does not always carry jax's number (jax 0.4.37 runs on jaxlib 0.4.36, jax 0.5.2 on
0.5.1, jax 0.12.0.1 on jaxlib >= 0.11.2), so it is read from jax's Requires-Dist (or, for the
sdist-only releases <= 0.4.15, from their setup.py), never invented. The Python is the lowest of
3.10–3.13 that this machine has and that every exact pin accepts (``Requires-Python`` and, for
jaxlib, the CPython tags of its wheels), unless the caller asked for one.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
import tarfile
import urllib.request
import zipfile
from pathlib import Path
from urllib.parse import urljoin

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from jaxcompat._util.atomic import write_text
from jaxcompat._util.statedir import CacheDir
from jaxcompat.env import releases, sources
from jaxcompat.env.pythons import PythonMissing, find_python
from jaxcompat.model.index import local_path
from jaxcompat.model.matrix import AUTO, Cell, is_exact

PYTHONS = ("3.10", "3.11", "3.12", "3.13")
BINARY = ("jaxlib",)  # compiled: a CPython wheel tag must exist for the chosen Python
_CP_TAG = re.compile(r"-cp3(\d+)-")
_SETUP_JAXLIB = re.compile(r"""_current_jaxlib_version\s*=\s*['"]([^'"]+)['"]""")


class ResolutionError(Exception):
    """The combination cannot be installed; the message says why, in the index's terms."""


def _project(dist: str, cache_dir: Path) -> dict:
    """The index's project JSON (files per version), cached beside the release dates."""
    cache = CacheDir(cache_dir).project(dist)
    if cache.is_file():
        try:
            return json.loads(cache.read_text())
        except ValueError:
            pass
    raw = releases.fetch_info(dist)
    data = {"url": f"{releases.PYPI_JSON}/{dist}/json",
            "files": {v: [{"filename": f["filename"], "url": f["url"],
                           "requires_python": f.get("requires_python") or "",
                           "yanked": f.get("yanked", False),
                           "date": f["upload_time_iso_8601"][:10]} for f in fs]
                      for v, fs in raw.get("releases", {}).items() if fs}}
    write_text(cache, json.dumps(data))
    return data


def _files(dist: str, version: str, cache_dir: Path) -> list[dict]:
    project = _project(dist, cache_dir)
    if version not in project["files"]:
        CacheDir(cache_dir).project(dist).unlink(missing_ok=True)  # maybe a new release
        project = _project(dist, cache_dir)
    if version not in project["files"]:
        raise ResolutionError(f"{dist} {version} is not a release on the package index")
    return project["files"][version]


def download(dist: str, version: str, cache_dir: Path) -> tuple[str, bytes]:
    """A release's wheel (any one: the first listed; else its sdist), as (file name, bytes)."""
    files = _files(dist, version, cache_dir)
    chosen = next((f for f in files if f["filename"].endswith(".whl")), files[0])
    url = urljoin(_project(dist, cache_dir)["url"], chosen["url"])
    with urllib.request.urlopen(url, timeout=60) as resp:
        return chosen["filename"], resp.read()


def download_sdist(dist: str, version: str, cache_dir: Path) -> tuple[str, bytes]:
    """A release's source distribution (where a project's tests usually travel), as (file name,
    bytes); a ResolutionError when the release has none."""
    files = [f for f in _files(dist, version, cache_dir) if f["filename"].endswith((".tar.gz", ".zip"))]
    if not files:
        raise ResolutionError(f"{dist} {version} has no source distribution on the package index (wheels only)")
    url = urljoin(_project(dist, cache_dir)["url"], files[0]["url"])
    with urllib.request.urlopen(url, timeout=120) as resp:
        return files[0]["filename"], resp.read()


def newest_as_of(dist: str, date: str, cache_dir: Path) -> str:
    """The newest final release of ``dist`` uploaded before ``date`` (YYYY-MM-DD)."""
    files = _project(dist, cache_dir)["files"]
    best: Version | None = None
    for v, fs in files.items():
        try:
            ver = Version(v)
        except InvalidVersion:
            continue
        if ver.is_prerelease or not fs or min(f["date"] for f in fs) >= date or all(f["yanked"] for f in fs):
            continue
        best = ver if best is None or ver > best else best
    if best is None:
        raise ResolutionError(f"{dist} has no release before {date}")
    return str(best)


def requires(dist: str, version: str, cache_dir: Path) -> list[str]:
    """The Requires-Dist lines of a release (read from its wheel; the index serves no metadata)."""
    cache = CacheDir(cache_dir).requires(dist, version)
    if cache.is_file():
        return json.loads(cache.read_text())
    name, blob = download(dist, version, cache_dir)
    lines: list[str] = []
    if name.endswith(".whl"):
        with zipfile.ZipFile(io.BytesIO(blob)) as z:
            meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
            lines = [ln.split(":", 1)[1].strip() for ln in z.read(meta).decode().splitlines()
                     if ln.startswith("Requires-Dist:")]
    write_text(cache, json.dumps(lines))
    return lines


def declared(dist: str, version: str, on: str, cache_dir: Path) -> SpecifierSet:
    """What release ``dist version`` declares it needs of ``on`` (unconditionally); "" = anything."""
    for line in requires(dist, version, cache_dir):
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.name.lower() == on and (req.marker is None or "extra" not in str(req.marker)):
            return req.specifier
    return SpecifierSet()


def jaxlib_requirement(jax_version: str, cache_dir: Path) -> SpecifierSet:
    """The jaxlib specifier that jax ``jax_version`` declares (for a CPU install)."""
    cache = CacheDir(cache_dir).jaxlib_requirement(jax_version)
    if cache.is_file():
        return SpecifierSet(cache.read_text().strip())
    name, blob = download("jax", jax_version, cache_dir)
    spec = _jaxlib_spec_from_wheel(blob) if name.endswith(".whl") else _jaxlib_spec_from_sdist(blob)
    if spec is None:
        raise ResolutionError(f"jax {jax_version}'s metadata names no jaxlib ({name})")
    write_text(cache, str(spec) + "\n")
    return spec


def _jaxlib_spec_from_wheel(blob: bytes) -> SpecifierSet | None:
    with zipfile.ZipFile(io.BytesIO(blob)) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        return jaxlib_spec_from_metadata(z.read(name).decode())


def jaxlib_spec_from_metadata(metadata: str) -> SpecifierSet | None:
    """An unconditional ``Requires-Dist: jaxlib…`` wins; else the one for the ``cpu`` extra."""
    found: dict[str, SpecifierSet] = {}
    for line in metadata.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        try:
            req = Requirement(line.split(":", 1)[1].strip())
        except InvalidRequirement:
            continue
        if req.name != "jaxlib":
            continue
        marker = str(req.marker or "")
        key = "" if not marker else (m.group(1) if (m := re.search(r'extra == "([^"]+)"', marker)) else marker)
        found.setdefault(key, req.specifier)
    return found.get("", found.get("cpu"))


def _jaxlib_spec_from_sdist(blob: bytes) -> SpecifierSet | None:
    with tarfile.open(fileobj=io.BytesIO(blob)) as t:
        for member in t.getmembers():
            if member.name.count("/") == 1 and member.name.endswith(("/PKG-INFO", "/setup.py")):
                text = t.extractfile(member).read().decode()
                spec = jaxlib_spec_from_metadata(text) if member.name.endswith("PKG-INFO") else (
                    SpecifierSet(f"=={m.group(1)}") if (m := _SETUP_JAXLIB.search(text)) else None)
                if spec is not None:
                    return spec
    return None


def pick_jaxlib(jax_version: str, spec: SpecifierSet, cache_dir: Path, date: str | None) -> str:
    """The jaxlib pip would install for ``spec`` as of ``date``: the newest matching release
    uploaded by then (else the newest matching at all)."""
    project = _project("jaxlib", cache_dir)["files"]
    matching = []
    for v, files in project.items():
        try:
            if spec.contains(Version(v), prereleases=False):
                matching.append((Version(v), v, files))
        except InvalidVersion:
            continue
    # Like pip: a yanked jaxlib only when nothing else satisfies jax (jax 0.4.32 -> jaxlib 0.4.32).
    usable = [m for m in matching if not all(f["yanked"] for f in m[2])] or matching
    if not usable:
        raise ResolutionError(
            f"jax {jax_version} asks for jaxlib{spec} (its own metadata), and no such jaxlib was ever "
            f"published on the package index (the nearest jaxlib releases: {_neighbours(project, jax_version)})")
    dated = [m for m in usable if date is None or min(f["date"] for f in m[2]) < date]
    return max(dated or usable)[1]


def _neighbours(project: dict, target: str) -> str:
    ordered = sorted(Version(v) for v in project if is_exact(v))
    t = Version(target)
    below = [str(v) for v in ordered if v < t][-1:]
    above = [str(v) for v in ordered if v > t][:1]
    return " and ".join(below + above) or "none"


def python_fits(version: str, pins: dict[str, str], cache_dir: Path) -> str:
    """"" when every exact pin installs on Python ``version``; else why not."""
    py = Version(version + ".0")
    for dist, pinned in sorted(pins.items()):
        if not is_exact(pinned):
            continue
        files = _files(dist, pinned, cache_dir)
        wheels = [f for f in files if f["filename"].endswith(".whl")]
        requires = next((f["requires_python"] for f in wheels or files if f["requires_python"]), "")
        if requires and not SpecifierSet(requires).contains(py, prereleases=True):
            return f"{dist} {pinned} requires Python {requires}"
        if dist in BINARY and wheels:
            tags = {f"3.{m.group(1)}" for f in wheels if "linux" in f["filename"]
                    and (m := _CP_TAG.search(f["filename"]))}
            if tags and version not in tags:
                return f"{dist} {pinned} has wheels for Python {', '.join(sorted(tags, key=_pykey))} only"
    return ""


def _pykey(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


def choose_python(pins: dict[str, str], cache_dir: Path, pythons=PYTHONS,
                  also: tuple[dict[str, str], ...] = ()) -> str:
    """The lowest of ``pythons`` that this machine has and every exact pin supports (of ``pins``
    and of each pin set in ``also``: one Python for a baseline and its candidate)."""
    reasons, missing = [], []
    for version in pythons:
        why = next(filter(None, (python_fits(version, p, cache_dir) for p in (pins, *also))), "")
        if why:
            reasons.append(f"{version}: {why}")
            continue
        try:
            find_python(version)
        except PythonMissing:
            missing.append(version)
            continue
        return version
    if missing:
        raise PythonMissing(f"the pins need Python {' or '.join(missing)}, which this machine lacks "
                            f"(install it with `pyenv install {missing[0]}` or `uv python install "
                            f"{missing[0]}`); other Pythons: {'; '.join(reasons) or 'none'}")
    raise ResolutionError("no Python from " + ", ".join(pythons) + " installs these pins: " + "; ".join(reasons))


def complete(cell: Cell, cache_dir: Path) -> Cell:
    """The cell with jaxlib pinned as jax's metadata asks and ``python = "auto"`` decided.

    A jax that is not a PyPI release (a direct reference, a pre-release only another index has)
    has its jaxlib read from its own wheel, sdist or folder where that is local; the jaxlib is
    then the PyPI release it allows as of the date or, if PyPI has none, the specifier itself (the
    resolver picks it from the given indexes). Where jax's metadata cannot be read here (a git
    URL, a remote index), jaxlib is left to the resolver, which reads it there
    (:func:`jaxlib_notes` says which)."""
    pins = dict(cell.pins)
    off = off_pypi(cell, cache_dir)
    jax = pins.get("jax")
    if jax is not None and "jaxlib" not in pins and (is_exact(jax) or sources.is_direct(jax)):
        date = cell.date or resolution_date(cell, cache_dir)[0]
        if is_exact(jax) and "jax" not in off:
            pins["jaxlib"] = pick_jaxlib(jax, jaxlib_requirement(jax, cache_dir), cache_dir, date)
        else:
            spec, _ = local_jaxlib_requirement(cell)
            if spec is not None:
                try:
                    pins["jaxlib"] = pick_jaxlib(str(jax), spec, cache_dir, date)
                except ResolutionError:
                    if not cell.index.other_index:
                        raise
                    pins["jaxlib"] = str(spec)
    fixed = {d: v for d, v in pins.items() if d not in off}
    python = choose_python(fixed, cache_dir) if cell.python == AUTO else cell.python
    return dataclasses.replace(cell, pins=pins, python=python)


def jaxlib_notes(cell: Cell, done: Cell, cache_dir: Path) -> list[str]:
    """Where the jaxlib of a jax that is not a PyPI release came from (one line; none otherwise)."""
    jax = cell.pins.get("jax", "")
    if "jaxlib" in cell.pins or not (sources.is_direct(jax) or "jax" in off_pypi(cell, cache_dir)):
        return []
    spec, where = local_jaxlib_requirement(cell)
    if "jaxlib" not in done.pins:
        return [f"jaxlib: what the resolver picks for jax's own metadata ({where})"]
    return [f"jaxlib {done.pins['jaxlib']}: what jax's own metadata asks for ({where}: jaxlib{spec})"]


def off_pypi(cell: Cell, cache_dir: Path) -> set[str]:
    """Exact pins that PyPI does not have but another index given may (a nightly, an rc). Without
    another index, an unknown version is the error it always was."""
    if not cell.index.other_index:
        return set()
    out = set()
    for dist, version in cell.exact_pins().items():
        try:
            if version not in releases.release_info(dist, cache_dir, need=version):
                out.add(dist)
        except releases.IndexError_:
            out.add(dist)
    return out


def resolution_date(cell: Cell, cache_dir: Path) -> tuple[str | None, list[str]]:
    """(the day after the newest pin, why) — PyPI releases by their upload, what PyPI does not
    date (a direct reference, a version only another index has) as ``sources`` dates it."""
    off = off_pypi(cell, cache_dir)
    base = releases.resolution_date({d: v for d, v in cell.exact_pins().items() if d not in off}, cache_dir)
    dated = [sources.find_links_date(d, cell.pins[d], cell.index) for d in sorted(off)]
    dated += [sources.ref_date(r) for _, r in sorted(sources.direct_refs(cell.pins).items())]
    if not dated:
        return base, []
    newest = sources.day_after(max(d for d, _ in dated))
    date = max(base, newest) if base else newest
    return date, [f"resolved as of {date}: " + "; ".join(why for _, why in dated)
                  + (f" (the PyPI releases alone: {base})" if base and base != date else "")]


def local_jaxlib_requirement(cell: Cell) -> tuple[SpecifierSet | None, str]:
    """jax's jaxlib requirement read from a local wheel, sdist or folder of jax, or from its wheel
    in a --find-links folder: (specifier or None, where it was read / why it could not be)."""
    jax = cell.pins["jax"]
    path: Path | None = None
    if sources.is_direct(jax):
        ref = sources.direct_refs({"jax": jax})["jax"]
        path = ref.path
        if path is None:
            return None, f"jax from a {ref.kind.NAME}, not readable here"
    else:
        for link in cell.index.find_links:
            folder = local_path(link)
            if folder is not None and folder.is_dir():
                path = next((p for p in sorted(folder.iterdir())
                             if sources._file_is(p.name, "jax", jax)), None)
                if path is not None:
                    break
        if path is None:
            return None, f"jax {jax} is on another index"
    try:
        if path.is_dir():
            for name in ("PKG-INFO", "setup.py"):
                if (path / name).is_file():
                    text = (path / name).read_text(encoding="utf-8")
                    spec = jaxlib_spec_from_metadata(text) if name == "PKG-INFO" else (
                        SpecifierSet(f"=={m.group(1)}") if (m := _SETUP_JAXLIB.search(text)) else None)
                    if spec is not None:
                        return spec, path.name
            return None, f"{path.name} names no jaxlib"
        blob = path.read_bytes()
        spec = _jaxlib_spec_from_wheel(blob) if path.name.endswith(".whl") else _jaxlib_spec_from_sdist(blob)
    except (OSError, ValueError, StopIteration, zipfile.BadZipFile, tarfile.TarError) as e:
        return None, f"{path.name} unreadable: {e}"
    return spec, path.name


def not_released(texts: list[str], cache: Path) -> str:
    """"jax 0.4.34rc1 is not a release on the package index" for the first exact pin (without a URL)
    that PyPI has no release of, or ""."""
    from jaxcompat.env.candidate import parse_requirement

    for text in texts:
        req = parse_requirement(text)
        for spec in req.specifier:
            if spec.operator == "==" and not req.url and "*" not in spec.version:
                try:
                    releases.release_date(req.name, spec.version, cache)
                except releases.IndexError_ as e:
                    return str(e)
    return ""

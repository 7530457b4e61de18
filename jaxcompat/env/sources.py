"""Candidates that are not releases: direct references (a wheel, a project folder, a git URL)
and other package indexes (nightly wheels, release candidates: ``--index-url``,
``--extra-index-url``, ``--find-links``, ``--pre``).

Everything here is parsed at the boundary into typed records. A direct reference is a pin
whose value is ``"@ URL"`` (``equinox @ file:///…/equinox-0.14.0.dev0-py3-none-any.whl``);
index options travel with the cell (:class:`IndexOptions`). Both are part of the
environment's identity: the lock key, the lock text (so the install and the result cache key
change with them) and the content of local files (a wheel rebuilt under the same name is a
new environment).

Dates: a release from PyPI is dated by its upload (``releases``). What PyPI does not date is
dated here: a local wheel or sdist by its file's modification day, a project folder, a git
URL or a remote archive by today (their code is what it is now), a pinned version that only
another index has by its file in a ``--find-links`` folder, else today. The cell resolves as
of the day after the newest of all of them.

What was installed is read back from the environment: each distribution's ``direct_url.json``
(PEP 610: ``url``, ``vcs_info.commit_id``, ``dir_info.editable``, ``archive_info.hashes``) or,
for a release, the index uv's lock says it came from.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from urllib.parse import urlparse

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from jaxcompat.env import candidatekinds
from jaxcompat.env.candidatekinds import files
from jaxcompat.model.index import PYPI_SIMPLE, IndexOptions, SourceError, held_text, local_path

DIRECT = "@ "  # a pin value that is a direct reference: "@ file:///…", "@ git+https://…@ref"
_LOCK_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*(==|@)\s*(\S+)")
_FROM_LINE = re.compile(r"^\s*#\s*from\s+(\S+)")


# --------------------------------------------------------------------------------------------
# Direct references


@dataclass(frozen=True)
class DirectRef:
    """``name @ url``: a wheel, an sdist, a project folder, a git URL or a remote archive."""

    name: str
    url: str
    kind: ModuleType  # one of ``candidatekinds.KINDS``

    @property
    def path(self) -> Path | None:
        return local_path(self.url)

    @property
    def pin(self) -> str:
        return DIRECT + self.url


def is_direct(pin: str) -> bool:
    return pin.startswith(DIRECT)


def looks_like_path(text: str) -> bool:
    """A plain local path given where a requirement was expected (``./dist/x.whl``, ``../equinox``)."""
    text = text.strip()
    return (text in (".", "..") or text.startswith(("/", "./", "../", "~"))
            or text.endswith(candidatekinds.SUFFIXES) and "@" not in text and "==" not in text)


def path_requirement(text: str, cwd: Path | None = None) -> str:
    """``name @ file:///abs`` for a plain path to a wheel, an sdist or a project folder."""
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = (cwd or Path.cwd()) / path
    path = path.resolve()
    if not path.exists():
        raise SourceError(f"{text!r}: no such file or folder (give a wheel, an sdist or a project folder, "
                          f"or a requirement such as equinox==0.13.1)")
    return f"{_name_of(path, text)} @ {path.as_uri()}"


def _name_of(path: Path, given: str) -> str:
    kind = candidatekinds.recognise(path.as_uri(), path)
    if kind is None:
        raise SourceError(f"{given!r}: neither a wheel (.whl), an sdist (.tar.gz, .zip) nor a project folder")
    return kind.name_of(path, given)


def direct_ref(req: Requirement) -> DirectRef:
    """Validate a PEP 508 direct reference: a scheme uv can use, a local file or folder that exists,
    and what its kind checks (for a wheel, a file name of the same distribution)."""
    url = req.url or ""
    scheme = urlparse(url).scheme
    path = local_path(url) if scheme == "file" else None
    if path is not None and not path.is_absolute():
        raise SourceError(f"{req.name} @ {url}: a file URL needs an absolute path (file:///…)")
    if path is not None and not path.exists():
        raise SourceError(f"{req.name} @ {url}: no such file or folder")
    kind = candidatekinds.recognise(url, path)
    if kind is None and path is not None:
        raise SourceError(f"{req.name} @ {url}: neither a wheel, an sdist nor a project folder")
    if kind is None:
        raise SourceError(f"{req.name} @ {url}: uv cannot install from a {scheme or 'scheme-less'} URL; "
                          f"write file:///ABSOLUTE/PATH, https://…/NAME.whl or git+https://HOST/REPO@REF")
    kind.check(req.name, url, path)
    return DirectRef(str(canonicalize_name(req.name)), url, kind)


def target(ref: DirectRef) -> str:
    """The URL a candidate's pin holds for ``ref``: the reference, or the one file it stands for."""
    return ref.kind.target(ref.name, ref.url, ref.path)


def content_digest(ref: DirectRef) -> str:
    """The content of a local direct reference (a file's SHA-256; a folder's files as a checkout's
    are keyed: ``tree.checkout``), "" for a remote one (a git URL is pinned to its commit by the lock)."""
    return ref.kind.digest(ref.name, ref.url, ref.path)


def direct_refs(pins: dict[str, str]) -> dict[str, DirectRef]:
    out = {}
    for dist, value in pins.items():
        if is_direct(value):
            out[dist] = direct_ref(Requirement(f"{dist} {value}"))
    return out


def identity(pins: dict[str, str], index: IndexOptions) -> dict:
    """What beyond the pins' text makes an environment: local direct references' content, the
    index options. Empty for a cell of releases from PyPI (its keys stay what they were)."""
    out: dict = {}
    refs = {d: content_digest(r) for d, r in sorted(direct_refs(pins).items())}
    if any(refs.values()):
        out["direct"] = refs
    if index:
        out["index"] = index_identity(index)
    return out


def index_identity(index: IndexOptions) -> dict:
    """What makes two runs' environments different: the index options, and the files of each
    local find-links folder (a wheel replaced under the same name is a new environment);
    credentials as digests (``held_text``)."""
    links = []
    for link in index.find_links:
        path = local_path(link)
        if path is not None and path.is_dir():
            files_ = sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in path.iterdir() if p.is_file())
            links.append([held_text(link), hashlib.sha256(repr(files_).encode()).hexdigest()[:16]])
        else:
            links.append([held_text(link), ""])
    return {"index_url": held_text(index.index_url), "extra_index_urls": [held_text(u) for u in index.extra_index_urls],
            "find_links": links, "pre": index.pre}


def lock_header(pins: dict[str, str], index: IndexOptions) -> str:
    """Comment lines that put :func:`identity` into the lock text (uv ignores them), so the
    install and the result cache, both keyed by the lock, change with it."""
    ident = identity(pins, index)
    return f"# jaxcompat-identity: {json.dumps(ident, sort_keys=True)}\n" if ident else ""


# --------------------------------------------------------------------------------------------
# Dates


def ref_date(ref: DirectRef) -> tuple[str, str]:
    """(date, why) of a direct reference that PyPI does not date: as its kind dates it."""
    return ref.kind.date(ref.name, ref.url, ref.path)


def find_links_date(dist: str, version: str, index: IndexOptions) -> tuple[str, str]:
    """(date, why) of a release PyPI does not have: its file in a find-links folder, else today."""
    for link in index.find_links:
        folder = local_path(link)
        if folder is None or not folder.is_dir():
            continue
        for p in sorted(folder.iterdir()):
            if _file_is(p.name, dist, version):
                return files.file_date(p), f"{dist} {version} from {p.name}, dated by its file ({files.file_date(p)})"
    return files.today(), f"{dist} {version} is not on PyPI: dated today"


def _file_is(filename: str, dist: str, version: str) -> bool:
    try:
        if filename.endswith(candidatekinds.wheel.SUFFIXES):
            name, ver = parse_wheel_filename(filename)[:2]
        elif filename.endswith(candidatekinds.sdist.SUFFIXES):
            name, ver = parse_sdist_filename(filename)
        else:
            return False
        return canonicalize_name(name) == canonicalize_name(dist) and ver == Version(version)
    except (ValueError, InvalidVersion):
        return False


def day_after(date: str) -> str:
    return (dt.date.fromisoformat(date) + dt.timedelta(days=1)).isoformat()


# --------------------------------------------------------------------------------------------
# What was installed


def read_direct_urls(site_packages: Path) -> dict[str, dict]:
    """{dist: source} for each installed distribution that carries a ``direct_url.json`` (PEP 610)."""
    out: dict[str, dict] = {}
    for info in sorted(site_packages.glob("*.dist-info")):
        path = info / "direct_url.json"
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        name, _, version = info.name[: -len(".dist-info")].partition("-")
        out[str(canonicalize_name(name))] = source_record(version, data)
    return out


def source_record(version: str, direct_url: dict) -> dict:
    """One installed distribution's source, from its ``direct_url.json``."""
    url = str(direct_url.get("url", ""))
    rec: dict = {"version": version, "url": url}
    vcs = direct_url.get("vcs_info")
    if isinstance(vcs, dict):
        rec["kind"] = str(vcs.get("vcs", "vcs"))
        if vcs.get("commit_id"):
            rec["commit"] = str(vcs["commit_id"])
        if vcs.get("requested_revision") and vcs.get("requested_revision") != vcs.get("commit_id"):
            rec["requested"] = str(vcs["requested_revision"])
        rec["url"] = f"{rec['kind']}+{url}" if not url.startswith(f"{rec['kind']}+") else url
        return rec
    dir_info = direct_url.get("dir_info")
    if isinstance(dir_info, dict):
        rec["kind"] = "editable" if dir_info.get("editable") else candidatekinds.folder.NAME
        return rec
    info = direct_url.get("archive_info")
    rec["kind"] = (candidatekinds.wheel.NAME if url.split("#")[0].endswith(".whl")
                   else candidatekinds.sdist.NAME if url.startswith("file:") else candidatekinds.archive.NAME)
    if isinstance(info, dict):
        hashes = info.get("hashes") or {}
        if isinstance(hashes, dict) and hashes.get("sha256"):
            rec["sha256"] = str(hashes["sha256"])
        elif isinstance(info.get("hash"), str):
            rec["hash"] = info["hash"]
    return rec


def lock_sources(lock: str) -> dict[str, dict]:
    """{dist: {"url", "kind"}} from a lock: direct references and, where uv annotated it
    (``# from URL``), the index each release came from."""
    out: dict[str, dict] = {}
    last = ""
    for line in lock.splitlines():
        m = _LOCK_LINE.match(line.strip())
        if m:
            last = str(canonicalize_name(m.group(1)))
            if m.group(2) == "@":
                url = m.group(3)
                out[last] = {"url": url, "kind": _locked_kind(url)}
            else:
                out[last] = {"version": m.group(3)}
            continue
        f = _FROM_LINE.match(line)
        if f and last and "url" not in out.get(last, {}):
            out[last]["url"] = f.group(1)
            out[last]["kind"] = "index"
    return out


def _locked_kind(url: str) -> str:
    """How a lock line's direct reference is named when nothing installed says more (uv wrote the
    line; its file need not be here any more)."""
    kinds = candidatekinds
    if url.startswith("git+"):
        return kinds.git.NAME
    if url.endswith(".whl"):
        return kinds.wheel.NAME
    return kinds.folder.NAME if (p := local_path(url)) is not None and p.is_dir() else kinds.archive.NAME


def sources(dists, installed: dict[str, str], lock: str, site_packages: Path | None,
            find_links: tuple[str, ...] = ()) -> dict[str, dict]:
    """What was installed for ``dists``, exactly: version, source URL, kind (wheel, sdist, folder,
    editable, git, index), commit when git says, and whether the version is a pre-release. Only
    what did not come from PyPI or is a pre-release is listed (a plain release needs no note)."""
    direct = read_direct_urls(site_packages) if site_packages is not None and site_packages.is_dir() else {}
    locked = lock_sources(lock)
    out: dict[str, dict] = {}
    for dist in dists:
        version = installed.get(dist) or locked.get(dist, {}).get("version", "")
        if not version and dist not in direct and dist not in locked:
            continue
        rec = direct.get(dist) or {k: v for k, v in locked.get(dist, {}).items() if k != "version"}
        rec = {"version": version, **{k: v for k, v in rec.items() if k != "version"}}
        if not rec.get("url"):
            rec.update(url=PYPI_SIMPLE, kind="index")
        links = {Path(f).as_uri().rstrip("/") for f in find_links if Path(f).is_absolute()}
        if rec.get("kind") == "index" and rec["url"].rstrip("/") in links:
            rec["kind"] = "find-links"
        path = local_path(rec["url"]) if rec["url"].startswith("file:") else None
        kind = candidatekinds.named(rec.get("kind", ""))
        if kind is not None and "sha256" not in rec and path is not None and path.is_file():
            rec["sha256"] = content_digest(DirectRef(dist, rec["url"], kind))  # uv leaves archive_info empty
        try:
            pre = Version(version).is_prerelease if version else False
        except InvalidVersion:
            pre = False
        if pre:
            rec["prerelease"] = True
        if rec["url"].rstrip("/") != PYPI_SIMPLE or pre:
            out[dist] = rec
    return out


def site_packages(env: Path) -> Path | None:
    found = sorted(env.glob("lib/python3*/site-packages"))
    return found[0] if found else None


def describe(dist: str, rec: dict) -> str:
    """One line for the verdict: ``equinox 0.14.0.dev0 (pre-release) from wheel file://…/x.whl``."""
    kind = rec.get("kind", "")
    where = {"index": "index", "editable": "editable folder"}.get(kind, kind)
    text = f"{dist} {rec.get('version', '?')}" + (" (pre-release)" if rec.get("prerelease") else "")
    text += f" from {where} {rec.get('url', '')}".rstrip()
    if rec.get("commit"):
        text += f" at commit {rec['commit']}"
    if rec.get("sha256"):
        text += f" (sha256 {rec['sha256'][:12]}…)"
    return text


def moving(pins: dict[str, str], index: IndexOptions) -> bool:
    """Whether the same request may resolve to something new tomorrow (a git branch, a remote
    nightly index): its lock is then resolved again on every run, never read from the cache."""
    remote = [u for u in (index.index_url, *index.extra_index_urls, *index.find_links)
              if urlparse(u).scheme in ("http", "https")]
    return bool(remote) or any(is_direct(v) and candidatekinds.moves(v[len(DIRECT):]) for v in pins.values())

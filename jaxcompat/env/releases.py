"""Release dates and version lists from the package index (PyPI's JSON API), cached on disk.

A cell resolves "as of its date": the day after its newest exact pin was first uploaded.
Re-uploads (jaxlib 0.4.13's wheels carry a 2025 date) do not move a release: the earliest file
of a version is its date.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import time
import urllib.error
import urllib.request
from pathlib import Path

from packaging.version import InvalidVersion, Version

from jaxcompat._util.atomic import write_text
from jaxcompat._util.statedir import CacheDir

PYPI_JSON = os.environ.get("JAXCOMPAT_PYPI_JSON", "https://pypi.org/pypi")
MAX_LIST_AGE_S = 24 * 3600  # listing releases (bisect) refetches a day-old cache


class IndexError_(Exception):
    """The index could not tell us about a distribution."""


# What the index client here, uv and pip say when the index or the network does not answer (as
# opposed to a resolver that found no co-installable set): such a side is not judged, never capped.
_UNREACHABLE = re.compile(
    r"could not read https?://\S+ after \d+ attempts|Failed to fetch|error sending request|dns error|"
    r"failed to lookup address|Name or service not known|Temporary failure in name resolution|"
    r"Connection refused|Connection reset|connection closed|Network is unreachable|timed out|"
    r"operation timed out|Max retries exceeded|ProxyError|tunnel connection failed|tcp connect error|"
    r"Could not connect|No route to host|SSL(?:Error| error)|certificate verify failed|"
    r"Could not fetch URL|HTTP status server error|50[234] (?:Bad Gateway|Service Unavailable|Gateway Timeout)",
    re.I)


def unreachable(text: str) -> bool:
    """Whether a resolver's or the index client's message says the index (or the network) did not
    answer, rather than that no co-installable set exists."""
    return bool(_UNREACHABLE.search(text or ""))


def fetch_info(dist: str, attempts: int = 3) -> dict:
    url = f"{PYPI_JSON}/{dist}/json"
    last: Exception | None = None
    for attempt in range(attempts):
        try:
            with urllib.request.urlopen(url, timeout=30) as resp:
                return json.load(resp)
        except urllib.error.HTTPError as e:
            if e.code == 404:
                raise IndexError_(f"{dist} is not on the package index ({url}: 404)") from None
            last = e
        except (urllib.error.URLError, TimeoutError, OSError, ValueError) as e:
            last = e
        time.sleep(1.5 * (attempt + 1))
    raise IndexError_(f"could not read {url} after {attempts} attempts: {last}")


def release_info(dist: str, cache_dir: Path, need: str | None = None) -> dict[str, dict]:
    """{version: {"date": ISO upload date of its first file, "yanked": bool}} for ``dist``.

    Served from the cache unless ``need`` (a version) is missing from it.
    """
    data = _cached(dist, cache_dir)
    if data is not None and (need is None or need in data):
        return data
    raw = fetch_info(dist)
    data = {}
    for version, files in raw.get("releases", {}).items():
        if not files:
            continue
        data[version] = {
            "date": min(f["upload_time_iso_8601"] for f in files)[:10],
            "yanked": all(f.get("yanked", False) for f in files),
        }
    write_text(CacheDir(cache_dir).releases(dist), json.dumps(data, indent=0, sort_keys=True))
    return data


def _cached(dist: str, cache_dir: Path) -> dict | None:
    """``dist``'s release list as the cache holds it (None: not cached, or damaged)."""
    try:
        data = json.loads(CacheDir(cache_dir).releases(dist).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def release_date(dist: str, version: str, cache_dir: Path) -> str:
    info = release_info(dist, cache_dir, need=version)
    if version not in info:
        raise IndexError_(f"{dist} {version} is not a release on the package index")
    return info[version]["date"]


def released_since(installed: dict[str, str], day: str, cache_dir: Path) -> list[tuple[str, str, str]]:
    """(dist, version, its upload date) of the installed releases uploaded on or after ``day``: in a
    replay as of that day, what came from later (what a project needed newer than the day is taken
    past the cutoff rather than leaving its tests unrunnable). A version the index does not hold (a
    local or development build, a package not on it) is left out; one it did not answer for has the
    date "" (it cannot be said to be of the day)."""
    out, down = [], False  # once the index did not answer, only what is cached is asked
    for dist, version in sorted(installed.items()):
        try:
            v = Version(version)
            if v.local or v.is_devrelease:
                continue
            if down and version not in (_cached(dist, cache_dir) or {}):
                raise IndexError_(f"could not read {PYPI_JSON}/{dist}/json after 0 attempts: the index did not answer")
            date = release_date(dist, version, cache_dir)
        except InvalidVersion:
            continue
        except IndexError_ as e:
            if unreachable(str(e)):
                down = True
                out.append((dist, version, ""))
            continue
        if date >= day:
            out.append((dist, version, date))
    return out


def resolution_date(exact_pins: dict[str, str], cache_dir: Path) -> str | None:
    """The day after the newest exact pin's release, or None when nothing is pinned exactly.

    jaxlib is dated by its jax release when both are pinned: jaxlib 0.4.13's only files on
    PyPI were uploaded in 2025, which would otherwise drag a 2023 cell into 2025.
    """
    pins = dict(exact_pins)
    if "jax" in pins and "jaxlib" in pins:
        pins.pop("jaxlib")
    dates = [release_date(d, v, cache_dir) for d, v in pins.items()]
    if not dates:
        return None
    newest = max(dt.date.fromisoformat(d) for d in dates)
    return (newest + dt.timedelta(days=1)).isoformat()


def versions(dist: str, cache_dir: Path, include_yanked: bool = False,
             refresh: bool = False) -> list[str]:
    """Final releases of ``dist``, oldest first."""
    cache = CacheDir(cache_dir).releases(dist)
    if refresh or (cache.is_file() and time.time() - cache.stat().st_mtime > MAX_LIST_AGE_S):
        cache.unlink(missing_ok=True)  # a release list is only as good as its age
    info = release_info(dist, cache_dir)
    out = []
    for v, meta in info.items():
        try:
            parsed = Version(v)
        except InvalidVersion:
            continue
        if parsed.is_prerelease or parsed.is_devrelease or (meta["yanked"] and not include_yanked):
            continue
        out.append(v)
    return sorted(out, key=Version)

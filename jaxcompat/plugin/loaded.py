"""The versions an interpreter loads: for each name, the first distribution on its ``sys.path``.

One function, ``scan``, used by every reader of installed versions: the pytest plugin inside each
cell, and (its source, run by the environment's own interpreter) the probe of ``check --env``.
``importlib.metadata.version(name)`` and a dict filled from ``metadata.distributions()`` in order
both disagree with ``import`` where one name is installed twice — a layered environment, a ``.pth``
line or ``PYTHONPATH`` adding another environment's site-packages: ``import`` takes the first
folder on ``sys.path`` that has the package, and so does ``scan``. The copies behind it are
returned as ``shadowed``, with the number of the site folder each lives in (1 = the first folder on
``sys.path`` that holds any distribution), so a report can say "equinox 0.13.5 in site dir 2 is
shadowed by 0.13.2 in site dir 1".

Standard library only, Python 3.8+, no module-level state: this file is also run as a script.
"""

from __future__ import annotations

import os
import re
import sys
from importlib import metadata


def canonical(name: str) -> str:
    """A distribution name as PEP 503 normalises it (``Jax_Cuda12.Plugin`` → ``jax-cuda12-plugin``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def scan(path: list[str] | None = None) -> dict:
    """What ``import`` would load from ``path`` (default ``sys.path``), as plain JSON-able data:

    ``distributions``: {name: version} of the first distribution of each name;
    ``sites``: the folders of ``path`` that hold distributions, in order (site dir N is sites[N-1]);
    ``site_of``: {name: N} where each loaded distribution lives;
    ``shadowed``: [{"name", "version", "site", "by_version", "by_site"}] for every later copy.
    """
    entries = list(sys.path if path is None else path)
    seen: set[str] = set()
    sites: list[str] = []
    loaded: dict[str, str] = {}
    site_of: dict[str, int] = {}
    shadowed: list[dict] = []
    for entry in entries:
        folder = entry or os.getcwd()  # "" on sys.path is the working directory
        real = os.path.realpath(folder)
        if real in seen:
            continue
        seen.add(real)
        try:
            found = [(canonical(d.metadata["Name"] or ""), d.version or "")
                     for d in metadata.distributions(path=[folder])]
        except Exception:  # noqa: BLE001 - an unreadable folder or a broken METADATA loads nothing
            continue
        found = sorted((n, v) for n, v in found if n)
        if not found:
            continue
        sites.append(folder)
        here = len(sites)
        for name, version in found:
            if name in loaded:
                shadowed.append({"name": name, "version": version, "site": here,
                                 "by_version": loaded[name], "by_site": site_of[name]})
            else:
                loaded[name], site_of[name] = version, here
    return {"distributions": loaded, "sites": sites, "site_of": site_of, "shadowed": shadowed}


def describe_shadowed(record: dict) -> str:
    """One shadowed copy in words: "equinox 0.13.5 in site dir 2 is shadowed by 0.13.2 in site dir 1"."""
    return (f"{record['name']} {record['version']} in site dir {record['site']} is shadowed by "
            f"{record['by_version']} in site dir {record['by_site']}")

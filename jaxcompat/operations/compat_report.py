"""The compatibility table as a product: gather the release space from the package index,
read the evidence the reports hold, build the table (``knowledge.compat``) and write
``compat.md`` (``report.compat``) and ``compat.json``. Regenerate with ``python -m jaxcompat compat``."""

from __future__ import annotations

from pathlib import Path

from packaging.version import Version

from jaxcompat.env import releases, resolution
from jaxcompat.knowledge import learned
from jaxcompat.knowledge.compat import FIRST_EQX, FIRST_JAX, RANGED, default_evidence, load_runs, table, to_json
from jaxcompat.model.compat import Release, Releases, Row
from jaxcompat.model.matrix import Matrix
from jaxcompat.report.compat import render_md
from jaxcompat.report.learned import markdown as learned_markdown
from jaxcompat.report.outputs import CompatReport


def gather(cache: Path) -> Releases:
    """The release space from the package index (cached under ``cache``)."""
    def final(dist: str, first: str) -> list[str]:
        return [v for v in releases.versions(dist, cache) if Version(v) >= Version(first)]

    jax = final("jax", FIRST_JAX)
    jaxlib: dict[str, str | None] = {}
    for j in jax:
        try:
            jaxlib[j] = resolution.pick_jaxlib(j, resolution.jaxlib_requirement(j, cache), cache, None)
        except (resolution.ResolutionError, OSError):
            jaxlib[j] = None
    packages = {}
    for dist in RANGED:
        out = []
        for v in final(dist, FIRST_EQX if dist == "equinox" else "0"):
            try:
                out.append(Release(v, resolution.declared(dist, v, "jax", cache),
                                   resolution.declared(dist, v, "equinox", cache)))
            except (OSError, resolution.ResolutionError, StopIteration):
                continue
        packages[dist] = tuple(out)
    return Releases(tuple(jax), jaxlib, packages)


def generate(matrix: Matrix, reports_dir: Path, cache: Path, evidence: list[Path] | None = None,
             rel: Releases | None = None) -> tuple[list[Row], CompatReport]:
    """Build the table from the evidence: its rows, and its report (``compat.md`` and
    ``compat.json``, written by ``report.emit``)."""
    paths = evidence if evidence is not None else default_evidence(reports_dir)
    runs = load_runs(paths, matrix)
    rows = table(rel or gather(cache), matrix.failures, runs)
    sources = [_shown(p, reports_dir) for p in paths]
    return rows, CompatReport("compat", markdown=render_md(rows, sources, matrix.failures)
                              + learned_markdown(learned.load(learned.DATA)),
                              data=to_json(rows, sources, matrix.failures))


def _shown(path: Path, reports_dir: Path) -> str:
    """The path as the report names it: relative to the reports folder's parent (no machine paths)."""
    try:
        return str(path.resolve().relative_to(reports_dir.resolve().parent))
    except ValueError:
        return path.name

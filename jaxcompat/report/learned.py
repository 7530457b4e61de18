"""The learned requirements as people read them: one entry each with its evidence for the
terminal (``jax-compat learned``), and the section of ``compat.md`` on releases that need more
than they declare."""

from __future__ import annotations

from packaging.utils import canonicalize_name
from packaging.version import Version

from jaxcompat.knowledge.learned import SAVE_COMMAND
from jaxcompat.model.learned import Learned


def table(records: list[Learned]) -> str:
    """The learned requirements, one line each, with their evidence."""
    if not records:
        return "no learned requirements"
    lines = []
    for r in sorted(records, key=lambda r: (r.package, Version(r.release))):
        tried = "; ".join(", ".join(f"{d}=={v}" for d, v in t["with"].items()) + f": {t['imports']}" for t in r.tried)
        lines.append(f"{r.package}=={r.release} needs {r.requires} (declares {canonicalize_name(r.needs.name)}"
                     f"{r.declares or ' anything'})\n    {r.error}  [{r.frame}]\n    tried with {tried or '-'}")
    return "\n".join(lines)


def markdown(records: list[Learned]) -> str:
    """The compatibility table's section on releases that need more than they declare."""
    if not records:
        return ""
    lines = ["", "## Releases that need more than they declare (learned by importing them)", "",
             f"Observed by the import probe and kept in `jaxcompat/data/learned.json` (`{SAVE_COMMAND}`); "
             "a resolution with these pins avoids the release.", "",
             "| release | needs | declares | error | where |", "|---|---|---|---|---|"]
    for r in sorted(records, key=lambda r: (r.package, Version(r.release))):
        dep = canonicalize_name(r.needs.name)
        lines.append(f"| {r.package} {r.release} | {r.requires} | {dep}{r.declares or ' (anything)'} | "
                     f"`{r.error.replace('|', '/')}` | {r.frame} |")
    return "\n".join(lines) + "\n"

"""``check``'s word on jax's API history (the analysis: apihistory/apiexplain.py): how many failing
tests the history explains, the project's own uses of names the candidate's jax deprecates or
removed, and the candidate's ecosystem read against the history (what our cases confirmed)."""

from __future__ import annotations

import re
from pathlib import Path

from jaxcompat.model.scan import InstalledScan, Report
from jaxcompat.model.vocab import TestStatus, UserTestSide


def verdict_lines(tests: list, root: Path | None, jax_version: str, scanned: Report | None) -> str:
    """The verdict's lines: how many failures jax's API history explains (apart from the rules),
    and the project's own uses of names the candidate's jax deprecates or removed (``scanned``:
    ``apihistory.apiexplain.project_scan`` of ``root``, None when there was nothing to scan)."""
    failing = [t for t in tests if t.candidate in (UserTestSide.FAILED, UserTestSide.ERROR)]
    by_api = [t for t in failing if getattr(t, "explained_by_api", "")]
    by_rule = [t for t in failing if t.explained_by]
    out = []
    if failing:
        out.append(f"  i of {len(failing)} failing test(s): {len(by_rule)} explained by a known failure, "
                   f"{len(by_api)} by jax's API history (a name removed, a signature changed, a deprecation "
                   "your warning filter makes an error), "
                   f"{len(failing) - len(by_rule) - len(by_api)} unexplained")
    if root is not None and scanned is not None and scanned.findings:
        out.append(f"  i your code's uses of jax names at jax {jax_version} (jax-compat scan):")
        prefix = str(root) + "/"
        for f in scanned.findings[:20]:
            out.append(f"    - {f.path.replace(prefix, '')}:{f.line}: {f.code} {f.message}")
        if len(scanned.findings) > 20:
            out.append(f"    … {len(scanned.findings) - 20} more: jax-compat scan {root.name} --jax {jax_version}")
    return "\n".join(out)


def ecosystem_lines(scanned: InstalledScan | None, jax_version: str, results: list) -> str:
    """The candidate's own ecosystem read against jax's API history (``scanned``:
    ``apihistory.apiexplain.ecosystem_scan``, None when there was nothing to scan): each use of a
    name removed at the candidate's jax in the installed equinox/diffrax/optimistix/lineax/chex,
    beside what our cases observed ("predicted and confirmed" when a failing case's error names it,
    "predicted, not exercised" otherwise)."""
    if scanned is None:
        return ""
    removed = scanned.report.errors
    if not removed:
        names = ", ".join(scanned.packages)
        return f"  i jax's API history: the installed {names} use no name removed at jax {jax_version}"
    failed = [r for r in results
              if getattr(r, "status", "") in (TestStatus.FAILED, TestStatus.TIMEOUT, TestStatus.CRASH)]
    out = [f"  i jax's API history: names removed at jax {jax_version} that the installed ecosystem uses:"]
    for f in removed:
        short = f.path.split("site-packages/", 1)[-1]
        leaf = f.name.rsplit(".", 1)[-1]
        seen = [r.case for r in failed if re.search(rf"\b{re.escape(leaf)}\b", getattr(r, "message", ""))]
        verdict = f"predicted and confirmed by {seen[0]}" if seen else "predicted, not exercised by our cases"
        out.append(f"    - {short}:{f.line}: {f.message} — {verdict}")
    return "\n".join(out)

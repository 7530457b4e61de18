"""A bisection along one package's releases as people read it: the terminal text of ``bisect
--package`` (the record: model/bisect.py; along commits: report/commitbisect.py)."""

from __future__ import annotations

from packaging.version import Version

from jaxcompat.model.bisect import BisectResult
from jaxcompat.model.vocab import BisectState
from jaxcompat.plugin.packages import ECOSYSTEM

UNKNOWN = BisectState.UNKNOWN


def render(result: BisectResult) -> str:
    lines = [f"bisect {result.target} over {result.package} ({len(result.cases)} case(s)):"]
    for s in sorted(result.steps, key=lambda s: Version(s.version)):
        others = ", ".join(f"{d} {v}" for d, v in s.versions.items()
                           if d in ECOSYSTEM + ("numpy",) and d != result.package)
        lines.append(f"  {result.package} {s.version:<10} {s.state:<10} {s.signature:<36} [{others}]"
                     + (f"  skipped: {s.detail}" if s.state == UNKNOWN else ""))
    lines.append(result.message)
    lines.append(f"environments built: {result.environments}")
    return "\n".join(lines)

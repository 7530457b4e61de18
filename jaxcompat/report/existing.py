"""The terminal text of ``check --env`` beside the candidate's verdict: the environment's devices,
every ecosystem distribution that ``import`` does not load, and the cases not judged because the
environment does not have a library installed at all."""

from __future__ import annotations

import re

from jaxcompat.model.matrix import Matrix
from jaxcompat.model.outcomes import CellResult
from jaxcompat.model.vocab import TestStatus
from jaxcompat.plugin import loaded
from jaxcompat.plugin.backends import describe_device
from jaxcompat.plugin.packages import KEY_DISTS, NOT_INSTALLED
from jaxcompat.report.candidate import candidate_verdict

_NOT_INSTALLED = re.compile(r"^(?:Skipped: )?needs ([\w, -]+), " + re.escape(NOT_INSTALLED))
# (the reason the plugin gives: jaxcompat/plugin/pytest_plugin.py _reason), and pytest.importorskip's
_ORSKIP = re.compile(r"^(?:Skipped: )?could not import '([\w.]+)': No module named '(\w+)'")


def not_installed(result: CellResult) -> dict[str, list[str]]:
    """{library: the cases skipped because the environment does not have it installed at all}."""
    out: dict[str, list[str]] = {}
    for r in result.results:
        if r.status != TestStatus.SKIPPED:
            continue
        m, k = _NOT_INSTALLED.match(r.message or ""), _ORSKIP.match(r.message or "")
        libs = m.group(1).split(", ") if m else ([k.group(2)] if k and k.group(1).split(".")[0] == k.group(2)
                                                 else [])
        for lib in libs:
            out.setdefault(lib, []).append(r.case)
    return out


def not_installed_lines(result: CellResult) -> list[str]:
    lines = []
    for lib, cases in sorted(not_installed(result).items()):
        mods = sorted({c.split("::")[0].rsplit("/", 1)[-1] for c in cases})
        lines.append(f"  - not judged here: {len(cases)} case(s) in {len(mods)} module(s) need {lib}, which this "
                     f"environment does not have installed ({', '.join(mods[:5])}" + (" …" if len(mods) > 5 else "")
                     + ")")
    return lines


def environment_lines(result: CellResult) -> list[str]:
    """What the terminal says about the environment before the verdict: its devices and every
    ecosystem distribution that `import` does not load (a copy behind another on sys.path)."""
    lines = [f"  devices: {describe_device(result.device)} (backend {result.backend})"] if result.device else []
    for s in result.shadowed:
        if s.get("name") in KEY_DISTS:
            lines.append(f"  ! {loaded.describe_shadowed(s)}: {s['name']} {s['by_version']} is what `import` "
                         "loads, and what is reported and judged")
    sites = next((n for n in result.notes if n.startswith("site dirs on its sys.path")), "")
    return lines + ([f"    ({sites})"] if sites and lines[-1:] and lines[-1].startswith("  !") else [])


def existing_verdict(result: CellResult, matrix: Matrix) -> tuple[str, bool]:
    """``check --env``'s text (the environment, the candidate's verdict, what is not installed) and
    whether it is safe."""
    head, tail = environment_lines(result), not_installed_lines(result)
    text, safe = candidate_verdict(result, matrix)
    return "\n".join(head + [text] + tail), safe

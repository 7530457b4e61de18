"""``jax-compat scan``'s output, every format of it: text (ruff-style lines and a summary), JSON,
SARIF 2.1.0 (as GitHub code scanning reads it) and GitHub Actions annotations; several scans (jax's
and equinox's) as one, and docs/scan.md's table of the rules (the records: model/scan.py; made by
apihistory/scan.py)."""

from __future__ import annotations

import json
from pathlib import Path

from jaxcompat.apihistory.apitimeline import Timeline
from jaxcompat.apihistory.scanrules import RULES
from jaxcompat.model.scan import Report, Target
from jaxcompat.model.vocab import FindingLevel


def render_scans(reports: list[tuple[Report, Target, Timeline]], fmt: str) -> str:
    """What ``scan`` prints for one scan or several (one per package scanned): text and annotations
    one after another, JSON as one object of scans, SARIF as one log of one run per package."""
    if len(reports) == 1 or fmt in ("text", "github"):
        return "".join(render(r, fmt, t, tl) for r, t, tl in reports)
    if fmt == "json":  # one object per package scanned
        return json.dumps({"scans": [json.loads(render(r, "json", t, tl)) for r, t, tl in reports]}, indent=2) + "\n"
    logs = [sarif(r, t, tl) for r, t, tl in reports]  # SARIF: one run per package
    logs[0]["runs"] = [run for log in logs for run in log["runs"]]
    return json.dumps(logs[0], indent=2) + "\n"


def render(report: Report, fmt: str, target: Target, timeline: Timeline) -> str:
    if fmt == "json":
        return json.dumps({timeline.package: target.release, "package": timeline.package,
                           "from": target.before or None, "files": report.files,
                           "findings": [f.to_dict() for f in report.findings],
                           "fixed": [f.to_dict() for f in report.fixed], "guarded": report.guarded,
                           "not_fixed": report.not_fixed,
                           "parse_errors": report.parse_errors},
                          indent=2) + "\n"
    if fmt == "sarif":
        return json.dumps(sarif(report, target, timeline), indent=2) + "\n"
    if fmt == "github":
        out = [f"::{'error' if f.level == FindingLevel.ERROR else 'warning'} file={f.path},line={f.line},col={f.col},"
               f"endLine={f.end_line},endColumn={f.end_col},title={f.code}::{_gh(f.message)}" for f in report.findings]
        return "".join(x + "\n" for x in out)
    lines = ([f.text() for f in report.findings] + [f"error: {e}" for e in report.parse_errors]
             + [f"warning: --fix {e}" for e in report.not_fixed])
    n_err, n_warn = len(report.errors), len(report.findings) - len(report.errors)
    summary = (f"{timeline.package} {target.release}" + (f" (from {target.before})" if target.before else "")
               + f": {report.files} files, {n_err} errors, {n_warn} warnings")
    if report.parse_errors:
        summary += f" ({len(report.parse_errors)} not read: exit 2)"
    if report.guarded:
        summary += f" ({report.guarded} more inside try/except or hasattr/version checks, not reported)"
    if report.fixed:
        summary += f"; {len(report.fixed)} fixed"
    fixable = sum(f.fixable for f in report.findings)
    if fixable:
        summary += f"; [*] {fixable} fixable with --fix"
    return "".join(x + "\n" for x in lines + report.diffs + [summary])


def _gh(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def sarif(report: Report, target: Target, timeline: Timeline) -> dict:
    """SARIF 2.1.0, as GitHub code scanning reads it."""
    rules = [{"id": r.code, "name": r.name, "shortDescription": {"text": r.doc},
              "defaultConfiguration": {"level": r.level}} for r in RULES.values()]
    results = []
    for f in report.findings:
        results.append({
            "ruleId": f.code, "level": f.level, "message": {"text": f.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": Path(f.path).as_posix()},
                "region": {"startLine": f.line, "startColumn": f.col, "endLine": f.end_line, "endColumn": f.end_col}}}],
            "properties": {"jaxName": f.name, "replacement": f.replacement, timeline.package: target.release},
        })
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "jax-compat scan",
                        "informationUri": "https://github.com/jax-ml/jax",
                        "rules": rules,
                        "properties": {"timeline": f"{timeline.package} {timeline.releases[0]}–{timeline.newest}"},
                    }
                },
                "results": results,
            }
        ],
    }


def table() -> str:
    """docs/scan.md's table of the rules, as the registry has them (a test holds the two together)."""
    rows = ["| Code | Name | Level | What | `--fix` |", "| --- | --- | --- | --- | --- |"]
    rows += [f"| `{r.code}` | {r.name} | {r.level} | {r.doc} | {r.fix or '—'} |"
             for r in RULES.values()]
    return "\n".join(rows) + "\n"

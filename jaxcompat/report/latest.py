"""The nightly's texts (``jax-compat latest``): the terminal's word on what moved since the baseline,
``latest.md``, the issue body drafted when something regressed (``latest-issue.md``), the warnings
before the break, and the baseline-refresh proposal's word on what it kept out (the run and the
files written: operations/latest.py)."""

from __future__ import annotations

from jaxcompat._util.layout import command
from jaxcompat._util.text import first_line
from jaxcompat.apihistory.apiexplain import histories
from jaxcompat.knowledge.deprecations import forecast
from jaxcompat.model.latest import Refresh
from jaxcompat.model.outcomes import FAILING_OUTCOMES, CellResult
from jaxcompat.model.vocab import CellStatus
from jaxcompat.plugin.packages import ECOSYSTEM
from jaxcompat.report.candidate import source_lines
from jaxcompat.report.compare import Diff, render
from jaxcompat.report.reports import markdown


def held_section(refresh: Refresh) -> list[str]:
    """The proposal's word on what it kept out of the baseline (Markdown lines)."""
    if not refresh.held:
        return []
    return ["## Kept out of the baseline", "",
            "Tonight's regressions are findings, not the new normal: the baseline keeps its earlier record "
            "for these (merging this proposal does not stop them being flagged):", "",
            *[f"- `{h}`" for h in refresh.held], ""]


def issue_body(result: CellResult, diff: Diff) -> str:
    versions = ", ".join(f"{d} {v}" for d, v in result.versions.items() if d in ECOSYSTEM + ("numpy",))
    lines = ["### jax-compat nightly: regression on the newest releases", "",
             f"Environment: Python {result.python}, {versions}", ""]
    lines += [f"- {x.strip()}" for x in source_lines(result)] + ([""] if source_lines(result) else [])
    failing = [r for r in result.results if r.outcome in FAILING_OUTCOMES]
    if result.status != CellStatus.OK:
        lines += [f"The cell did not run: **{result.status}**", "", "```", result.message[-3000:], "```", ""]
    if failing:
        lines += ["| case | outcome | error |", "|---|---|---|"]
        for r in failing:
            first = first_line(r.message, 200).replace("|", "\\|")
            lines.append(f"| `{r.case}` | {r.outcome} | {first} |")
        lines.append("")
    lines += warnings_section(result)
    lines += ["<details><summary>What changed since the baseline</summary>", "", "```",
              render(diff), "```", "</details>", "",
              f"Reproduce: `{command('latest').removesuffix(' --')}` (or `{command('check')} " +
              " ".join(f"{d}=={v}" for d, v in result.versions.items() if d in ECOSYSTEM) + "`)"]
    return "\n".join(lines)


def _forecast(result: CellResult) -> list[str]:
    """The jax deprecations tonight's run hit, dated by jax's API history (soonest break first)."""
    return forecast(result.deprecations, result.versions, histories(result.deprecations))


def warnings_section(result: CellResult) -> list[str]:
    """The jax deprecations the ecosystem's code hit tonight, with the jax that removes each."""
    lines = _forecast(result)
    if not lines:
        return []
    return (["### Warnings before the break (jax deprecations hit by the ecosystem's code)", ""]
            + [f"- {line}" for line in lines] + [""])


def _origin(result: CellResult) -> list[str]:
    """Where tonight's packages came from (nightlies, pre-releases: what exactly)."""
    return [line.strip() for line in source_lines(result)]


def _since(result: CellResult, diff: Diff) -> str:
    """What moved since the baseline, after where tonight's packages came from."""
    text = render(diff, "baseline", "tonight's newest releases")
    origin = _origin(result)
    return "\n".join(origin) + "\n" + text if origin else text


def terminal_text(result: CellResult, diff: Diff) -> str:
    """What ``latest`` prints after the grid: what moved since the baseline, and the warnings before the break."""
    text = _since(result, diff)
    if result.deprecations:
        text += "\n\nwarnings before the break:\n" + "\n".join(f"  - {x}" for x in _forecast(result))
    return text


def latest_md(result: CellResult, diff: Diff, body: str) -> str:
    """``latest.md``: the run's report, what moved since the baseline, the warnings before the break
    and, when something regressed, the issue ``body`` (``issue_body``; "" when none)."""
    origin = _origin(result)
    md = ([markdown([result], {"matrix_file": "(latest releases)"}), ""] + [f"- {x}" for x in origin]
          + ([""] if origin else []) + ["## Since the baseline", "", "```", _since(result, diff), "```", ""])
    if diff.new_failures:
        md += ["New failures: " + ", ".join(f"`{m.case}` ({m.before} → {m.after})" for m in diff.new_failures), ""]
    if diff.fixed:
        md += ["Fixed: " + ", ".join(f"`{m.case}` ({m.before} → {m.after})" for m in diff.fixed), ""]
    md += warnings_section(result)
    if body:
        md += ["## Issue body", "", body, ""]
    return "\n".join(md)

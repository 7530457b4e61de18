"""What a candidate announces, as people read it: its new warnings grouped across projects (each
with the release that removes what it names), and a suite's health. Records from
``model.warnings`` and ``model.health``; the texts go through the caller's scrubbing."""

from __future__ import annotations

from jaxcompat.knowledge.warnings import sentence
from jaxcompat.model.health import Health
from jaxcompat.model.vocab import SuiteHealth
from jaxcompat.model.warnings import NewWarning

SHOWN = 4  # tests named per group in the verdict (the reports' tables list them all)


def headline(groups: list[NewWarning]) -> str:
    """"" without new warnings; else the line that leads the report: what the candidate announces."""
    if not groups:
        return ""
    n = sum(g.count for g in groups)
    return (f"! the candidate announces {len(groups)} future break(s): {n} test(s) raise a warning they did not "
            "raise in the baseline (not a break today)")


def lines(groups: list[NewWarning], projects: bool = True) -> list[str]:
    """The headline, then one line per warning and the tests that raise it."""
    if not groups:
        return []
    out = [headline(groups)]
    for g in groups:
        out.append(f"    {sentence(g, projects)}")
        if g.api and g.message:
            out.append(f"        {g.message.splitlines()[0][:200]}")
        for project, tests in sorted(g.tests.items()):
            named = ", ".join(tests[:SHOWN]) + (f" … and {len(tests) - SHOWN} more" if len(tests) > SHOWN else "")
            out.append(f"        {project + ': ' if projects else ''}{named}")
    return out


def markdown(groups: list[NewWarning], projects: bool = True) -> str:
    if not groups:
        return ""
    rows = ["## New warnings in the candidate (tomorrow's breaks)", "",
            "| warning | category | deprecated in | removed in | tests | " + ("dependents |" if projects else ""),
            "|---|---|---|---|---|" + ("---|" if projects else "")]
    for g in groups:
        what = (g.api or g.message.splitlines()[0][:160]).replace("|", "/")
        known = f" — rule `{g.explained_by}`, fix: {g.fix}".replace("|", "/") if g.explained_by else ""
        removed = g.removed_in + (" (announced)" if g.removal_from == "message" else "") if g.removed_in else "—"
        rows.append(f"| `{what}`{known} | {g.category} | {g.deprecated_in or '—'} | {removed} | {g.count} | "
                    + (f"{', '.join(sorted(g.tests))} |" if projects else ""))
    return "\n".join(rows) + "\n"


def html(groups: list[NewWarning], projects: bool = True) -> str:
    from jaxcompat.report.html import esc

    if not groups:
        return ""
    items = []
    for g in groups:
        tests = "".join(f"<li>{esc(p) + ': ' if projects else ''}<code>{esc(', '.join(ts))}</code></li>"
                        for p, ts in sorted(g.tests.items()))
        items.append(f"<li><b>{esc(sentence(g, projects))}</b><br><code>{esc(g.message[:500])}</code>"
                     f"<details><summary>its {g.count} test(s)</summary><ul>{tests}</ul></details></li>")
    return ('<section class="new-warnings"><h2>New warnings in the candidate (tomorrow\'s breaks)</h2><ul>'
            + "".join(items) + "</ul></section>")


def health_line(h: Health | None) -> str:
    """"" for a healthy suite; else what fails on both sides, the commonest error, what it is judged on."""
    if h is None or h.status != SuiteHealth.UNHEALTHY:
        return ""
    return (f"unhealthy: {h.failing} of {h.ran} tests fail on both sides ({h.signature_count} at "
            f"{h.signature[:160]}); judged on the other {h.rest}")

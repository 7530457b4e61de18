"""The user's own tests rendered: the verdict on the terminal, check-tests.xml (JUnit), the table of
check.md and of check.html (the records are model/usertests.py's)."""

from __future__ import annotations

from jaxcompat._util.text import last_line
from jaxcompat.model.usertests import TEST_CLASSES, Comparison, UserTest, counts, stopped_both
from jaxcompat.model.vocab import Kind, UserTestStatus
from jaxcompat.report import junit as junit_xml
from jaxcompat.report.html import esc, page
from jaxcompat.report.sides import sides_lines


def verdict(cmp: Comparison, described: str) -> str:
    """One screen: whether the tests ran at all (first, with the cause, when they did not), what
    the upgrade broke (and the fix), then the rest by class, failures grouped by their error.
    ``described``: what ran, as the target says it (``Target.describe``)."""
    tests, with_baseline = cmp.tests, cmp.with_baseline
    lines = []
    if cmp.unjudged:
        lines.append(f"✗ cannot judge the upgrade: {cmp.unjudged}")
    ran = f"ran {cmp.ran['candidate']} in the candidate" + (f", {cmp.ran['baseline']} in the baseline"
                                                          if with_baseline else "")
    lines.append(f"Your tests ({described}; {ran}): "
                 + (", ".join(f"{c} {n}" for c, n in counts(tests).items()) if tests else "none ran"))
    if cmp.error:
        lines.append("  ✗ your tests could not run in the candidate: " + (cmp.candidate_cause or last_line(cmp.error)))
    for side, modules in cmp.uncollectable.items():
        if modules:
            lines.append(
                f"  ! {len(modules)} module(s) could not be collected in the {side}; "
                f"their tests did not run there: {', '.join(modules[:6])}" + (" …" if len(modules) > 6 else "")
            )
    if stopped := stopped_both(tests):
        lines.append(f"  ! {len(stopped)} test(s) stopped at the time limit ({cmp.timeout_s:g} s) on both sides: "
                     "not judged (give them longer: --test-timeout SECONDS): "
                     + ", ".join(t.test for t in stopped[:4]) + (" …" if len(stopped) > 4 else ""))
    for cls, kind in TEST_CLASSES.items():
        group = [t for t in tests if t.cls == cls]
        if not group or not kind.heading:
            continue
        head = "✗ failing" if cls == UserTestStatus.FAILS and not with_baseline else kind.heading
        lines.append(f"  {head}: {len(group)}")
        for (explained_by, message), same in _by_error(group).items():
            t = same[0]
            lines.append(
                f"    {len(same)} × {message or '(no message)'}" + (f" ({t.note})" if t.note and len(same) == 1 else "")
            )
            if explained_by:
                lines.append(f"        this looks like {explained_by} — fix: {t.fix}")
                lines.append(f"        upstream: {', '.join(t.upstream)}")
            elif t.explained_by_api:
                lines.append(f"        jax's API history: {t.explained_by_api}")
                if t.fix:
                    lines.append(f"        what to pin or change: {t.fix}")
            elif kind.failed:
                where = t.traceback.rstrip().splitlines()[-6:]
                lines.append(
                    "        no known failure explains it; "
                    + ("where it raised:" if where else "no traceback was recorded")
                )
                lines += ["          " + ln for ln in where]
            names = [x.test for x in same]
            lines.append("        " + ", ".join(names[:8]) + (f" … and {len(names) - 8} more (check.md lists them all)"
                                                            if len(names) > 8 else ""))
    return "\n".join(lines + (sides_lines(cmp.sides) if cmp.sides else []))


def _by_error(group: list[UserTest]) -> dict[tuple[str | None, str], list[UserTest]]:
    out: dict[tuple[str | None, str], list[UserTest]] = {}
    for t in group:
        out.setdefault((t.explained_by, t.shown), []).append(t)
    return dict(sorted(out.items(), key=lambda kv: -len(kv[1])))


def junit(tests: list[UserTest], name: str) -> str:
    cases = []
    for t in tests:
        case = junit_xml.Case(*junit_xml.case_of(t.test))
        if TEST_CLASSES[t.cls].junit == Kind.FAILURE:
            case.kind, case.type, case.text = Kind.FAILURE, t.cls, f"{t.shown}\n{t.traceback}"
            case.message = f"{t.cls}" + (f": explained by {t.explained_by} (fix: {t.fix})" if t.explained_by else
                                         f": {t.explained_by_api}" + (f" (fix: {t.fix})" if t.fix else "")
                                         if t.explained_by_api else "")
        elif TEST_CLASSES[t.cls].junit == Kind.SKIPPED:
            case.kind = Kind.SKIPPED
        cases.append(case)
    return junit_xml.render(junit_xml.Suite(name, cases))


def markdown(tests: list[UserTest], verdict_text: str, with_baseline: bool) -> str:
    rows = ["| class | test | baseline | candidate | explained by | fix |", "|---|---|---|---|---|---|"]
    for t in tests:
        rows.append(
            f"| {t.cls} | `{t.test}` | {t.baseline if with_baseline else '—'} | {t.candidate} | "
            f"{t.explained_by or t.explained_by_api or ('unexplained' if TEST_CLASSES[t.cls].failed else '—')} | "
            f"{t.fix or ''} |"
        )
    return "## Your tests\n\n```\n" + verdict_text + "\n```\n\n" + "\n".join(rows) + "\n"


def html_section(tests: list[UserTest], with_baseline: bool) -> str:
    rows = []
    for t in tests:
        detail = ""
        if t.message or t.traceback:
            detail = f"<details><summary>{esc(t.shown or 'traceback')}</summary><pre>{esc(t.traceback)}</pre></details>"
        link = " ".join(f'<a href="{esc(u)}">{esc(u)}</a>' for u in t.upstream)
        rows.append(
            f'<tr class="c-{esc(t.cls)}"><td><b>{esc(t.cls)}</b></td><td><code>{esc(t.test)}</code>{detail}</td>'
            f"<td>{esc(t.baseline) if with_baseline else '—'}</td><td>{esc(t.candidate)}</td>"
            f"<td>{esc(t.explained_by or t.explained_by_api or '')}</td><td>{esc(t.fix)} {link}</td></tr>"
        )
    return ('<section class="user-tests"><h2>Your tests</h2><table><thead><tr><th>class</th><th>test</th>'
            "<th>baseline</th><th>candidate</th><th>explained by</th><th>fix</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table></section>")


CHECK_CSS = ("body{font:14px system-ui,sans-serif;margin:1.5em;color:#1b1b1b} pre{background:#f5f5f5;padding:.6em;"
             "overflow:auto;white-space:pre-wrap} table{border-collapse:collapse} td,th{border:1px solid #ccc;"
             "padding:4px 8px;text-align:left;vertical-align:top} .c-broken td:first-child,.c-fails td:first-child"
             "{background:#f4c7c3} .c-fixed td:first-child{background:#c8e6c9} .c-fails-both td:first-child"
             "{background:#eee} .c-flaky td:first-child{background:#fff3c4}")


def html_page(title: str, verdict_text: str, tests: list[UserTest], with_baseline: bool) -> str:
    """check.html: the verdict and the table of the user's tests."""
    return page(f"jax-compat check: {title}", f"<h1>jax-compat check: {esc(title)}</h1><pre>{esc(verdict_text)}</pre>"
                + html_section(tests, with_baseline), CHECK_CSS)


"""The user's own tests rendered: the verdict on the terminal, check-tests.xml (JUnit), the table of
check.md and of check.html (the records are model/usertests.py's)."""

from __future__ import annotations

from jaxcompat._util.text import last_line
from jaxcompat.model.usertests import TEST_CLASSES, Comparison, UserTest, counts, failing, stopped_both
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
    if renamed := [t for t in tests if t.was]:
        lines.append(f"  ! {len(renamed)} test id(s) changed between the sides (all the ids of a parametrized test): "
                     "each judged as the same test, paired in the order they ran: "
                     + ", ".join(f"{t.was} -> {t.test}" for t in renamed[:4]) + (" …" if len(renamed) > 4 else ""))
    for _cls, kind, head, group in _headed(tests, with_baseline):
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


def html_page(title: str, verdict_text: str, tests: list[UserTest], with_baseline: bool, *,
              cmp: Comparison | None = None, code: int | None = None, warned=()) -> str:
    """check.html, a page read in ten seconds: the verdict (``code``, the exit status; not given:
    never "safe"), the suite's row with its bar, each failure group once (its explanation, fix and
    upstream links, its tests folded), the new warnings, then every test and the terminal's text,
    folded. ``warned``: the new warnings (``NewWarning``s)."""
    from jaxcompat.report import warnings as shown_warnings
    from jaxcompat.report.html import REPORT_CSS, bar_key, fold

    code = code if code is not None else (1 if failing(tests, with_baseline) else 2)
    body = [_check_banner(title, tests, with_baseline, cmp, code), "<main>", '<h2 id="suite">Your suite</h2>',
            _suite_row(title, tests, with_baseline, cmp), bar_key(), _groups(tests, with_baseline),
            shown_warnings.html(list(warned), projects=False),
            f'<h2 id="tests">Every test ({len(tests)})</h2>', fold("the table", html_section(tests, with_baseline)),
            '<h2 id="terminal">As the terminal says it</h2>',
            fold("the verdict's text", f"<pre>{esc(verdict_text)}</pre>"),
            '</main><footer>other formats: <a href="check.md">check.md</a> · <a href="check.json">check.json</a> · '
            '<a href="check-tests.xml">check-tests.xml</a></footer>']
    return page(f"jax-compat check: {title}", "".join(body), REPORT_CSS)


def _check_banner(title: str, tests: list[UserTest], with_baseline: bool, cmp: Comparison | None, code: int) -> str:
    from jaxcompat.report.html import banner

    bad = failing(tests, with_baseline)
    if cmp is not None and cmp.unjudged:
        head = f"cannot judge the upgrade: {cmp.unjudged}"
    elif bad:
        head = f"your tests: {len(bad)} of {len(tests)} " + ("broken by the upgrade" if with_baseline else "failing")
    elif cmp is not None and cmp.none_ran:
        head = "none of your tests ran in the candidate"
    else:
        head = f"your tests: none of {len(tests)} " + ("broken by the upgrade" if with_baseline else "failing")
    meta = [f"on <code>{esc(title)}</code>"]
    if cmp is not None:
        sides = (("candidate", cmp.candidate_versions), ("baseline", cmp.baseline_versions))
        meta.append(" · ".join(f"{esc(side)}: " + " ".join(f"{esc(k)} {esc(v)}" for k, v in list(vs.items())[:6])
                               for side, vs in sides if vs))
    return banner(code, head, meta)


def _suite_row(title: str, tests: list[UserTest], with_baseline: bool, cmp: Comparison | None) -> str:
    from jaxcompat.report.html import bar

    c = counts(tests)
    ran = cmp.ran if cmp is not None else {}
    warned = sum(1 for t in tests if t.new_warnings)
    nums = "".join(f'<td class="n{" hot" * bool(c.get(k) and k != UserTestStatus.FIXED)}">{c.get(k, 0)}</td>'
                   for k in (UserTestStatus.BROKEN if with_baseline else UserTestStatus.FAILS, UserTestStatus.FIXED,
                             UserTestStatus.FLAKY, UserTestStatus.FAILS_BOTH))
    return ('<table class="rows suite"><thead><tr><th>suite</th><th>ran before</th><th>ran after</th><th>'
            + ("broken" if with_baseline else "fails") + "</th><th>fixed</th><th>flaky</th><th>fails both</th>"
            "<th>new warnings</th><th>its tests</th></tr></thead><tbody>"
            f'<tr><td><b>{esc(title)}</b></td><td class="n">{ran.get("baseline", "—") if with_baseline else "—"}</td>'
            f'<td class="n">{ran.get("candidate", "—")}</td>{nums}<td class="n{" warn" * bool(warned)}">{warned}</td>'
            f"<td>{bar(c, title)}</td></tr></tbody></table>")


def _groups(tests: list[UserTest], with_baseline: bool) -> str:
    """Each class that says something, each error in it once: what explains it, the fix, upstream
    links (or where it raised), its tests folded."""
    from jaxcompat.report.html import fold, link

    out, i = [], 0
    for cls, kind, head, group in _headed(tests, with_baseline):
        out.append(f'<h2 id="c-{esc(cls)}">{esc(head)}: {len(group)}</h2>')
        for (explained_by, message), same in _by_error(group).items():
            i, t = i + 1, same[0]
            if explained_by:
                why = f"this looks like <b>{esc(explained_by)}</b> (a known failure)"
            elif t.explained_by_api:
                why = f"jax's API history: {esc(t.explained_by_api)}"
            else:
                why = "no known failure explains it" if kind.failed else ""
            rows = [("why", why), ("fix", esc(t.fix)), ("upstream", " · ".join(link(u) for u in t.upstream))]
            where = "\n".join(t.traceback.rstrip().splitlines()[-6:]) if kind.failed and not explained_by else ""
            listed = "".join(f"<li><code>{esc(x.test)}</code></li>" for x in same)
            out.append(f'<section class="group{" explained" * bool(explained_by)}" id="g-{i}">'
                       f"<h3>{len(same)} × <code>{esc(message or '(no message)')}</code></h3><dl>"
                       + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows if v) + "</dl>"
                       + (f"<pre>{esc(where)}</pre>" if where else "")
                       + fold(f"its {len(same)} test{'s' * (len(same) != 1)}", f"<ul>{listed}</ul>") + "</section>")
    return "".join(out)


def _headed(tests, with_baseline: bool):
    """(class, its kind, its heading, its tests) for each class that has a heading and a test, in
    ``TEST_CLASSES`` order: the terminal's and the page's sections alike."""
    for cls, kind in TEST_CLASSES.items():
        group = [t for t in tests if t.cls == cls]
        if group and kind.heading:
            yield cls, kind, "✗ failing" if cls == UserTestStatus.FAILS and not with_baseline else kind.heading, group

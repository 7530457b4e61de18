"""The crater's reports as people and CI read them: the verdict on one screen, crater.json's
summary, crater.md, crater.html and crater.xml (JUnit), from the records (model/crater.py,
knowledge/cratergroups.py, model/roots.py, model/warnings.py). operations/crater.py writes them
through its redaction boundary."""

from __future__ import annotations

from jaxcompat.knowledge.cratergroups import Group
from jaxcompat.model.crater import DependentResult, decision, exit_status
from jaxcompat.model.roots import RootCause
from jaxcompat.model.sides import Sides
from jaxcompat.model.usertests import TEST_CLASSES, stopped_both
from jaxcompat.model.vocab import DependentVerdict, FindingLevel, Kind, UserTestStatus
from jaxcompat.model.warnings import NewWarning
from jaxcompat.report import junit as junit_xml
from jaxcompat.report import roots as shown_roots
from jaxcompat.report import warnings as shown_warnings
from jaxcompat.report.sides import sides_lines


def reused_line(r: DependentResult) -> str:
    return (f"baseline side re-used from {r.baseline_reused} (the result cache: the same lock, Python, backend, "
            "plugin, source and options; --no-cache runs it)")


def cost_line(c: dict) -> str:
    cached = f" ({c['from_cache']} dependent(s) from the result cache)" if c.get("from_cache") else ""
    split = "".join(f"; {name} split in {s['parts']} parts: {s['serial_minutes']} min here (its parts in turn), "
                    f"{s['on_shards_minutes']} min on {s['parts']} shards (its longest part; parts "
                    + ", ".join(str(m) for m in s["part_minutes"]) + " min)"
                    for name, s in sorted(c.get("split", {}).items()))
    return (f"cost: {c['environments']} environments built{cached}; {c['total_minutes']} min of the dependents' "
            "own time, "
            f"{c['wall_minutes']} min wall; on {c['shards']} shards about {c['on_shards_minutes']} min "
            f"(the longest shard)" + split)


def summary(results: list[DependentResult], plan_text: dict, groups: list[Group], cost_: dict,
            warned: list[NewWarning] = (), gaps: tuple[str, ...] = (), causes: list[RootCause] = (),
            ignored: tuple[str, ...] = ()) -> dict:
    counts: dict[str, int] = {}
    for r in results:
        counts[str(r.verdict)] = counts.get(str(r.verdict), 0) + 1
    confounded = {r.name: [c["dist"] for c in r.sides["confounders"]] for r in results if r.sides.get("confounders")}
    return {"kind": "crater", **plan_text, "verdicts": counts, "exit": exit_status(results, gaps),
            "confounded": confounded, **({"not_seen": list(gaps)} if gaps else {}),
            **({"ignored": list(ignored)} if ignored else {}),
            "new_warnings": [w.to_dict() for w in warned],
            "dependents": [r.to_dict() for r in sorted(results, key=lambda r: r.name)],
            "root_causes": [c.to_dict() for c in causes], "groups": [g.to_dict() for g in groups], "cost": cost_}


def verdict_text(results: list[DependentResult], groups: list[Group], plan_text: dict, cost_: dict,
                 warned: list[NewWarning] = (), gaps: tuple[str, ...] = (), causes: list[RootCause] = (),
                 ignored: tuple[str, ...] = ()) -> str:
    """One screen: what the candidate breaks and why (a candidate that breaks nothing: what it
    announces, its new warnings, first), the packages that broke (``causes``), then the groups and
    every dependent's line (``ignored``: stored results no plan names, left out of the verdict)."""
    lines = [f"crater: {' '.join(plan_text['candidate'])} against {' '.join(plan_text['baseline'])}"
             + (f" (dependents as of {plan_text['as_of']})" if plan_text.get("as_of") else "")]
    decided = decision(results, gaps)
    failing = {i.name for i in decided.failing}
    broken = [r for r in results if r.name in failing]
    code = decided.code
    if broken:
        lines.append(f"✗ the candidate breaks {len(broken)} of {len(results)} dependents: "
                     + ", ".join(f"{r.name} ({len(r.broken())} tests)" if r.broken() else
                                 f"{r.name} (none of its tests ran in the candidate)" for r in broken))
    elif code == 2:
        lines.append("✗ the crater could not judge the candidate on every dependent (see below)")
    else:
        lines.append(f"✓ the candidate breaks none of the {len(results)} dependents' tests")
    lines += shown_warnings.lines(list(warned))
    lines += [f"  ✗ {g}" for g in gaps]
    if ignored:
        lines.append(f"  ! left out, no stored plan names them ({len(ignored)}): " + ", ".join(ignored))
    lines += shown_roots.lines(list(causes))
    for g in groups:
        n = sum(len(v) for v in g.tests.values())
        lines.append(f"  {n} broken test(s) in {len(g.tests)} dependent(s): {g.signature.key}")
        if g.explained_by:
            lines.append(f"      this is {g.explained_by} — fix: {g.fix}" + (f" ({', '.join(g.upstream[:2])})"
                                                                          if g.upstream else ""))
        elif g.api:
            lines.append(f"      jax's API history: {g.api}")
        else:
            lines.append(f"      no rule explains it: drafted as {g.draft} (draft-rules.toml)")
        if g.bisect_line():
            lines.append(f"      {g.bisect_line()}")
        for dep, tests in sorted(g.tests.items()):
            lines.append(f"      {dep}: " + ", ".join(tests[:4]) + (f" … and {len(tests) - 4} more" if len(tests) > 4
                                                                    else ""))
    lines.append("")
    for r in sorted(results, key=lambda r: r.name):
        ran = "; ".join(x for x in (f"ran {r.ran.get('baseline', 0)} before, {r.ran.get('candidate', 0)} after",
                                    ", ".join(f"{c} {n}" for c, n in r.classes.items())) if x) if r.ran else ""
        halted = len(stopped_both(r.tests))
        stopped = (f"{halted} stopped at the time limit on both sides, not judged (test_timeout_s gives them "
                   "longer)") if halted else ""
        lines.append(f"  {r.verdict:<13} {r.name} {r.version}  "
                     + "; ".join(x for x in (ran, r.cause, stopped, shown_warnings.health_line(r.health)) if x))
        lines += ["    " + x for x in sides_lines(Sides.from_dict(r.sides)) if r.sides.get("confounders")]
        lines += [f"    ! not as of the day in the {side}: its requirements took {', '.join(later)}"
                  for side, later in sorted(r.past_day.items())]
        lines += [f"    {reused_line(r)}"] if r.baseline_reused else []
        lines += scan_lines(r)
    lines.append("")
    lines.append(cost_line(cost_))
    return "\n".join(lines)


SCAN_SHOWN = 3  # a dependent's scan findings named in the verdict (crater.md and crater.json hold them all)


def scan_lines(r: DependentResult) -> list[str]:
    """A dependent's own code read against jax's API history at the candidate's jax (jax-compat
    scan, as check --tests reads the user's project): how many uses, the first few."""
    if not r.scan:
        return []
    removed = sum(f.get("level") == FindingLevel.ERROR for f in r.scan)
    out = [f"    i its own code at jax {r.versions.get('candidate', {}).get('jax', '')} (jax-compat scan): "
           f"{removed} use(s) of removed names, {len(r.scan) - removed} of deprecated ones"]
    out += [f"      {f['path']}:{f['line']}: {f['code']} {f['message']}" for f in r.scan[:SCAN_SHOWN]]
    return out + ([f"      … and {len(r.scan) - SCAN_SHOWN} more (crater.md)"] if len(r.scan) > SCAN_SHOWN else [])


def scan_markdown(results: list[DependentResult]) -> str:
    """Every dependent's scan findings, one row each ("" when none has any)."""
    rows = [f"| {r.name} | `{f['path']}:{f['line']}` | {f['code']} | {f['message'].replace('|', '/')} |"
            for r in sorted(results, key=lambda r: r.name) for f in r.scan]
    if not rows:
        return ""
    return ("\n## Their own code against jax's API history (jax-compat scan at the candidate's jax)\n\n"
            "| dependent | where | rule | what |\n|---|---|---|---|\n" + "\n".join(rows) + "\n")


COUNTED = (UserTestStatus.BROKEN, UserTestStatus.FIXED, UserTestStatus.FAILS_BOTH, UserTestStatus.FLAKY)


def markdown(text: str, results: list[DependentResult], warned: list[NewWarning] = ()) -> str:
    rows = ["| dependent | version | verdict | ran before | ran after | broken | fixed | fails-both | flaky | cause |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(results, key=lambda r: r.name):
        c = r.classes
        rows.append(f"| {r.name} | {r.version} | {r.verdict} | {r.ran.get('baseline', '—')} | "
                    f"{r.ran.get('candidate', '—')} | "
                    + "".join(f"{c.get(k, 0)} | " for k in COUNTED) + f"{r.cause.replace('|', '/')[:300]} |")
    return ("# jax-compat crater\n\n```\n" + text + "\n```\n\n" + "\n".join(rows) + "\n"
            + ("\n" + shown_warnings.markdown(list(warned)) if warned else "") + scan_markdown(results))


def html(text: str, results: list[DependentResult], warned: list[NewWarning] = (), *, groups: list[Group] = (),
         causes: list[RootCause] = (), plan_text: dict | None = None, cost_: dict | None = None,
         gaps: tuple[str, ...] = (), ignored: tuple[str, ...] = ()) -> str:
    """crater.html, a page read in ten seconds: the verdict (the exit status's word, big), one row
    per dependent with a bar, the root causes as a tree, each group once (its explanation, fix,
    upstream and first bad commit as links, its tests folded), then each dependent's details and
    the terminal's text, folded. ``text``: what ``verdict_text`` said (the rest: what it was given)."""
    from jaxcompat.report.html import REPORT_CSS, bar_key, esc, fold, page

    index = {g.signature.key: (i, g) for i, g in enumerate(groups, 1)}
    body = [_crater_banner(results, plan_text or {}, gaps, ignored, warned), "<main>",
            '<h2 id="dependents">Dependents</h2>', _dependent_table(results), bar_key(),
            _root_tree(list(causes), index), _groups_html(list(groups), results),
            shown_warnings.html(list(warned)), _details_html(results),
            '<h2 id="terminal">As the terminal says it</h2>', fold("the verdict's text", f"<pre>{esc(text)}</pre>"),
            "</main>", f"<footer>{esc(cost_line(cost_)) if cost_ else ''}<br>other formats: "
            + " · ".join(f'<a href="{n}">{n}</a>' for n in ("crater.md", "crater.json", "crater.xml")) + "</footer>"]
    return page("jax-compat crater", "".join(body), REPORT_CSS)


def _crater_banner(results: list[DependentResult], plan_text: dict, gaps, ignored, warned) -> str:
    from jaxcompat.report.html import banner, esc

    decided = decision(results, gaps)
    failing = {i.name for i in decided.failing}
    broken = [r for r in results if r.name in failing]
    candidate = " ".join(plan_text.get("candidate", [])) or "the candidate"
    if broken:
        n = sum(len(r.broken()) for r in broken)
        head = f"{candidate} breaks {len(broken)} of {len(results)} dependents ({n} tests)"
    elif decided.code == 2:
        head = (f"could not judge {candidate} on {len(decided.unjudged)} of {len(results)} dependents: "
                + ", ".join(i.name for i in decided.unjudged[:6]) + (" …" if len(decided.unjudged) > 6 else ""))
    else:
        head = f"{candidate} breaks none of the {len(results)} dependents' tests"
    meta = [f"candidate <code>{esc(candidate)}</code> against <code>{esc(' '.join(plan_text.get('baseline', [])))}"
            "</code>" + (f" · dependents as of {esc(plan_text['as_of'])}" if plan_text.get("as_of") else "")]
    meta.append(esc(shown_warnings.headline(list(warned))))
    meta += [f"✗ {esc(g)}" for g in gaps]
    if ignored:
        meta.append(f"! left out, no stored plan names them ({len(ignored)}): {esc(', '.join(ignored))}")
    return banner(decided.code, head, meta)


def _dependent_table(results: list[DependentResult]) -> str:
    """One row per dependent: its verdict, tests run on each side, the classes that matter, its new
    warnings, its time and a bar of its tests."""
    from jaxcompat.report.html import bar, esc

    rows = []
    for r in sorted(results, key=lambda r: r.name):
        c = r.classes
        warned = sum(1 for t in r.tests if t.new_warnings)
        nums = "".join(f'<td class="n{_hot(k, c.get(k, 0))}">{c.get(k, 0) if r.ran else "—"}</td>'
                       for k in (UserTestStatus.BROKEN, UserTestStatus.FIXED, UserTestStatus.FLAKY,
                                 UserTestStatus.FAILS_BOTH))
        rows.append(f'<tr data-verdict="{esc(r.verdict)}"><td><a href="#d-{_anchor(r.name)}"><b>{esc(r.name)}</b></a> '
                    f'<span class="note">{esc(r.version)}</span></td>'
                    f'<td><span class="chip {esc(r.verdict)}" title="{esc(r.verdict.meaning)}">'
                    f'{esc(r.verdict)}</span></td>'
                    f'<td class="n">{r.ran.get("baseline", "—")}</td><td class="n">{r.ran.get("candidate", "—")}</td>'
                    f'{nums}<td class="n{" warn" if warned else ""}">{warned}</td>'
                    f'<td class="n">{r.seconds / 60:.1f} min</td><td>{bar(c, r.name)}</td></tr>')
    return ('<table class="rows deps"><thead><tr><th>dependent</th><th>verdict</th><th>ran before</th>'
            "<th>ran after</th><th>broken</th><th>fixed</th><th>flaky</th><th>fails both</th>"
            "<th>new warnings</th><th>time</th><th>its tests</th></tr></thead><tbody>" + "".join(rows)
            + "</tbody></table>")


def _hot(cls: str, n: int) -> str:
    return (" hot" if cls in (UserTestStatus.BROKEN, UserTestStatus.FLAKY) else
            " good" if cls == UserTestStatus.FIXED else "") if n else ""


def _what_to_do(g: Group) -> str:
    """What a group is and what to do: its rule and fix, or what explains it; its first bad commit."""
    from jaxcompat.report.html import esc

    if g.explained_by:
        said = f"{esc(g.explained_by)}: {esc(g.fix)}" if g.fix else esc(g.explained_by)
    else:
        said = f"jax's API history: {esc(g.api)}" if g.api else f"no rule explains it; drafted as {esc(g.draft)}"
    first = _commit_link(g.bisect)
    return f" ({said}{'; first bad commit ' + first if first else ''})"


def _commit_link(b: dict) -> str:
    """A bisected group's first bad commit and its pull request, as links ("" when none was found)."""
    from jaxcompat.env.commits import REPOSITORIES
    from jaxcompat.report.html import esc, link

    if not b or not b.get("commit"):
        return ""
    repo = REPOSITORIES.get(b.get("package", ""), "")
    sha, pr = b["commit"], b.get("pull_request", "")
    commit = link(f"{repo}/commit/{sha}", sha[:12]) if repo else f"<code>{esc(sha[:12])}</code>"
    pull = (link(f"{repo}/pull/{pr.lstrip('#')}", f"{b.get('package', '')}{pr}") if repo and pr.lstrip("#").isdigit()
            else esc(pr))
    return f"{esc(b.get('package', ''))} {commit} {pull}".rstrip()


def _anchor(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in name)


def _root_tree(causes: list[RootCause], index: dict[str, tuple[int, Group]]) -> str:
    """The packages that broke, each with its groups (what to do about each) and the dependents
    failing through it, by their paths."""
    from jaxcompat.report.html import esc

    if not causes:
        return ""
    items = []
    for rc in causes:
        groups = ", ".join(f'<a href="#g-{index[k][0]}">group {index[k][0]}</a>{_what_to_do(index[k][1])}'
                           if k in index else esc(k) for k in rc.groups)
        deps = [f"<li><b>{esc(d)}</b>: {n} test{'s' * (n != 1)}"
                + (f' <span class="note">through {esc("; ".join(rc.through[d]))}</span>' if rc.through.get(d) else "")
                + "</li>" for d, n in rc.dependents.items()]
        if rc.own_tests:
            deps.append(f"<li><b>{esc(rc.package)}</b>'s own suite: {rc.own_tests} "
                        f"test{'s' * (rc.own_tests != 1)}</li>")
        items.append(f"<li><b>{esc(rc.package)}</b>{' (the candidate)' if rc.candidate else ''} broke: "
                     f"{rc.tests} test{'s' * (rc.tests != 1)} — {groups}<ul>{''.join(deps)}</ul></li>")
    return (f'<h2 id="roots">Root causes</h2><p class="note">{esc(shown_roots.HEADER)}</p>'
            f'<ul class="tree">{"".join(items)}</ul>')


def _groups_html(groups: list[Group], results: list[DependentResult]) -> str:
    """Each group once: what explains it, its fix, upstream, first bad commit; its tests folded."""
    from jaxcompat.report.html import esc, fold, link

    if not groups:
        return ""
    tests = {(r.name, t.test): t for r in results for t in r.tests}
    out = ['<h2 id="groups">Groups: broken tests by error</h2>']
    for i, g in enumerate(groups, 1):
        n = sum(len(v) for v in g.tests.values())
        if g.explained_by:
            why = f"this is <b>{esc(g.explained_by)}</b> (a known failure)"
        elif g.api:
            why = f"jax's API history: {esc(g.api)}"
        else:
            why = (f'no rule explains it: drafted as <code>{esc(g.draft)}</code> '
                   '(<a href="draft-rules.toml">draft-rules.toml</a>)')
        rows = [("why", why), ("fix", esc(g.fix)), ("upstream", " · ".join(link(u) for u in g.upstream)),
                ("first bad commit", _commit_html(g.bisect)), ("lies in", esc(" → ".join([*g.through, g.root])))]
        listed = "".join(f"<li><b>{esc(dep)}</b> ({len(ts)}): " + ", ".join(f"<code>{esc(t)}</code>" for t in ts)
                         + "</li>" for dep, ts in sorted(g.tests.items()))
        first = next((tests[(d, t)] for d, ts in sorted(g.tests.items()) for t in ts if (d, t) in tests), None)
        example = (fold("a traceback (its first test)", f"<pre>{esc(first.traceback)}</pre>")
                   if first and first.traceback else "")
        out.append(f'<section class="group{" explained" if g.explained_by else ""}" id="g-{i}">'
                   f"<h3>group {i}: {n} broken test{'s' * (n != 1)} in {len(g.tests)} dependent"
                   f"{'s' * (len(g.tests) != 1)} ({esc(', '.join(sorted(g.tests)))})</h3>"
                   f"<code>{esc(g.signature.key)}</code><dl>"
                   + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows if v) + "</dl>"
                   + fold(f"its {n} test{'s' * (n != 1)}", f"<ul>{listed}</ul>{example}") + "</section>")
    return "".join(out)


def _commit_html(b: dict) -> str:
    """The commit that broke a group (crater --bisect), its pull request and commit as links."""
    from jaxcompat.report.html import esc, link

    if not b:
        return ""
    if not b.get("commit"):
        return esc(b.get("message", ""))
    said = _commit_link(b)
    if b.get("range"):
        said = f"one of {len(b['range'])} commits up to {said}"
    refs = " · ".join(link(u) for u in b.get("references", []))
    return (f"{said} ({esc(b.get('date', '')[:10])}) “{esc(b.get('title', ''))}”"
            + (f", shipped in {esc(b['shipped_in'])}" if b.get("shipped_in") else "")
            + f' <span class="note">[{esc(b.get("steps", "?"))} steps over {esc(b.get("commits", "?"))} commits]</span>'
            + (f"<br>cites: {refs}" if refs else ""))


def _details_html(results: list[DependentResult]) -> str:
    """Each dependent: why it was not judged, what else differed, its other failing tests (by
    class, each message once, folded), its own code's uses of what jax removes."""
    from jaxcompat.report.html import esc, fold

    out = ['<h2 id="details">Each dependent</h2>']
    for r in sorted(results, key=lambda r: r.name):
        notes = [x for x in (r.cause, shown_warnings.health_line(r.health)) if x]
        notes += [x.strip() for x in sides_lines(Sides.from_dict(r.sides))] if r.sides.get("confounders") else []
        notes += [f"not as of the day in the {side}: its requirements took {', '.join(later)}"
                  for side, later in sorted(r.past_day.items())]
        notes += [reused_line(r)] if r.baseline_reused else []
        others = "".join(_class_fold(r, cls) for cls in (UserTestStatus.FLAKY, UserTestStatus.FAILS_BOTH,
                                                          UserTestStatus.FIXED))
        scanned = "".join(f"<li><code>{esc(f['path'])}:{f['line']}</code> {esc(f['code'])} {esc(f['message'])}</li>"
                          for f in r.scan)
        if scanned:
            others += fold(f"its own code against jax's API history (jax-compat scan): {len(r.scan)} use(s)",
                           f"<ul>{scanned}</ul>")
        out.append(f'<section id="d-{_anchor(r.name)}"><h3>{esc(r.name)} {esc(r.version)}: '
                   f'<span class="chip {esc(r.verdict)}">{esc(r.verdict)}</span></h3>'
                   + "".join(f'<p class="note">{esc(n)}</p>' for n in notes)
                   + (others or ('<p class="note">its broken tests are in the <a href="#groups">groups</a> above</p>'
                                 if r.broken() else "")) + "</section>")
    return "".join(out)


def _class_fold(r: DependentResult, cls: UserTestStatus) -> str:
    from jaxcompat.report.html import esc, fold

    same: dict[str, list] = {}
    for t in r.tests:
        if t.cls == cls:
            same.setdefault(t.shown, []).append(t)
    if not same:
        return ""
    items = "".join(f"<li>{len(ts)} × <code>{esc(msg or '(no message)')}</code>: "
                    + ", ".join(f"<code>{esc(t.test)}</code>" for t in ts) + "</li>" for msg, ts in same.items())
    n = sum(len(ts) for ts in same.values())
    return fold(f"{n} {esc(cls)} — {esc(TEST_CLASSES[cls].meaning)}", f"<ul>{items}</ul>")


def junit(results: list[DependentResult]) -> str:
    """One test case per dependent test that was not a plain pass, and one per dependent not judged."""

    cases = []
    for r in sorted(results, key=lambda r: r.name):
        if not r.verdict.judged or r.verdict == DependentVerdict.NONE_RAN:
            kind = {DependentVerdict.CAPPED: Kind.SKIPPED,
                    DependentVerdict.NONE_RAN: Kind.FAILURE}.get(r.verdict, Kind.ERROR)
            cases.append(junit_xml.Case(r.name, "(dependent)", kind, str(r.verdict), r.cause, r.cause))
            continue
        for t in r.tests:
            cls, name = junit_xml.case_of(t.test)
            case = junit_xml.Case(f"{r.name}.{cls}", name)
            kind = TEST_CLASSES[t.cls].junit
            if kind == Kind.FAILURE:
                case.kind, case.type = Kind.FAILURE, str(t.cls)
                case.message = t.cls + (f": explained by {t.explained_by}" if t.explained_by else "")
                case.text = f"{t.shown}\n{t.traceback}"
            elif kind == Kind.SKIPPED:
                case.kind = Kind.SKIPPED
            cases.append(case)
    return junit_xml.render(junit_xml.Suite("crater", cases))

"""The nightly crater's history as a page: per dependent one mark a night, then each break with the
night it appeared, its first bad commit and pull request (links upstream), and the night it was
fixed. Every text was scrubbed when the nights were read (operations/site.py); here it is escaped.
The page shell and the site's bar are report/site.py's."""

from __future__ import annotations

from jaxcompat.env.commits import REPOSITORIES
from jaxcompat.model.history import ABSENT, Break, Commit, History, Mark, Night
from jaxcompat.model.vocab import DependentVerdict
from jaxcompat.report.html import banner, esc, fold

CSS = """table.marks td.m{width:2.6em;height:1.7em;text-align:center;border:1px solid #fff;font-weight:600}
td.m a{color:inherit;text-decoration:none;display:block}
.v-safe{background:#3cb44b;color:#fff}.v-broken{background:#d62728;color:#fff}.v-absent{background:#eee;color:#999}
.v-other{background:#f0ad4e;color:#000}td.m.new{outline:3px solid #000;outline-offset:-3px}
td.m.fixed{outline:3px dashed #000;outline-offset:-3px}
table.breaks td,table.breaks th,table.nights td,table.nights th{border:1px solid #ccc;padding:3px 6px;
vertical-align:top}
table.marks th{padding:2px 6px;text-align:left}table.marks th.night{writing-mode:vertical-rl;transform:rotate(180deg)}
.sig{font-family:monospace;font-size:12px}"""

_LETTER = {DependentVerdict.SAFE.value: "✓", DependentVerdict.BROKEN.value: "✗", ABSENT: "·"}


def commit_links(c: Commit) -> str:
    """The commit (and its pull request) as links to the package's repository when it is known."""
    repo = REPOSITORIES.get(c.package, "")
    sha = esc(c.commit[:12])
    link = f'<a href="{esc(repo)}/commit/{esc(c.commit)}">{sha}</a>' if repo else f"<code>{sha}</code>"
    pr = c.pull_request
    if pr.startswith("#") and pr[1:].isdigit() and repo:
        pr_html = f' (<a href="{esc(repo)}/pull/{esc(pr[1:])}">{esc(pr)}</a>)'
    else:
        pr_html = f" ({esc(pr)})" if pr else ""
    title = f" “{esc(c.title)}”" if c.title else ""
    when = f", {esc(c.date)}" if c.date else ""
    shipped = f", shipped in {esc(c.package)} {esc(c.shipped_in)}" if c.shipped_in else ""
    return f"{esc(c.package)} {link}{pr_html}{title}{when}{shipped}"


def _mark(m: Mark, night_link: str) -> str:
    cls = "v-" + (m.verdict if m.verdict in _LETTER else "other")
    cls += " new" if m.appeared else ""
    cls += " fixed" if m.fixed else ""
    letter = _LETTER.get(m.verdict, "?")
    tip = f"{m.night}: {m.verdict}"
    if m.verdict != ABSENT:
        tip += f" ({m.version}; ran {m.ran[0]} before, {m.ran[1]} after; broken {m.broken})"
        tip += f": {m.cause}" if m.cause and m.verdict not in _LETTER else ""
    tip += f"; a break appeared: {len(m.appeared)}" if m.appeared else ""
    tip += f"; fixed: {len(m.fixed)}" if m.fixed else ""
    text = esc(f"{letter}{m.broken if m.broken else ''}")
    if night_link and m.verdict != ABSENT:
        text = f'<a href="{esc(night_link)}">{text}</a>'
    return f'<td class="m {cls}" data-verdict="{esc(m.verdict)}" title="{esc(tip)}">{text}</td>'


def marks_table(h: History) -> str:
    """Dependents × nights, one mark each (✓ safe, ✗ broken with its count, · absent, ? not judged)."""
    head = "".join(f'<th class="night"><a href="{esc(n.report)}">{esc(n.name)}</a></th>' if n.report
                   else f'<th class="night">{esc(n.name)}</th>' for n in h.nights)
    links = {n.name: n.report for n in h.nights}
    rows = [f"<tr><th>{esc(dep)}</th>{''.join(_mark(m, links.get(m.night, '')) for m in marks)}</tr>"
            for dep, marks in sorted(h.marks.items())]
    return (f'<table class="marks"><tr><th>dependent</th>{head}</tr>{"".join(rows)}</table>'
            '<p class="legend"><span class="v-safe">&nbsp;✓&nbsp;</span> safe &nbsp;'
            '<span class="v-broken">&nbsp;✗N&nbsp;</span> broken (N tests) &nbsp;'
            '<span class="v-other">&nbsp;?&nbsp;</span> not judged (capped, not run, over budget…) &nbsp;'
            '<span class="v-absent">&nbsp;·&nbsp;</span> not in that night\'s run; '
            'a solid frame: a break appeared that night; a dashed frame: a break was fixed that night</p>')


def _what(b: Break) -> str:
    sig = f'<div class="sig">{esc(b.signature)}</div>' if b.signature else "<div>broken (no group named it)</div>"
    why = (f"explained by rule <code>{esc(b.explained_by)}</code>" if b.explained_by
           else f"no rule explains it: drafted as <code>{esc(b.draft)}</code>" if b.draft else "")
    fix = f"; fix: {esc(b.fix)}" if b.fix else ""
    return sig + (f"<div>{why}{fix}</div>" if why or fix else "")


def breaks_table(h: History) -> str:
    """Each break once: what, the night it appeared, its first bad commit, the night it was fixed."""
    if not h.breaks:
        return "<p>No dependent broke on any of these nights.</p>"
    rows = []
    for b in sorted(h.breaks, key=lambda b: (b.fixed != "", b.appeared, b.dependent)):
        commit = (commit_links(b.commit) + (f" <small>(bisected on the night of {esc(b.bisected_on)})</small>"
                                            if b.bisected_on != b.appeared else "")
                  if b.commit else "not bisected")
        fixed = (f"fixed on the night of <b>{esc(b.fixed)}</b>" if b.fixed
                 else f"<b>still broken</b> (last seen {esc(b.last_seen)}" + (
                     f"; not re-run, or still failing, on the night of {esc(b.not_rerun)})" if b.not_rerun
                     else ")"))
        rows.append(f'<tr class="{"fixed" if b.fixed else "open"}"><td><b>{esc(b.dependent)}</b></td>'
                    f"<td>{_what(b)}</td><td>appeared on the night of <b>{esc(b.appeared)}</b></td>"
                    f"<td>{commit}</td><td>{fixed}</td></tr>")
    return ('<table class="breaks"><tr><th>dependent</th><th>what broke</th><th>appeared</th>'
            f'<th>first bad commit</th><th>fixed</th></tr>{"".join(rows)}</table>')


def nights_table(h: History) -> str:
    rows = []
    for n in reversed(h.nights):
        counts: dict[str, int] = {}
        for o in n.outcomes:
            counts[o.verdict] = counts.get(o.verdict, 0) + 1
        said = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
        report = f'<a href="{esc(n.report)}">report</a>' if n.report else ""
        rows.append(f"<tr><td><b>{esc(n.name)}</b></td><td>{esc(' '.join(n.candidate))}</td>"
                    f"<td>{esc(' '.join(n.baseline))}</td><td>{esc(n.exit)}</td><td>{esc(said)}</td>"
                    f"<td>{report}</td></tr>")
    return ('<table class="nights"><tr><th>night</th><th>candidate</th><th>baseline</th><th>exit</th>'
            f'<th>dependents</th><th>its report</th></tr>{"".join(rows)}</table>')


def headline(h: History) -> tuple[bool, str]:
    """(all clear, one sentence): the newest night and the breaks still open."""
    newest: Night = h.nights[-1]
    still = h.open
    if not still:
        return True, (f"Night of {newest.name}: no break open ({len(h.nights)} nights, {len(h.breaks)} breaks, "
                      "all fixed).")
    who = ", ".join(sorted({b.dependent for b in still}))
    return False, (f"Night of {newest.name}: {len(still)} break{'s' if len(still) != 1 else ''} open ({who}); "
                   f"the oldest appeared on the night of {min(b.appeared for b in still)}.")


def banner_of(h: History, nights_from: str) -> str:
    """The headline as the page's verdict banner: not safe while a break is open, else the newest
    night's own verdict (its crater's exit status)."""
    ok, said = headline(h)
    newest = h.nights[-1]
    meta = [f"the newest night's candidate <code>{esc(' '.join(newest.candidate))}</code> against "
            f"<code>{esc(' '.join(newest.baseline))}</code>; {len(h.nights)} nights from <code>{esc(nights_from)}"
            "</code>"]
    return banner(newest.exit if ok else 1, said, meta)


def body(h: History, nights_from: str) -> str:
    """The page under its banner (``banner_of``)."""
    return (f"<h1>The nightly crater: history</h1><p>{len(h.nights)} nights from <code>{esc(nights_from)}</code>, "
            "oldest first; each mark links to that night's report.</p>"
            f"<h2>Per dependent, one mark a night</h2>{marks_table(h)}"
            f"<h2>Breaks</h2>{breaks_table(h)}<h2>The nights</h2>"
            + fold(f"the {len(h.nights)} nights: candidate, baseline, exit, its report", nights_table(h)))

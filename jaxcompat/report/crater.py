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
from jaxcompat.report.usertests import CHECK_CSS


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


def html(text: str, results: list[DependentResult], warned: list[NewWarning] = ()) -> str:
    from jaxcompat.report.html import esc, page

    body = [f"<h1>jax-compat crater</h1><pre>{esc(text)}</pre>", shown_warnings.html(list(warned))]
    for r in sorted(results, key=lambda r: r.name):
        failing = [t for t in r.tests if TEST_CLASSES[t.cls].failed or t.cls == UserTestStatus.FLAKY]
        rows = "".join(
            f'<tr class="c-{esc(t.cls)}"><td><b>{esc(t.cls)}</b></td><td><code>{esc(t.test)}</code>'
            f"<details><summary>{esc(t.shown or 'traceback')}</summary><pre>{esc(t.traceback)}</pre>"
            f"</details></td><td>{esc(t.baseline)}</td><td>{esc(t.candidate)}</td>"
            f"<td>{esc(t.explained_by or t.explained_by_api or '')}</td></tr>" for t in failing)
        scanned = "".join(f"<li><code>{esc(f['path'])}:{f['line']}</code> {esc(f['code'])} {esc(f['message'])}</li>"
                          for f in r.scan)
        body.append(f"<h2>{esc(r.name)} {esc(r.version)}: {esc(r.verdict)}</h2><p>{esc(r.cause)}</p>"
                    + (f"<details><summary>its own code against jax's API history (jax-compat scan): "
                       f"{len(r.scan)} use(s)</summary><ul>{scanned}</ul></details>" if scanned else "")
                    + (f"<table><tr><th>class</th><th>test</th><th>baseline</th><th>candidate</th>"
                       f"<th>explained by</th></tr>{rows}</table>" if rows else ""))
    return page("jax-compat crater", "".join(body), CHECK_CSS)


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

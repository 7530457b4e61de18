"""The terminal text of ``check``: a candidate's verdict (which known failures it hits, with the
documented fix, what fails with no known explanation, what the rules predicted that did not happen,
the warnings before the break dated by jax's API history), its one-line summary, and what was
installed that is not a PyPI release or was added by the suite."""

from __future__ import annotations

from collections.abc import Mapping

from jaxcompat._util.text import first_line
from jaxcompat.apihistory.apiexplain import histories
from jaxcompat.env import sources
from jaxcompat.knowledge.deprecations import forecast
from jaxcompat.model.deprecations import History
from jaxcompat.model.matrix import Matrix
from jaxcompat.model.outcomes import FAILING_OUTCOMES, UNEXPLAINED_OUTCOMES, CellResult
from jaxcompat.model.scan import InstalledScan
from jaxcompat.model.vocab import CellOutcome, CellStatus, EnvironmentKind, Outcome
from jaxcompat.plugin.packages import ECOSYSTEM
from jaxcompat.report.apiexplain import ecosystem_lines
from jaxcompat.report.reports import reuse_line


def check_verdict(result: CellResult, matrix: Matrix, scanned: InstalledScan | None) -> tuple[str, bool]:
    """``check``'s text (without --tests or --env): the candidate's verdict, its ecosystem read against
    jax's API history (``scanned``), what the result cache supplied; and whether it is safe."""
    jax = result.versions.get("jax", "")
    eco, reused = ecosystem_lines(scanned, jax, result.results), reuse_line([result])
    text, safe = candidate_verdict(result, matrix)
    return text + "\n" * bool(eco) + eco + ("\n" + reused if reused else ""), safe


def candidate_verdict(result: CellResult, matrix: Matrix) -> tuple[str, bool]:
    """The candidate's verdict (``verdict``), its warnings before the break dated by jax's API
    history (the same history as scan: "which jax removes in 0.10.0", where jax's own message
    announces nothing)."""
    return verdict(result, matrix, histories(result.deprecations))


def verdict(result: CellResult, matrix: Matrix, history: Mapping[str, History] | None = None) -> tuple[str, bool]:
    """Human verdict and whether the candidate is safe (no failure of any kind). ``history``: what
    jax's API history says of each deprecation's API (``apihistory.apiexplain.histories``), so the
    warnings before the break name the release that removes it."""
    where = (f" (existing environment, Python {result.python}, {result.backend})"
             if result.environment != EnvironmentKind.BUILT else "")
    shown = [d for d in result.versions if d in ECOSYSTEM + ("numpy",)]
    lines = [f"Candidate {result.id}{where}: " + ", ".join(f"{d}=={result.versions[d]}" for d in shown
                                                            if d not in result.added)]
    lines += source_lines(result)
    lines += added_lines(result)
    if result.status != CellStatus.OK:
        return "\n".join(lines + _did_not_work(result, matrix)), False
    hits: dict[str, list[str]] = {}
    advisories: dict[str, list[str]] = {}
    for r in result.results:
        if r.outcome == Outcome.REPRODUCED and r.failure:
            f = matrix.failure(r.failure)
            (advisories if f is not None and f.advisory else hits).setdefault(r.failure, []).append(r.case)
    unexplained = [r for r in result.results if r.outcome in UNEXPLAINED_OUTCOMES]
    stale = [r for r in result.results if r.outcome == Outcome.STALE]
    safe = not (hits or unexplained or stale or result.outcome == CellOutcome.STALE)
    lines += _hits(hits, matrix) + _advisories(advisories, matrix) + _unexplained(unexplained)
    lines += ["  ! known failures the rules predicted but that did not happen (rules out of date):"] if stale else []
    lines += [f"    - {r.case}: {r.failure}" for r in stale]
    lines += ["  ! " + "; ".join(result.notes)] if result.outcome == CellOutcome.STALE else []
    ahead = forecast(result.deprecations, result.versions, history)
    if ahead:
        lines.append("  ! warnings before the break (jax deprecations this combination's packages use):")
        lines += [f"    - {line}" for line in ahead]
    skipped = sum(r.outcome == Outcome.SKIPPED for r in result.results)
    if safe and skipped == len(result.results):  # nothing ran: nothing judged (``item``), never "safe"
        lines.append(f"  ? not judged: every case was skipped here ({skipped})")
    elif safe:
        passed = sum(r.outcome == Outcome.PASS for r in result.results)
        lines.append(f"  ✓ safe: {passed} case(s) pass, {skipped} skipped, no known failure applies")
    if any(r.outcome in FAILING_OUTCOMES for r in result.results) or hits:
        fixes = sorted({matrix.failure(f).fix for f in hits if matrix.failure(f)})
        if fixes:
            lines.append("  what to pin instead: " + "; ".join(fixes))
    return "\n".join(lines), safe


def summary(result: CellResult, matrix: Matrix) -> str:
    """The verdict in one line, from the record (for a list of candidates tried one after another)."""
    if result.status != CellStatus.OK:
        return f"does not work: {result.status}" + (f" (known failure {result.failure})" if result.failure else "")
    hits = [r.failure for r in result.results if r.outcome == Outcome.REPRODUCED and r.failure
            and not getattr(matrix.failure(r.failure), "advisory", False)]
    unexplained = [r for r in result.results if r.outcome in UNEXPLAINED_OUTCOMES]
    stale = [r for r in result.results if r.outcome == Outcome.STALE]
    said = (([f"hits {', '.join(dict.fromkeys(hits))}"] if hits else [])
            + ([f"{len(unexplained)} unexplained failure(s)"] if unexplained else [])
            + ([f"{len(stale)} rule(s) out of date"] if stale or result.outcome == CellOutcome.STALE else []))
    return "; ".join(said) or "safe"


def source_lines(result: CellResult) -> list[str]:
    """What was installed that is not a PyPI release, exactly (version, source, commit), and the
    indexes it was resolved from."""
    lines = []
    idx = result.index or {}
    where = (([f"index {idx['index_url']}"] if idx.get("index_url") else [])
             + [f"extra index {u}" for u in idx.get("extra_index_urls", [])]
             + [f"find-links {f}" for f in idx.get("find_links", [])])
    if where or idx.get("pre"):
        lines.append("  resolved from: " + ", ".join(where or ["PyPI"]) + ("; pre-releases allowed (--pre)"
                                                                          if idx.get("pre") else ""))
    lines += [f"  installed: {sources.describe(d, rec)}" for d, rec in result.sources.items()]
    if not result.sources and any(sources.is_direct(v) for v in result.requested.values()):
        lines += [f"  requested: {d} {v}" for d, v in result.requested.items() if sources.is_direct(v)]
    return lines


def added_lines(result: CellResult) -> list[str]:
    """What the suite added to run every case (not the user's pins), and the releases it skipped."""
    if not result.added:
        return []
    have = [f"{d}=={a.version}" for d, a in result.added.items() if a.version]
    lines = ["  added by the suite so every case can run (not your pins): " + (", ".join(have) or "none")]
    for d, a in result.added.items():
        lines += [f"    - {d} {s['version']} skipped: {s['reason']}" for s in a.skipped]
        if a.left_out and a.skipped:
            lines.append(f"    - {d} left out: no release imports with your pins; the cases that need it are skipped")
    return lines


def _did_not_work(result: CellResult, matrix: Matrix) -> list[str]:
    """The candidate did not resolve, install or import: its status, the known failure, the error's end.
    An import error names the user's pins that failed first; one only in a package the suite added
    is said to be that, never that the candidate does not work."""
    failed = list(result.failed_imports) if result.status == CellStatus.IMPORT_ERROR else []
    mine = [m for m in failed if m not in result.added] if result.environment == EnvironmentKind.BUILT else []
    head = f"  ✗ the candidate does not work: {result.status}"
    if mine:
        pins = ", ".join(f"{d}=={v}" for d, v in result.versions.items() if d in ECOSYSTEM and d not in result.added)
        head = f"  ✗ your pins do not work together: import {', '.join(mine)} failed ({pins})"
    elif failed and result.added:
        head = (f"  ? not judged: {', '.join(failed)}, added by the suite (not your pins), failed to import; "
                "this says nothing against your candidate")
    if result.failure:
        f = matrix.failure(result.failure)
        head += f" — known failure {result.failure}"
        if f:
            head += f"\n      fix: {f.fix}\n      upstream: {', '.join(f.upstream)}"
    if mine or result.status == CellStatus.IMPORT_ERROR:
        block = result.failed_imports.get(mine[0], "") if mine else ""
        return [head, "      " + "\n      ".join((block or result.message.strip()).splitlines()[-6:])]
    said = result.message.strip().splitlines()
    said = said if len(said) <= 7 else said[:1] + ["…"] + said[-5:]  # the resolver's first line, and its end
    return [head, "      " + "\n      ".join(said)]


def _hits(hits: dict[str, list[str]], matrix: Matrix) -> list[str]:
    """The known failures it hits, each with its fix, workaround and upstream links."""
    lines = ["  ✗ known failures this combination hits:"] if hits else []
    for fid, cases in hits.items():
        f = matrix.failure(fid)
        lines.append(f"    - {fid}: {f.title if f else ''} ({len(cases)} case(s))")
        if f:
            lines.append(f"        fix: {f.fix}")
            lines += [f"        workaround: {f.workaround}"] if f.workaround else []
            lines.append(f"        upstream: {', '.join(f.upstream)}")
    return lines


def _advisories(advisories: dict[str, list[str]], matrix: Matrix) -> list[str]:
    lines = (["  i advisories (usage pitfalls present on every release; not a reason to avoid this one):"]
             if advisories else [])
    for fid in advisories:
        f = matrix.failure(fid)
        lines.append(f"    - {fid}: {f.title if f else ''}" + (f"\n        advice: {f.fix}" if f else ""))
    return lines


def _unexplained(results: list) -> list[str]:
    """Failures no rule explains, each with its first line and the end of its traceback."""
    lines = ["  ✗ failures with no known explanation (new regressions?):"] if results else []
    for r in results:
        lines.append(f"    - {r.case}: {r.outcome}: {first_line(r.message, 200)}")
        if r.traceback:
            lines += ["        " + ln for ln in r.traceback.rstrip().splitlines()[-8:]]
    return lines

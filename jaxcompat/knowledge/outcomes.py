"""The rules that turn a raw test result into an outcome, and a cell's state into a verdict.

The records they judge (``RawResult``, ``CaseResult``, ``CellResult``) are the model's
(``jaxcompat.model.outcomes``); the vocabulary (``Outcome``, ``CellStatus``, ``CellOutcome``) is
defined once, in ``jaxcompat.model.vocab``.
"""

from __future__ import annotations

from jaxcompat.knowledge.rules import case_failures, cell_failures, collateral_failures
from jaxcompat.model.matrix import Failure
from jaxcompat.model.outcomes import CELL_OK, CaseResult, CellResult, RawResult
from jaxcompat.model.vocab import CellOutcome, CellStatus, Expectation, Outcome, TestStatus

MESSAGE_LIMIT = 2000
CLIP_MARK = "\n[…]\n"  # where a stored message was cut (both ends kept)


def _clip(text: str, limit: int) -> str:
    """At most ``limit`` characters, from both ends (the message of a runtime error comes last)."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}{CLIP_MARK}{text[-half:]}"


def error_matches(failure: Failure, error_types: list[str], message: str) -> bool:
    return bool(set(failure.errors) & set(error_types)) and bool(failure.match.search(message))


def classify(raw: RawResult, failures, versions: dict[str, str], backend: str) -> CaseResult:
    """Apply what we know (the failure rules) to what happened (the raw result)."""
    known = case_failures(failures, raw.case, versions, backend)
    base = dict(case=raw.case, duration_s=round(raw.duration_s, 3),
                message=_clip(raw.message, MESSAGE_LIMIT), error_type=(raw.error_types or [""])[0],
                error_types=list(raw.error_types), traceback=raw.traceback, status=raw.status,
                reused_from=raw.reused_from, phase=raw.phase)
    first = known[0] if known else None
    expected = Expectation.FAIL if known else Expectation.PASS
    links = dict(fix=first.fix, upstream=list(first.upstream)) if first else {}

    if raw.status == TestStatus.SKIPPED:
        return CaseResult(failure=first.id if first else None, expected=expected,
                          outcome=Outcome.SKIPPED, **base, **links)
    if raw.status in (TestStatus.TIMEOUT, TestStatus.CRASH):
        # A rule may document a crash/timeout itself (its `error` names "crash"/"timeout").
        for f in known + collateral_failures(failures, raw.case, versions, backend):
            if raw.status in f.errors and f.match.search(raw.message):
                return CaseResult(failure=f.id, expected=Expectation.FAIL, outcome=Outcome.REPRODUCED, **base,
                                  fix=f.fix, upstream=list(f.upstream))
        return CaseResult(failure=first.id if first else None, expected=expected,
                          outcome=Outcome(raw.status.value), **base, **links)
    if raw.status == TestStatus.PASSED:
        return CaseResult(failure=first.id if first else None, expected=expected,
                          outcome=Outcome.STALE if known else Outcome.PASS, **base, **links)
    # failed
    for f in known:
        if error_matches(f, raw.error_types, raw.message):
            return CaseResult(failure=f.id, expected=Expectation.FAIL, outcome=Outcome.REPRODUCED, **base,
                              fix=f.fix, upstream=list(f.upstream))
    # A broken code path many cases share (collateral) may fail first and mask what was expected.
    for f in collateral_failures(failures, raw.case, versions, backend):
        if error_matches(f, raw.error_types, raw.message):
            return CaseResult(failure=f.id, expected=expected, outcome=Outcome.REPRODUCED, **base,
                              fix=f.fix, upstream=list(f.upstream))
    if known:
        return CaseResult(failure=first.id, expected=Expectation.FAIL, outcome=Outcome.MISMATCH, **base, **links)
    return CaseResult(failure=None, expected=Expectation.PASS, outcome=Outcome.REGRESSION, **base)


def classify_cell_error(cell: CellResult, stage: str, failures, versions: dict[str, str]) -> None:
    """Explain a cell that stopped at ``stage`` (resolve/import) with a known failure, if one
    applies and its pattern matches the resolver's or interpreter's own message."""
    for f in cell_failures(failures, stage, versions, cell.backend):
        if f.match.search(cell.message):
            cell.failure, cell.outcome = f.id, CellOutcome.EXPECTED
            return
    cell.outcome = CellOutcome.CELL_ERROR


def check_import_rules(cell: CellResult, failures, versions: dict[str, str]) -> None:
    """A cell that imported fine although an import-stage rule predicted it would not."""
    predicted = cell_failures(failures, "import", versions, cell.backend)
    if predicted and cell.status == CELL_OK:
        cell.failure, cell.outcome = predicted[0].id, CellOutcome.STALE
        cell.notes.append(f"known failure {predicted[0].id} predicted an import error, "
                          "but every package imported: the rule is out of date")


def reclassify(cell: CellResult, failures) -> CellResult:
    """The same observations judged by (possibly newer) rules: what a stored report says today."""
    from dataclasses import replace

    out = replace(cell, results=[], notes=[n for n in cell.notes if "known failure" not in n],
                  failure=None, outcome=CellOutcome.OK if cell.status == CELL_OK else cell.outcome)
    if cell.status in (CellStatus.UNRESOLVABLE, CellStatus.INSTALL_ERROR, CellStatus.IMPORT_ERROR):
        out.outcome = CellOutcome.OK
        classify_cell_error(out, "import" if cell.status == CellStatus.IMPORT_ERROR else "resolve", failures,
                            cell.versions or cell.requested)
        return out
    if cell.status != CELL_OK:
        return out
    check_import_rules(out, failures, cell.versions)
    out.results = [_rejudge(r, failures, cell.versions, cell.backend) for r in cell.results]
    return out


def _rejudge(stored: CaseResult, failures, versions: dict[str, str], backend: str) -> CaseResult:
    """One stored result judged by today's rules. A stored message is clipped to ``MESSAGE_LIMIT``
    from both ends; a rule whose ``match`` met the full text when the case ran may not find it in
    what was kept. Such a result stays ``reproduced`` by that rule while the rule still applies to
    the case and its error types still fit: the clipped text is not new evidence against it."""
    from dataclasses import replace

    new = classify(stored.raw(), failures, versions, backend)
    if (new.outcome not in (Outcome.MISMATCH, Outcome.REGRESSION) or stored.outcome != Outcome.REPRODUCED
            or CLIP_MARK not in stored.message):
        return new
    applying = {f.id: f for f in case_failures(failures, stored.case, versions, backend)
                + collateral_failures(failures, stored.case, versions, backend)}
    f = applying.get(stored.failure or "")
    if f is None or not set(f.errors) & set(stored.error_types):
        return new
    return replace(new, failure=f.id, outcome=Outcome.REPRODUCED, fix=f.fix, upstream=list(f.upstream))


def cell_label(cell: CellResult) -> str:
    """A cell's state in a few words, the same in every report: ``ok``, ``import-error = known
    numpy2-import``, ``unresolvable [cell-error]``, ``ok [stale]``."""
    if cell.status == CELL_OK:
        return str(CellOutcome.OK) + ("" if cell.outcome == CellOutcome.OK else f" [{cell.outcome}]")
    return f"{cell.status} = known {cell.failure}" if cell.failure else f"{cell.status} [{cell.outcome}]"


def flag_flaky(result: CellResult, repeats: list[list]) -> None:
    """A case whose outcome differs between repeats is ``flaky`` (and fails the run)."""
    result.notes.append(f"each case ran {len(repeats) + 1} times")
    for r in result.results:
        seen = [r.outcome] + [next((x.outcome for x in rep if x.case == r.case), "missing")
                              for rep in repeats]
        if len(set(seen)) > 1:
            r.message = f"outcomes over {len(seen)} runs: {', '.join(seen)}\n{r.message}"
            r.outcome = Outcome.FLAKY

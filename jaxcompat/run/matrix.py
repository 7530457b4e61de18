"""Run many cells in parallel and write the consolidated report.

Cells are independent jobs (one thread each, waiting on its own subprocesses). Ctrl-C or
SIGTERM stops the run: running cases are killed, finished cell reports stay as written, and the
consolidated report lists the cells that did not finish (re-run them with ``--only-missing``).
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import signal
import sys
import threading
from pathlib import Path

from jaxcompat._util.text import quiet
from jaxcompat._util.uvbin import ToolMissing
from jaxcompat.knowledge.outcomes import cell_label
from jaxcompat.model.matrix import Cell, Matrix
from jaxcompat.model.outcomes import CellResult
from jaxcompat.model.vocab import CellOutcome, CellStatus
from jaxcompat.report import reports
from jaxcompat.report.matrixreport import write_cell, write_matrix
from jaxcompat.run.cell import run_cell
from jaxcompat.run.runner import STOP, stop_all


def default_jobs() -> int:
    return max(1, os.cpu_count() or 1)


def not_run(cell: Cell, why: str) -> CellResult:
    return CellResult(id=cell.id, python=cell.python, backend=cell.backend, status=CellStatus.NOT_RUN,
                      outcome=CellOutcome.INTERRUPTED, requested=dict(cell.pins), message=why)


def run_cells(matrix: Matrix, cells: list[Cell], *, jobs: int, state_dir: Path, reports_dir: Path,
              case_args: list[str] | None = None, repeat: int = 1, compile_bytecode: bool = True,
              use_cache: bool = True, progress=quiet) -> tuple[list[CellResult], bool]:
    """Run ``cells``; return (results in matrix order, interrupted?)."""
    results: dict[str, CellResult] = {}
    interrupted = False
    previous = None
    stopping = threading.Event()
    if threading.current_thread() is threading.main_thread():
        def _term(signum, frame):  # SIGTERM behaves like Ctrl-C; a second one while stopping is ignored
            if not stopping.is_set():
                raise KeyboardInterrupt
        previous = signal.signal(signal.SIGTERM, _term)
    pool = cf.ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="cell")
    futures: dict[cf.Future, Cell] = {}
    try:
        futures = {pool.submit(run_cell, c, matrix, state_dir=state_dir, reports_dir=reports_dir,
                               case_args=case_args, repeat=repeat,
                               compile_bytecode=compile_bytecode, use_cache=use_cache): c for c in cells}
        pending = set(futures)
        while pending:
            done, pending = cf.wait(pending, timeout=0.5, return_when=cf.FIRST_COMPLETED)
            for fut in done:
                cell = futures[fut]
                try:
                    res = fut.result()
                except ToolMissing:  # uv or git: every cell's, the user's setup; said once (exit 2)
                    raise
                except Exception as e:  # noqa: BLE001 - a harness bug in one cell must not lose the rest
                    res = CellResult(id=cell.id, python=cell.python, backend=cell.backend,
                                     status=CellStatus.HARNESS_ERROR, outcome=CellOutcome.CELL_ERROR,
                                     requested=dict(cell.pins), message=f"{type(e).__name__}: {e}")
                    write_cell(res, reports_dir)
                results[cell.id] = res
                progress(f"[{len(results)}/{len(cells)}] {_line(res)}")
    except KeyboardInterrupt:
        stopping.set()  # e.g. `timeout` forwarding the same SIGTERM: stop once, keep every report
        interrupted = True
        progress("interrupted: stopping running cells; finished reports are kept")
        stop_all()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    for fut, cell in futures.items():
        if cell.id not in results:
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                results[cell.id] = fut.result()
            else:
                results[cell.id] = not_run(cell, "the run was interrupted before this cell started")
    STOP.clear()
    return [results[c.id] for c in cells if c.id in results], interrupted


def _line(c: CellResult) -> str:
    outs: dict[str, int] = {}
    for r in c.results:
        outs[r.outcome] = outs.get(r.outcome, 0) + 1
    detail = ", ".join(f"{k} {v}" for k, v in sorted(outs.items()))
    status = cell_label(c)
    n = sum(1 for r in c.results if r.reused_from)
    reused = f" · re-used {n}/{len(c.results)}" if n else ""
    return f"{c.id}: {status}{' — ' + detail if detail else ''}{reused} [{c.timings.get('total_s', 0):.1f} s]"


def write_consolidated(matrix: Matrix, results: list[CellResult], reports_dir: Path,
                       name: str = "matrix", extra_meta: dict | None = None) -> dict:
    meta = {"matrix_file": str(matrix.path.name), "python_host": sys.version.split()[0],
            **({"rules_files": [str(r) for r in matrix.rules]} if matrix.rules else {}), **(extra_meta or {})}
    write_matrix(results, reports_dir, meta, name=name)
    return reports.summary(results)

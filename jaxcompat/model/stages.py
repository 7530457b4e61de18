"""How a stage of a cell's pipeline (``run/cell.py``) ends the cell: the typed outcome a stage
returns instead of its value, folded into the cell's result by the pipeline alone."""

from __future__ import annotations

from dataclasses import dataclass, field

from jaxcompat.model.matrix import Cell


@dataclass(frozen=True)
class Ended:
    """The cell ended at a stage: its status and message, and its outcome; without one (""), the
    known-failure rules of the resolve stage explain it, judged by ``pins``."""

    status: str  # model/vocab.CellStatus
    message: str
    outcome: str = ""  # model/vocab.CellOutcome
    pins: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Resolved:
    """A cell's environment decided (``run/cell.resolved``): the cell completed, its interpreter and
    its lock. Resolved once and handed on: holding a candidate to a baseline and keying the
    baseline's run read the same lock."""

    cell: Cell
    python_exe: str
    lock: str

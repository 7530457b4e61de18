"""The nightly's records: what a refresh of the baseline did (``Refresh``). Made by
operations/latest.py, rendered by report/latest.py."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Refresh:
    """What ``refresh_baseline`` did: whether it wrote, and what it kept out of the baseline."""

    written: bool = False
    held: list[str] = field(default_factory=list)  # "case: before -> after": tonight's regressions, not blessed

    def __bool__(self) -> bool:
        return self.written

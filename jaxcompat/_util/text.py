"""Small text helpers shared by every renderer (terminal, Markdown, HTML, verdicts, diffs)."""

from __future__ import annotations

import re
from typing import NamedTuple


def quiet(message: str = "", **_print_options) -> None:
    """The default progress callback of an operation: say nothing (a command passes ``print``)."""


def short_case(case: str) -> str:
    """cases/test_inline_marker_int.py::test_nested_in_jit -> inline_marker_int::nested_in_jit"""
    module, _, name = str(case).partition("::")
    stem = module.rsplit("/", 1)[-1].removesuffix(".py").removeprefix("test_")
    return f"{stem}::{name.removeprefix('test_')}" if name else stem


def first_line(text: str | None, limit: int = 300) -> str:
    """The first non-empty line, stripped, cut at ``limit`` characters (marked with …)."""
    line = next((ln.strip() for ln in str(text or "").splitlines() if ln.strip()), "")
    return (line[:limit] + "…") if len(line) > limit else line


def last_line(text: str | None) -> str:
    """The last non-empty line (where resolvers and interpreters put their verdict)."""
    lines = [ln.strip() for ln in str(text or "").splitlines() if ln.strip()]
    return lines[-1] if lines else ""


# One frame of a Python traceback: ``  File "/…/site-packages/equinox/_ad.py", line 418, in __call__``
# (traceback.format_list / format_exception; pytest's plain tracebacks too).
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>\S+))?', re.M)
# pytest's own (short and long styles, collection errors, "ImportError while loading conftest"):
# ``../venv/lib/python3.11/site-packages/equinox/internal/_noinline.py:185: in _MetaBatchTransform``
_PYTEST_FRAME = re.compile(r"^(?P<path>[^\s:][^:\n]*\.py):(?P<line>\d+): in (?P<func>\S+)", re.M)
_SITE = re.compile(r"[/\\]site-packages[/\\](?P<pkg>\w+)[/\\]")


class Frame(NamedTuple):
    path: str
    line: int
    func: str

    @property
    def package(self) -> str:
        """The installed distribution's import name the frame is in (``equinox``), or ""."""
        m = _SITE.search(self.path)
        return m.group("pkg") if m else ""

    @property
    def in_package(self) -> str:
        """The path below site-packages (``equinox/_ad.py``), with forward slashes, or ""."""
        m = _SITE.search(self.path)
        return self.path[m.end() - len(m.group("pkg")) - 1:].replace("\\", "/") if m else ""


def frames(traceback: str | None) -> list[Frame]:
    """The frames of a traceback, outermost first (the one parser of frames: signatures, the
    import probe's culprit, the API history's explanations all read them here)."""
    found = sorted([*_FRAME.finditer(traceback or ""), *_PYTEST_FRAME.finditer(traceback or "")],
                   key=lambda m: m.start())
    return [Frame(m.group("path"), int(m.group("line")), m.group("func") or "") for m in found]

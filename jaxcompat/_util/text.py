"""Small text helpers shared by every renderer (terminal, Markdown, HTML, verdicts, diffs)."""

from __future__ import annotations


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

"""A file the running Python cannot parse, for scan: which Python it needs, said as the fix.

A file scan cannot parse is never scanned, so it is bad input (exit 2), named with the Python its
syntax needs where the syntax says so (``def f[T](x: T)``: 3.12; ``except*``: 3.11; ``match``:
3.10; ``print "x"``: Python 2, which scan does not read)."""

from __future__ import annotations

import re
import sys

_NEWER = [  # (Python, what, a line that needs it)
    ((3, 14), "a t-string", re.compile(r"""(?<![\w'"])t(?:r|R)?['"]""")),
    ((3, 14), "except without brackets", re.compile(r"^\s*except\s+[\w.]+\s*,\s*[\w.]+(?:\s*,\s*[\w.]+)*\s*:", re.M)),
    ((3, 12), "a type parameter list", re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+\w+\s*\[", re.M)),
    ((3, 12), "a type statement", re.compile(r"^\s*type\s+\w+\s*(?:\[[^\]]*\])?\s*=", re.M)),
    ((3, 11), "except*", re.compile(r"^\s*except\s*\*", re.M)),
    ((3, 10), "a match statement", re.compile(r"^\s*match\s+[^\n=]+:\s*(?:#.*)?$", re.M)),
]
_PY2 = re.compile(r"^\s*(?:print\s+[^\s(=][^\n]*|exec\s+['\"]|except\s+\w+\s*,\s*\w+\s*:)\s*$", re.M)


def needs(source: str, error: SyntaxError, host: tuple[int, int] = sys.version_info[:2]) -> str:
    """Why ``source`` does not parse here, and what to do about it."""
    here = f"Python {host[0]}.{host[1]}"
    where = f"line {error.lineno}: {error.msg}"
    line = (source.splitlines() or [""])[min(max((error.lineno or 1) - 1, 0), max(len(source.splitlines()) - 1, 0))]
    for version, what, pattern in _NEWER:
        if version > host and (pattern.search(line) or pattern.search(source)):
            return (f"cannot parse with {here} ({where}): it uses {what}, which needs Python "
                    f"{version[0]}.{version[1]} or later: run scan with that Python")
    if _PY2.search(source):
        return f"cannot parse with {here} ({where}): it is Python 2 code, which scan does not read"
    if "f-string" in (error.msg or "") and host < (3, 12):
        return (f"cannot parse with {here} ({where}): f-strings nested this way need Python 3.12 or later: "
                "run scan with that Python")
    return f"cannot parse with {here} ({where}): fix the syntax, or run scan with the Python the code is written for"

"""``scan --fix`` without damage: a file read as it is and rewritten only where a fix says.

A file is read as bytes and decoded with the encoding Python itself would use (a PEP 263 coding
cookie, a UTF-8 BOM), its line endings untouched (CRLF stays CRLF). Lines are counted as ``ast``
counts them (``\\n``, ``\\r\\n``, ``\\r``; never a form feed, U+2028 or ``\\x1c``, where
``str.splitlines`` breaks), so a fix lands where the parser saw the code. A rewrite is kept only
when the spans it replaces hold exactly the text the fix was made from, the result parses, and
its tokens (``tokenize``) are the original's with only the intended ones changed; otherwise the
file is left as it was, and said so.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Union

from jaxcompat._util.atomic import write_bytes


@dataclass(frozen=True)
class Replace:
    """Replace a span of the source (lines 1-based, columns 0-based in UTF-8 bytes, as ``ast``
    gives them) that holds ``old`` by ``text``; ``old`` "" with an empty span inserts."""

    line: int
    col: int
    end_line: int
    end_col: int
    text: str
    old: str = ""


@dataclass(frozen=True)
class SplitImport:
    """Move one name of a ``from M import a, b`` line to a line of its own below it (``text``:
    that line, without its line break and indent); the names left keep their line."""

    node: ast.ImportFrom
    alias: ast.alias
    text: str


@dataclass(frozen=True)
class Several:
    """Edits made together or not at all (``jnp.array(x, dtype=…, copy=…)``: one insertion per argument)."""

    parts: tuple[Replace, ...]


Edit = Union[Replace, SplitImport, Several]  # the mechanical fixes scan knows; anything else is reported


# ---------------------------------------------------------------- reading a file as it is

_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Source:
    text: str  # decoded, line endings as in the file
    encoding: str  # as Python reads the file: its coding cookie, "utf-8-sig" for a BOM, else utf-8

    @classmethod
    def read(cls, path: Path) -> Source:
        """Raises OSError, or SyntaxError / UnicodeDecodeError / LookupError for a file that
        cannot be decoded as Python would decode it."""
        data = path.read_bytes()
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return cls(data.decode(encoding), encoding)

    def write(self, path: Path, text: str) -> None:
        write_bytes(path, text.encode(self.encoding))


def line_starts(text: str) -> list[int]:
    """The offset where each line begins, lines as ``ast`` counts them."""
    return [0] + [m.end() for m in _BREAK.finditer(text)]


def ast_lines(text: str) -> list[str]:
    """The lines of ``text`` with their line breaks, as ``ast`` counts them."""
    starts = line_starts(text)
    out = [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)], strict=True)]
    return out if out[-1] else out[:-1]


def line_break(line: str) -> str:
    """The line break ``line`` ends with ("\\n" when it has none)."""
    m = _BREAK.search(line)
    return m.group() if m else "\n"


def char_offset(text: str, starts: list[int], line: int, byte_col: int) -> int:
    """The offset in ``text`` of an ``ast`` position; ValueError when it is not one."""
    if not 0 < line <= len(starts):
        raise ValueError(f"line {line} is not in the file")
    start = starts[line - 1]
    end = starts[line] if line < len(starts) else len(text)
    head = text[start:end].encode("utf-8")[:byte_col]
    if len(head) != byte_col:
        raise ValueError(f"column {byte_col} is past the end of line {line}")
    return start + len(head.decode("utf-8"))  # strict: a column inside a character is no position


def segment(lines: list[str], node) -> str:
    """The text of ``node`` (as ``ast.get_source_segment``, from lines already split as ``ast``
    splits them: not the whole file again for each node)."""
    l0, l1 = node.lineno, node.end_lineno or node.lineno
    if not 0 < l0 <= l1 <= len(lines):
        return ""
    first = lines[l0 - 1].encode("utf-8")
    if l0 == l1:
        return first[node.col_offset:node.end_col_offset].decode("utf-8", "replace")
    last = lines[l1 - 1].encode("utf-8")[:node.end_col_offset]
    return "".join([first[node.col_offset:].decode("utf-8", "replace"), *lines[l0:l1 - 1],
                    last.decode("utf-8", "replace")])


# ---------------------------------------------------------------- applying edits


@dataclass
class Applied:
    text: str  # the new source (the old one when refused)
    done: list[bool]  # per edit given: made
    refused: str = ""  # why nothing was written, when a check failed


def apply(text: str, given: list[Edit]) -> Applied:
    """Make the edits that do not overlap (the rest wait for the next run), then check the result."""
    edits, where = _merge_splits(text, given)
    made = _apply(text, edits)
    return Applied(made.text, [made.done[i] for i in where], made.refused)


def _apply(text: str, edits: list[Edit]) -> Applied:
    starts = line_starts(text)
    try:
        spans = [_spans(text, starts, e) for e in edits]
    except ValueError as e:
        return Applied(text, [False] * len(edits), f"a fix does not match the file ({e})")
    done, taken = [False] * len(edits), []
    for i in sorted(range(len(edits)), key=lambda i: spans[i][0][:2]):
        parts = spans[i]
        fresh = [p for p in parts if p not in taken]
        if all(not _overlaps(p, q) for p in fresh for q in taken):
            taken += fresh
            done[i] = True
    taken.sort()
    new, pieces, last = [], [], 0
    for a, b, repl, _old in taken:
        new.append(text[last:a])
        pieces.append((sum(map(len, new)), repl))
        new.append(repl)
        last = b
    new.append(text[last:])
    out = "".join(new)
    why = check(text, out, [(a, b, old) for a, b, _r, old in taken], [(p, p + len(r), r) for p, r in pieces])
    if why:
        return Applied(text, [False] * len(edits), why)
    return Applied(out, done)


def _overlaps(p: tuple, q: tuple) -> bool:
    return p[0] < q[1] and q[0] < p[1] or p[0] == q[0] and (p[0] == p[1] or q[0] == q[1])


def _spans(text: str, starts: list[int], edit: Edit) -> list[tuple[int, int, str, str]]:
    """(start, end, new text, old text) of each part of ``edit``, checked against the file."""
    if isinstance(edit, Several):
        return [x for p in edit.parts for x in _spans(text, starts, p)]
    a = char_offset(text, starts, edit.line, edit.col)
    b = char_offset(text, starts, edit.end_line, edit.end_col)
    if text[a:b] != edit.old:
        raise ValueError(f"line {edit.line} holds {text[a:b]!r} where the fix expected {edit.old!r}")
    return [(a, b, edit.text, edit.old)]


def _merge_splits(text: str, edits: list[Edit]) -> tuple[list[Edit], list[int]]:
    """The names moved out of one ``from M import a, b, c`` become one rewrite of that statement
    (its line break and indent taken from the file); with, per edit given, the index of the edit
    that carries it."""
    out: list[Edit] = []
    where: list[int] = []
    groups: dict[int, list[SplitImport]] = {}
    first: dict[int, int] = {}
    for e in edits:
        if isinstance(e, SplitImport):
            groups.setdefault(id(e.node), []).append(e)
    for e in edits:
        if not isinstance(e, SplitImport):
            where.append(len(out))
            out.append(e)
        elif id(e.node) in first:
            where.append(first[id(e.node)])
        else:
            first[id(e.node)] = len(out)
            where.append(len(out))
            out.append(_merged(text, groups[id(e.node)]))
    return out, where


def _merged(text: str, group: list[SplitImport]) -> Replace:
    """One statement's moved names: on lines of their own below it where it starts its line, else
    after ``;`` on its line (``if x: from jax import a, b``: a line of its own would leave the ``if``)."""
    node = group[0].node
    moved = {a.alias.asname or a.alias.name for a in group}
    keep = [a for a in node.names if (a.asname or a.name) not in moved]
    lines = [f"from {node.module} import " + ", ".join(
        a.name + (f" as {a.asname}" if a.asname else "") for a in keep)] if keep else []
    split = ast_lines(text)
    indent = starts_line(split, node)
    sep = "; " if indent is None else line_break(split[node.lineno - 1]) + indent
    return Replace(node.lineno, node.col_offset, node.end_lineno or node.lineno, node.end_col_offset or 0,
                   sep.join([*lines, *(g.text for g in group)]), segment(split, node))


def starts_line(lines: list[str], node) -> str | None:
    """The indent of statement ``node`` when it starts its logical line (nothing but indent before
    it, not continuing the line above with a backslash); None when it follows ``;`` or a compound
    statement's ``:`` there, and a line of its own would move it out of that statement."""
    head = lines[node.lineno - 1].encode("utf-8")[:node.col_offset].decode("utf-8", "replace")
    if head.strip(" \t\x0c") or node.lineno > 1 and lines[node.lineno - 2].rstrip("\r\n").endswith("\\"):
        return None
    return head.rpartition("\x0c")[2]  # a form feed resets the indent


def insert_before(lines: list[str], node, text: str) -> Replace:
    """Insert the statement ``text`` just before statement ``node``, under the same statement and
    branch: a line of its own where ``node`` starts its line, else ``text; `` before it."""
    indent = starts_line(lines, node)
    where = (node.lineno, node.col_offset, node.lineno, node.col_offset)
    if indent is None:
        return Replace(*where, f"{text}; ")
    return Replace(*where, text + line_break(lines[node.lineno - 1]) + indent)


# ---------------------------------------------------------------- the check


_LAYOUT = {tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}


def check(old: str, new: str, old_spans: list[tuple[int, int, str]], new_spans: list[tuple[int, int, str]]) -> str:
    """"" when ``new`` parses and its tokens are ``old``'s with each old span's tokens replaced by
    the tokens of its new text; else why not."""
    try:
        ast.parse(new)
    except (SyntaxError, ValueError) as e:
        return f"the rewritten file would not parse ({getattr(e, 'msg', e)})"
    try:
        a_out, a_in = _split_tokens(_tokens(old), old_spans)
        b_out, b_in = _split_tokens(_tokens(new), new_spans)
        for (_, _, want), got in zip(old_spans, a_in, strict=True):
            if _fragment(want) != got:
                return "a fix's span does not hold the tokens it was made from"
        for (_, _, want), got in zip(new_spans, b_in, strict=True):
            if _fragment(want) != got:
                return "a fix's new text did not come out as its own tokens"
    except (tokenize.TokenError, SyntaxError, ValueError) as e:
        return f"the file cannot be tokenized around a fix ({e})"
    if a_out != b_out:
        return "the rewrite would change tokens outside the fixes"
    return ""


def _tokens(text: str) -> list[tuple[int, int, int, str]]:
    """(start, end offset, type, string) of every token of ``text``."""
    starts: list[int] = []
    buf = io.StringIO(text)
    pos = 0

    def readline() -> str:
        nonlocal pos
        line = buf.readline()
        starts.append(pos)
        pos += len(line)
        return line

    out = []
    for t in tokenize.generate_tokens(readline):
        (r0, c0), (r1, c1) = t.start, t.end
        out.append((starts[r0 - 1] + c0 if r0 <= len(starts) else pos,
                    starts[r1 - 1] + c1 if r1 <= len(starts) else pos, t.type, t.string))
    return out


def _split_tokens(tokens: list, spans: list[tuple[int, int, str]]):
    """The tokens outside every span (type, string), and each span's own tokens (layout left out)."""
    outside: list[tuple[int, str]] = []
    inside: list[list[tuple[int, str]]] = [[] for _ in spans]
    for a, b, typ, s in tokens:
        k = next((i for i, (x, y, _) in enumerate(spans) if a < y and x < b or (x <= a and b <= y and a < b)), None)
        if k is None:
            outside.append((typ, s))
        elif not (spans[k][0] <= a and b <= spans[k][1]):
            raise ValueError("a token straddles the edge of a fix")
        elif typ not in _LAYOUT:
            inside[k].append((typ, s))
    return outside, inside


def _fragment(text: str) -> list[tuple[int, str]]:
    """The tokens of a piece of code on its own (inside brackets: line breaks and indents are layout)."""
    toks = [(t.type, t.string) for t in tokenize.generate_tokens(io.StringIO("(" + text + ")").readline)
            if t.type not in _LAYOUT]
    return toks[1:-1]

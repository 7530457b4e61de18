"""The one writer of report files: ``emit(record, out_dir, formats)`` renders a record of
``report/outputs.py`` in each format asked (``report/formats/``; none asked: the record's
``DEFAULT``), passes every text through the scrubber once (the record's ``scrub``: its redaction
boundary, ``report/scrub.py``; none: credentials out of URLs), writes each file atomically and
returns the files written, in order, for the command to print. A format the record does not have is
left out; a format with nothing to say for it (no rule drafted) writes no file. After a run, no file of
any format the record has (every format in the registry that renders it), or that a record kind of its
``FAMILY`` has (the kinds one command writes under one stem: plain ``check`` and ``check --tests``), that
was not written this time remains from an earlier run: a ``--format`` subset, a format with nothing to
say or a run of the family's other kind removes the earlier file, so the folder never holds two answers."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from jaxcompat._util.atomic import write_bytes
from jaxcompat._util.redact import redact_text
from jaxcompat.report.formats import FORMATS
from jaxcompat.report.outputs import Output


def formats_of(kinds: Iterable[type]) -> list[str]:
    """The formats any of the record ``kinds`` has, in the registry's order (``--format``'s choices)."""
    kinds = tuple(kinds)
    return [name for name, fmt in FORMATS.items() if any(k in fmt.RENDER for k in kinds)]


def emit(record: Output, out_dir: Path, formats: Iterable[str] | None = None) -> list[Path]:
    """Write ``record`` under ``out_dir`` in ``formats``; the paths written."""
    scrub = record.scrub or redact_text
    written = []
    for name in record.DEFAULT if formats is None else formats:
        fmt = FORMATS[name]
        render = fmt.RENDER.get(type(record))
        body = None if render is None else render(record)
        if body is not None:
            written.append(write_file(Path(out_dir) / record.filename(name, fmt.suffix), body, scrub))
    for kind in record.FAMILY or (type(record),):  # an earlier run's file of a format (or kind) not written now
        for name in formats_of([kind]):
            stale = Path(out_dir) / kind(record.stem).filename(name, FORMATS[name].suffix)
            if stale not in written:
                stale.unlink(missing_ok=True)
    return written


def write_file(path: Path, body: str | bytes, scrub: Callable[[str], str] = redact_text) -> Path:
    """One report file of no record kind (a file the user named, a section spliced into a report),
    scrubbed and written atomically as ``emit`` writes each of its own."""
    write_bytes(path, body if isinstance(body, bytes) else scrub(body).encode("utf-8"))
    return path

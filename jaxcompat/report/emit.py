"""The one writer of report files: ``emit(record, out_dir, formats)`` renders a record of
``report/outputs.py`` in each format asked (``report/formats/``; none asked: the record's
``DEFAULT``), passes every text through the scrubber once (the record's ``scrub``: its redaction
boundary, ``report/scrub.py``; none: credentials out of URLs), writes each file atomically and
returns the files written, in order, for the command to print. A format the record does not have is
left out; a format with nothing to say for it (no rule drafted) writes no file."""

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
        if render is None:
            continue
        path = Path(out_dir) / record.filename(name, fmt.suffix)
        body = render(record)
        if body is None:
            if fmt.REMOVE_STALE:
                path.unlink(missing_ok=True)
            continue
        write_file(path, body, scrub)
        written.append(path)
    return written


def write_file(path: Path, body: str | bytes, scrub: Callable[[str], str] = redact_text) -> Path:
    """One report file of no record kind (a file the user named, a section spliced into a report),
    scrubbed and written atomically as ``emit`` writes each of its own."""
    write_bytes(path, body if isinstance(body, bytes) else scrub(body).encode("utf-8"))
    return path

"""Reading a JSON file a person gave or a run wrote: an error names the file, what is wrong and
the fix, in the caller's own error type (never a traceback)."""

from __future__ import annotations

import json
from pathlib import Path


def read_json(path: Path, error: type[Exception], *, unreadable: str, damaged: str) -> object:
    """The parsed file; ``error(message)`` when it cannot be read (``unreadable``: what to do) or is
    not JSON (``damaged``: what to do)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise error(f"{path}: cannot read it ({e.strerror}); {unreadable}") from None
    except ValueError as e:
        raise error(f"{path}: not JSON ({e}); {damaged}") from None

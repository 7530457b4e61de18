"""Locate the uv executable (the environment and installer backend)."""

from __future__ import annotations

import functools
import shutil


@functools.lru_cache(maxsize=None)
def uv_bin() -> str:
    try:
        from uv import find_uv_bin  # the `uv` package from PyPI ships its binary

        return find_uv_bin()
    except Exception:  # noqa: BLE001 - fall back to PATH
        found = shutil.which("uv")
        if found:
            return found
    raise RuntimeError("uv not found: install it with `python3 -m pip install uv`")

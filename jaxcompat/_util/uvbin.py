"""Locate the tools we run: uv (the environment and installer backend) and git (sources as of a
commit). One this machine lacks is the user's setup, not a bug of ours: ``ToolMissing``, whose
message names the fix (the command line makes it exit 2)."""

from __future__ import annotations

import functools
import shutil


class ToolMissing(RuntimeError):
    """A tool jax-compat runs is not on this machine (the message: which, and how to install it)."""


@functools.lru_cache(maxsize=None)
def uv_bin() -> str:
    try:
        from uv import find_uv_bin  # the `uv` package from PyPI ships its binary

        return find_uv_bin()
    except Exception:  # noqa: BLE001 - fall back to PATH
        found = shutil.which("uv")
        if found:
            return found
    raise ToolMissing("uv not found: install it with `python3 -m pip install uv` (or put uv on PATH)")


def git_bin() -> str:
    """git on PATH (looked up each time: a test or a runner may change PATH)."""
    found = shutil.which("git")
    if found is None:
        raise ToolMissing("git not found: install git (e.g. `apt-get install git` or `brew install git`) and put "
                          "it on PATH")
    return found

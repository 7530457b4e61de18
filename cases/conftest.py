"""Fixtures shared by the cases: ``child``, a fresh Python interpreter for one script.

A case needs one where the cell's pytest process cannot show the failure: the harness has
already imported jax and the ecosystem in it, initialised the backend, and its exit is not
the case's to watch. Standard library and pytest only: nothing heavy is imported here.
"""

from __future__ import annotations

import builtins
import os
import signal
import subprocess
import sys
from dataclasses import dataclass

import pytest


@dataclass(frozen=True)
class ChildRun:
    """What one child interpreter did."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def killed_by(self) -> str | None:
        """The name of the signal that killed the child (``"SIGSEGV"``), or None."""
        return signal.Signals(-self.returncode).name if self.returncode < 0 else None

    @property
    def last_line(self) -> str:
        """The last non-blank line on stderr: where Python prints ``Type: message``."""
        lines = [ln for ln in self.stderr.strip().splitlines() if ln.strip()]
        return lines[-1] if lines else f"exit status {self.returncode}"

    @property
    def exception(self) -> tuple[str, str]:
        """(type name, message) of the exception the child printed last."""
        name, _, message = self.last_line.partition(": ")
        return name, message

    def raise_here(self, what: str) -> None:
        """Raise the child's exception in this process: its own built-in type and message, so
        a rule's error and regex see what the user sees (the child's stderr is the cause);
        any other exception type as an ImportError that quotes the child's last line."""
        name, message = self.exception
        exc_type = getattr(builtins, name, None)
        if isinstance(exc_type, type) and issubclass(exc_type, BaseException):
            raise exc_type(message) from RuntimeError(self.stderr[-4000:])
        raise ImportError(f"{what} failed in a child interpreter: {self.last_line}\n"
                          f"{self.stderr[-4000:]}")


def run_child(code: str, *args: str, env: dict[str, str] | None = None,
              timeout: float = 120.0) -> ChildRun:
    """Run ``python -c code *args`` with this interpreter; ``env`` is added to os.environ.
    A child that outlives ``timeout`` seconds raises subprocess.TimeoutExpired."""
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **env} if env else None)
    return ChildRun(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def child():
    """``child(code, *args, env=None, timeout=120.0) -> ChildRun`` (see run_child)."""
    return run_child

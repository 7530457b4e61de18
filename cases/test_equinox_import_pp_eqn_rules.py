"""equinox-import-pp-eqn-rules: ``import equinox`` fails on jax >= 0.4.34 for equinox <= 0.11.4.

Symptom
-------
``import equinox`` itself raises, so nothing that depends on equinox (diffrax,
optimistix, lineax) can be imported either::

    File ".../equinox/internal/_noinline.py", line 379, in <module>
      jax.core.pp_eqn_rules[noinline_p] = _noinline_pretty_print
    ...
    AttributeError: jax.core.pp_eqn_rules was removed in JAX v0.4.34.

Cause
-----
jax 0.4.34 removed ``jax.core.pp_eqn_rules`` (the public alias of the jaxpr
pretty-printing rule table; accessing it now goes through jax's deprecation
``__getattr__``, which raises). equinox registers a pretty-printer for its
``noinline_p`` primitive at import time, at module level of
``equinox/internal/_noinline.py``. equinox 0.11.5 no longer touches
``jax.core.pp_eqn_rules``.

Affected / fixed (observed, CPU, Python 3.11)
---------------------------------------------
- affected: equinox 0.11.4 on jax 0.4.34; equinox 0.10.11 on jax 0.4.36 (the same
  line 379 is present in equinox 0.10.6 too, so every equinox < 0.11.5 that has
  ``_noinline`` is affected).
- clean: equinox 0.11.4 on jax 0.4.33 (the attribute still exists there);
  equinox 0.11.5 on jax 0.4.34.
- fix: upgrade equinox to >= 0.11.5 (released 2024-08-18, before jax 0.4.34). The
  harness's own import probe reports affected cells as a cell-level
  ``import-error``; the test below documents the same failure from a child
  interpreter, and passes wherever equinox imports.

Upstream
--------
- https://github.com/patrick-kidger/equinox/issues/869 (reported right after
  jax 0.4.34, 2024-10-06; answer: upgrade equinox)
- https://github.com/patrick-kidger/equinox/issues/1004 (same error, later report)

Differences from UPSTREAM.md
----------------------------
- None in the boundaries (equinox <= 0.11.4 x jax >= 0.4.34; fixed 0.11.5). Note that
  "<= 0.11.4" includes the whole 0.10.x series (0.10.6, 0.10.11 checked).
"""

import builtins
import subprocess
import sys

import pytest


def _child_import(module: str, timeout: float = 120.0) -> None:
    """Import ``module`` in a fresh interpreter; re-raise its exception here if it fails."""
    proc = subprocess.run([sys.executable, "-c", f"import {module}"],
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode == 0:
        return
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    last = lines[-1] if lines else f"exit status {proc.returncode}"
    if last.startswith("ModuleNotFoundError") and f"'{module}'" in last:
        pytest.skip(f"{module} is not installed")
    name, _, message = last.partition(": ")
    exc_type = getattr(builtins, name, None)
    if isinstance(exc_type, type) and issubclass(exc_type, BaseException):
        # The child's own exception type and message, so the rule's regex sees what
        # the user sees; the full traceback is kept as the cause.
        raise exc_type(message) from RuntimeError(proc.stderr[-4000:])
    raise ImportError(f"import {module} failed in a child interpreter: {last}\n"
                      f"{proc.stderr[-4000:]}")


def test_import_equinox():
    _child_import("equinox")


def test_control_import_jax():
    _child_import("jax")

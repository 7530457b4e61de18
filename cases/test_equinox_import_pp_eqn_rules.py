"""equinox-import-pp-eqn-rules: ``import equinox`` fails on jax >= 0.4.34 for equinox <= 0.11.4.

Rule in matrix.toml: equinox-import-pp-eqn-rules (stage "import": the harness's own import
probe reports an affected cell as an expected import error; the test below shows the same
failure from a child interpreter and passes wherever equinox imports).

Symptom: ``import equinox`` raises, so diffrax, optimistix and lineax cannot be imported
either::

    File ".../equinox/internal/_noinline.py", line 379, in <module>
      jax.core.pp_eqn_rules[noinline_p] = _noinline_pretty_print
    AttributeError: jax.core.pp_eqn_rules was removed in JAX v0.4.34.

Cause: jax 0.4.34 removed ``jax.core.pp_eqn_rules``, where equinox registers, at import
time, a pretty-printer for its ``noinline_p`` primitive.

Fix: upgrade equinox to >= 0.11.5.
"""

import pytest


def _import_in_child(child, module: str) -> None:
    """Import ``module`` in a fresh interpreter; raise its exception here if it fails."""
    run = child(f"import {module}")
    if run.returncode == 0:
        return
    if run.last_line.startswith("ModuleNotFoundError") and f"'{module}'" in run.last_line:
        pytest.skip(f"{module} is not installed")
    run.raise_here(f"import {module}")


def test_import_equinox(child):
    _import_in_child(child, "equinox")


def test_control_import_jax(child):
    _import_in_child(child, "jax")

"""optimistix-import-initialises-backend: ``import optimistix`` 0.0.11 (and so ``import diffrax``) starts the JAX backend.

Symptom
-------
After ``import optimistix`` (or ``import diffrax``, which imports it) with optimistix
0.0.11, configuration that must happen before the backend exists fails or is silently
ignored: ``jax.config.update("jax_num_cpu_devices", 2)`` raises::

    RuntimeError: jax_num_cpu_devices config should be updated before backends are initialized i.e. before any JAX operation is executed. You should initialize this config immediately after `import jax`.

``XLA_FLAGS`` / ``jax_platforms`` set afterwards are ignored, ``jax.distributed.initialize``
refuses to run, and on a GPU machine the import alone preallocates GPU memory (diffrax#722).
Importing jax, equinox, lineax or chex does not do this.

Cause
-----
optimistix 0.0.11 added ``feasible_step_length(..., offset=jnp.array(0.0))``: an array
default argument is evaluated when the module is imported, which creates a device array.
optimistix 0.1.0 defaults to ``None`` and builds the array inside the call (PR #186).

The harness has already imported these packages in this process, so each check runs in
a fresh child interpreter. Fix: upgrade optimistix to >= 0.1.0.
"""

import subprocess
import sys

import pytest

_PROBE = """
import jax
{imports}
jax.config.update("jax_num_cpu_devices", 2)
print(jax.device_count())
"""


def _run(imports):
    if not hasattr(__import__("jax").config, "jax_num_cpu_devices"):
        pytest.skip("this jax has no jax_num_cpu_devices config")
    proc = subprocess.run([sys.executable, "-c", _PROBE.format(imports=imports)],
                          capture_output=True, text=True, timeout=240)
    if proc.returncode != 0:
        last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
        if last.startswith("RuntimeError:"):
            raise RuntimeError(last[len("RuntimeError:"):].strip() + f" (after {imports!r})")
        raise AssertionError(proc.stderr[-2000:])
    assert proc.stdout.strip().splitlines()[-1] == "2"


def test_import_optimistix_leaves_backend_uninitialised():
    pytest.importorskip("optimistix")
    _run("import optimistix")


def test_import_diffrax_leaves_backend_uninitialised():
    pytest.importorskip("diffrax")
    _run("import diffrax")


def test_control_import_equinox_lineax():
    pytest.importorskip("lineax")
    _run("import equinox, lineax")

"""optimistix-import-initialises-backend: ``import optimistix`` 0.0.11 (and so ``import diffrax``) starts the JAX backend.

Rule in matrix.toml: optimistix-import-initialises-backend.

Symptom: after ``import optimistix`` (or ``import diffrax``, which imports it) with optimistix
0.0.11, configuration that must precede the backend fails or is silently ignored:
``jax.config.update("jax_num_cpu_devices", 2)`` raises::

    RuntimeError: jax_num_cpu_devices config should be updated before backends are initialized i.e. before any JAX operation is executed. You should initialize this config immediately after `import jax`.

``XLA_FLAGS`` / ``jax_platforms`` set afterwards are ignored, ``jax.distributed.initialize``
refuses to run, and on a GPU the import alone preallocates its memory. Importing jax,
equinox, lineax or chex does not do this.

Cause: optimistix 0.0.11's ``feasible_step_length(..., offset=jnp.array(0.0))``: an array
default argument, evaluated at import, creates a device array. The harness has already
imported these packages in this process, so each check runs in a child interpreter.

Fix: upgrade optimistix to >= 0.1.0.

Any backend: the child counts CPU devices (``jax.devices("cpu")``, not the default backend's
``jax.device_count()``: one GPU on the 2026-11-24 H100 run) and runs with JAX_PLATFORMS=cpu, so
it neither shares the parent's GPU nor depends on one: the bug is the import initialising
whatever backend there is, which the CPU shows as well as any.
"""

import pytest

_PROBE = """
import jax
{imports}
jax.config.update("jax_num_cpu_devices", 2)
print(len(jax.devices("cpu")))
"""


def _run(child, imports):
    if not hasattr(__import__("jax").config, "jax_num_cpu_devices"):
        pytest.skip("this jax has no jax_num_cpu_devices config")
    run = child(_PROBE.format(imports=imports), env={"JAX_PLATFORMS": "cpu"}, timeout=240)
    if run.returncode != 0:
        name, message = run.exception
        if name == "RuntimeError":
            raise RuntimeError(message.strip() + f" (after {imports!r})")
        raise AssertionError(run.stderr[-2000:])
    devices = run.stdout.strip().splitlines()[-1]
    # jax 0.5.0-0.5.2 ignore a late update silently (0.5.3 and later raise the RuntimeError above)
    assert devices == "2", f"jax_num_cpu_devices=2 was ignored after {imports!r}: {devices} CPU device(s)"


def test_import_optimistix_leaves_backend_uninitialised(child):
    pytest.importorskip("optimistix")
    _run(child, "import optimistix")


def test_import_diffrax_leaves_backend_uninitialised(child):
    pytest.importorskip("diffrax")
    _run(child, "import diffrax")


def test_control_import_equinox_lineax(child):
    pytest.importorskip("lineax")
    _run(child, "import equinox, lineax")

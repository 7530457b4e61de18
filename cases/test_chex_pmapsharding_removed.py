"""chex-pmapsharding-removed: chex < 0.1.92's device/sharding asserts fail on jax >= 0.10.0.

Rule in matrix.toml: chex-pmapsharding-removed.

Symptom: with chex 0.1.91 on jax 0.10.0 and later, every tree assertion that inspects where a
``jax.Array`` lives raises instead of checking::

    chex.assert_tree_is_on_host({"a": jnp.zeros(2)})
    AttributeError: module 'jax.sharding' has no attribute 'PmapSharding'

(likewise ``assert_tree_is_on_device`` and ``assert_tree_is_sharded``). ``import chex``,
``assert_shape``, NumPy leaves and ``jax.pmap`` / ``chex.fake_pmap`` are unaffected.

Cause: chex's ``_check_sharding`` does ``isinstance(x.sharding, jax.sharding.PmapSharding)``;
jax 0.8.1 deprecated ``PmapSharding`` and jax 0.10.0, which removed the C++ pmap, deleted it.
chex 0.1.92 reads ``jax.typeof(x).sharding`` instead.

Fix: upgrade chex to >= 0.1.92.

Any backend: the arrays are put on a CPU device explicitly (``jax.devices("cpu")``), so the asserts
hold wherever jax has a CPU backend; on a GPU, ``jnp.zeros`` lives on cuda:0 and is rightly neither
on host nor on a CPU (the 2026-11-24 H100 run, before this was explicit).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest


def _on_cpu(x):
    """``x`` on the first CPU device, whatever the default backend is."""
    try:
        cpu = jax.devices("cpu")[0]
    except RuntimeError as e:  # JAX_PLATFORMS leaves the CPU backend out
        pytest.skip(f"no CPU backend in this process: {e}")
    return jax.device_put(x, cpu)


def test_assert_tree_is_on_host_jax_array():
    chex = pytest.importorskip("chex")
    # A CPU jax.Array counts as "on host" (allow_cpu_device=True is the default).
    chex.assert_tree_is_on_host({"a": _on_cpu(jnp.zeros(2))})


def test_assert_tree_is_on_device_cpu():
    chex = pytest.importorskip("chex")
    chex.assert_tree_is_on_device({"a": _on_cpu(jnp.zeros(2))}, platform="cpu")


def test_control_assert_tree_is_on_host_numpy():
    chex = pytest.importorskip("chex")
    # NumPy leaves never reach the sharding check.
    chex.assert_tree_is_on_host({"a": np.zeros(2)})
    chex.assert_shape(jnp.zeros(2), (2,))

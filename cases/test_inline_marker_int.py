"""inline-marker-int: nested ``eqx.filter_jit(inline=True)`` crashes on equinox 0.12.0.

Rule in matrix.toml: inline-marker-int.

Symptom: calling a function decorated with ``eqx.filter_jit(inline=True)`` from inside another
trace (another ``filter_jit``, ``jax.jit``, ``jax.eval_shape``, a ``lax.scan`` body,
``jax.make_jaxpr``) fails while tracing with::

    AttributeError: 'int' object has no attribute 'block_until_ready'

A top-level call works, and so does nesting without ``inline=True`` (or under ``jax.vmap`` /
``jax.grad`` alone, where the marker is a tracer).

Cause: equinox 0.12.0 made the jitted wrapper return a marker ``jnp.array(0)`` next to the
outputs and call ``marker.block_until_ready()`` unless the marker is a tracer. With
``inline=True`` (forwarded to ``jax.jit``) the jit is inlined into the outer trace and the
constant marker comes back as a plain Python ``int``.

Fix: upgrade equinox to >= 0.12.1 (it also checks ``isinstance(marker, jax.Array)``).
"""

import pytest


def _inline_filter_jit(fn):
    import equinox as eqx

    try:
        return eqx.filter_jit(fn, inline=True)
    except TypeError as e:  # pragma: no cover - not seen on any tested equinox
        pytest.skip(f"this equinox's filter_jit does not accept inline=True: {e}")


def _inner():
    def g(x):
        return x * 2.0

    return _inline_filter_jit(g)


def test_control_top_level_call():
    import jax.numpy as jnp

    g = _inner()
    out = g(jnp.arange(3.0))
    assert out.tolist() == [0.0, 2.0, 4.0]


def test_control_nested_without_inline():
    import equinox as eqx
    import jax.numpy as jnp

    g = eqx.filter_jit(lambda x: x * 2.0)
    out = eqx.filter_jit(lambda x: g(x) + 1.0)(jnp.arange(3.0))
    assert out.tolist() == [1.0, 3.0, 5.0]


def test_nested_in_filter_jit():
    import equinox as eqx
    import jax.numpy as jnp

    g = _inner()
    out = eqx.filter_jit(lambda x: g(x) + 1.0)(jnp.arange(3.0))
    assert out.tolist() == [1.0, 3.0, 5.0]


def test_nested_in_jax_jit():
    import jax
    import jax.numpy as jnp

    g = _inner()
    out = jax.jit(lambda x: g(x) + 1.0)(jnp.arange(3.0))
    assert out.tolist() == [1.0, 3.0, 5.0]


def test_nested_in_eval_shape():
    import jax
    import jax.numpy as jnp

    g = _inner()
    out = jax.eval_shape(g, jnp.arange(3.0))
    assert out.shape == (3,)
    assert out.dtype == jnp.arange(3.0).dtype

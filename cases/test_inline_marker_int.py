"""inline-marker-int: nested ``eqx.filter_jit(inline=True)`` crashes on equinox 0.12.0.

Symptom
-------
Calling a function decorated with ``eqx.filter_jit(inline=True)`` from inside another
trace (another ``filter_jit``, ``jax.jit``, ``jax.eval_shape``, a ``lax.scan`` body,
``jax.make_jaxpr``) fails while tracing with::

    AttributeError: 'int' object has no attribute 'block_until_ready'

Calling the same function at top level works, and so does nesting it without
``inline=True``. (Under ``jax.vmap`` / ``jax.grad`` alone, without an outer jit, it
also works: the marker is then a tracer.)

Cause
-----
equinox 0.12.0 (PR #983, "filter_jit should now be faster") made the jitted wrapper
return a marker ``jnp.array(0)`` next to the outputs and call
``marker.block_until_ready()`` unless the marker is a tracer. With ``inline=True``
(passed through to ``jax.jit``) the jit is inlined into the outer trace, and the
constant marker comes back as a plain Python ``int``, which has no
``block_until_ready``. equinox 0.12.1 also checks ``isinstance(marker, jax.Array)``;
equinox 0.11.8-0.11.12 guard the block with ``currently_jitting()``; equinox <= 0.11.7
has no marker.

Affected / fixed (observed, CPU)
--------------------------------
- affected: equinox == 0.12.0 (seen on jax 0.4.38 and 0.6.0; on jax 0.6.1 and 0.6.2
  equinox 0.12.0 cannot even be imported: ``ModuleNotFoundError: No module named
  'jaxlib.xla_extension'``, a different failure that fails every test here).
- clean: equinox 0.10.6 (jax 0.4.13), 0.11.7/0.11.8 (jax 0.4.33), 0.11.12 and 0.12.1
  (jax 0.4.38), 0.13.2 (jax 0.7.2).
- fix: upgrade to equinox >= 0.12.1 (released the same day). Workaround on 0.12.0:
  drop ``inline=True`` from the inner ``filter_jit``.

Upstream
--------
- issue: https://github.com/patrick-kidger/equinox/issues/988
- introduced by: https://github.com/patrick-kidger/equinox/pull/983
  (commit https://github.com/patrick-kidger/equinox/commit/dcb6340)
- fixed by: https://github.com/patrick-kidger/equinox/commit/fcfaa0b (equinox 0.12.1)

Differences from UPSTREAM.md
----------------------------
- ``inline=`` is not an equinox keyword of its own: ``filter_jit`` forwards unknown
  keyword arguments to ``jax.jit`` (``**jitkwargs``), and that works on every equinox
  tested, back to 0.10.6, so nothing here needs skipping on old equinox. A skip is
  kept only for a ``filter_jit`` that would reject the keyword.
- equinox 0.12.0 already fails to import on jax 0.6.1 (UPSTREAM.md: on jax >= 0.6.2);
  on jax 0.6.0 it imports and reproduces.
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

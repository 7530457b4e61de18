"""closure-convert-sharding: equinox >= 0.11.7 closure conversion crashes on jax 0.4.13.

Rule in matrix.toml: closure-convert-sharding.

Symptom: with jax/jaxlib 0.4.13 and equinox 0.11.7-0.11.10, anything that goes through
``eqx.filter_closure_convert`` -- ``equinox.internal.while_loop(kind="checkpointed")``, and so
every ``diffrax.diffeqsolve`` with its default adjoint -- fails before doing any work::

    AttributeError: 'ShapeDtypeStruct' object has no attribute 'sharding'

raised from ``_strip_weak_dtype`` in ``equinox/_ad.py``. equinox 0.11.6 works.

Cause: ``_strip_weak_dtype`` (the weak-type-closure fix, equinox 0.11.7) rebuilds each
``jax.eval_shape`` struct with ``sharding=x.sharding``. jax 0.4.13's ``ShapeDtypeStruct``
assigns its ``sharding`` slot only when one is given, and ``eval_shape`` gives none, so reading
it raises; from jax 0.4.14 it is always set (None). The tests use only equinox: diffrax 0.5.0
fails on jax 0.4.18-0.4.20 for another reason (``jnp.astype``).

Fix: upgrade jax to >= 0.4.18, or pin ``equinox<=0.11.6`` on jax 0.4.13.
"""

import jax
import jax.numpy as jnp
import numpy as np


def _body(carry):
    step, value = carry
    return step + 1, value * 1.5 + 1.0


def _cond(carry):
    step, _ = carry
    return step < 5


def _expected_loop_value():
    value = 2.0
    for _ in range(5):
        value = value * 1.5 + 1.0
    return value


# --------------------------------------------------------------------------------------
# Variant tests: FAIL on jax 0.4.13 + equinox 0.11.7–0.11.10 with
# AttributeError: 'ShapeDtypeStruct' object has no attribute 'sharding'
# --------------------------------------------------------------------------------------


def test_filter_closure_convert_call():
    """Minimal case: closure-convert a function that closes over an array, then call it."""
    import equinox as eqx

    scale = jnp.array(3.0)

    def f(y):
        return scale * y + 1.0

    x = jnp.array([1.0, 2.0])
    converted = eqx.filter_closure_convert(f, x)
    out = converted(x)
    np.testing.assert_allclose(np.asarray(out), [4.0, 7.0])


def test_checkpointed_while_loop():
    """Realistic case: the checkpointed while loop used by diffrax's default adjoint."""
    import equinox.internal as eqxi

    init = (jnp.array(0), jnp.array(2.0))
    step, value = eqxi.while_loop(_cond, _body, init, max_steps=16, kind="checkpointed")
    assert int(step) == 5
    np.testing.assert_allclose(float(value), _expected_loop_value(), rtol=1e-6)


# --------------------------------------------------------------------------------------
# Controls: pass on every version.
# --------------------------------------------------------------------------------------


def test_control_lax_while_loop():
    """Same loop via kind="lax" (no closure conversion): the loop machinery itself works."""
    import equinox.internal as eqxi

    init = (jnp.array(0), jnp.array(2.0))
    step, value = eqxi.while_loop(_cond, _body, init, max_steps=16, kind="lax")
    assert int(step) == 5
    np.testing.assert_allclose(float(value), _expected_loop_value(), rtol=1e-6)


def test_control_eval_shape_struct():
    """Rebuilding eval_shape's structs from shape/dtype only, without `.sharding`, works
    everywhere; equinox <=0.11.6 never read `.sharding` at all."""
    out = jax.eval_shape(lambda: jnp.zeros((2, 3), jnp.float32))
    rebuilt = jax.ShapeDtypeStruct(out.shape, out.dtype)
    assert rebuilt.shape == (2, 3)
    assert rebuilt.dtype == jnp.float32

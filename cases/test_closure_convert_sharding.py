"""equinox >=0.11.7 closure conversion crashes on jax 0.4.13 (`ShapeDtypeStruct.sharding`).

Symptom
-------
With jax==0.4.13 / jaxlib==0.4.13 and equinox 0.11.7 (through 0.11.10), anything
that goes through ``eqx.filter_closure_convert`` fails before doing any work::

    AttributeError: 'ShapeDtypeStruct' object has no attribute 'sharding'

raised from ``equinox/_ad.py`` in ``_strip_weak_dtype``'s lambda. This hits
``eqx.filter_closure_convert(f, x)`` directly, ``equinox.internal.while_loop(...,
kind="checkpointed")`` (which closure-converts its ``cond_fun``/``body_fun``), and
``diffrax.diffeqsolve`` (its default adjoint uses the checkpointed while loop; seen
with diffrax 0.4.1, the newest diffrax that installs on jax 0.4.13). The same code on
the same jax with equinox 0.11.6 works.

The tests here use only equinox. A diffrax test was left out because diffrax 0.5.0
also fails on jax 0.4.18–0.4.20 for a different reason (it calls ``jnp.astype``,
which first appears in jax 0.4.21), so it would fail where this bug does not apply.

Cause
-----
equinox commit 8f327d9 ("Hopefully compatibility with JAX 0.4.32", first released in
equinox v0.11.7) added ``_strip_weak_dtype`` to drop the new ``weak_type`` field of
``jax.ShapeDtypeStruct`` (see https://github.com/patrick-kidger/equinox/issues/854).
It rebuilds each struct as
``jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=x.sharding)`` and runs this on
the output of ``jax.eval_shape``, both in ``filter_closure_convert`` and again every
time the converted function is called (``_check_closure_convert_input``).

In jax 0.4.13, ``ShapeDtypeStruct`` has a ``sharding`` slot, but ``__init__`` only
assigns it ``if sharding is not None``. ``jax.eval_shape`` builds its structs
without a sharding, so the slot is never set and reading ``x.sharding`` raises
AttributeError. From jax 0.4.14 on, ``__init__`` always does
``self.sharding = sharding``, so ``x.sharding`` is ``None`` and nothing breaks.
(Checked in the jax 0.4.14, 0.4.16, 0.4.18, 0.4.19, 0.4.20, 0.4.21 and 0.4.23
sources.) jaxlib has no wheels for 0.4.14–0.4.17, so in practice jax 0.4.13 is the
only installable release that both lacks this and is allowed by equinox's
``jax>=0.4.13`` floor.

Affected / fixed versions (as observed)
---------------------------------------
* Affected: jax ==0.4.13 with equinox 0.11.7, 0.11.8, 0.11.9, 0.11.10. All four
  declare ``jax>=0.4.13,!=0.4.27``, so a resolver will pick them with jax 0.4.13.
* Not affected: equinox <=0.11.6 (it has no ``_strip_weak_dtype``); any equinox
  with jax >=0.4.18 (tested on 0.4.18, 0.4.31, 0.4.33, 0.4.38, 0.7.2).
* "Fixed" in equinox 0.11.11: the code is unchanged upstream (still present in
  0.13.x), but 0.11.11 raised the requirement to ``jax>=0.4.38`` (commit 9780faf,
  "Upgrade jax and fix deprecation warnings"), so the broken combination can no
  longer be installed.

Upstream: no equinox or jax issue reporting this was found. Related:
https://github.com/patrick-kidger/equinox/issues/854 (the weak_type change whose fix
introduced it) and equinox commits 8f327d9 (introduced) and 9780faf (jax floor
raised to 0.4.38).

Workaround: upgrade jax to >=0.4.18 (the first release after 0.4.13 with jaxlib
wheels), or pin ``equinox<=0.11.6`` while on jax 0.4.13.
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

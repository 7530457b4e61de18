"""get-bind-params-092: equinox's jaxpr finalisation fails on jax >= 0.9.2 (equinox < 0.13.7).

Rule in matrix.toml: get-bind-params-092.

Symptom: ``equinox.internal.finalise_make_jaxpr`` / ``finalise_jaxpr`` / ``finalise_fn`` /
``finalise_eval_jaxpr`` (used by downstream exporters, e.g. stablehlo-coreml) fail on the first
equation of any non-empty jaxpr::

    ValueError: not enough values to unpack (expected 2, got 1)

(``got 0`` for an equation without params, ``too many values to unpack`` for one with more
than two). Everyday equinox (filter_jit, vmap, while loops, error_if) is unaffected.

Cause: jax 0.9.2 changed ``Primitive.get_bind_params(params)`` to return the params dict
(subfuns folded in under ``"subfuns"``) instead of a ``(subfuns, params)`` tuple; equinox
unpacks it as a pair.

Fix: upgrade equinox to >= 0.13.7 (it accepts both forms).
"""

import jax
import jax.numpy as jnp
import pytest


def _eqxi():
    eqxi = pytest.importorskip("equinox.internal")
    if not hasattr(eqxi, "finalise_make_jaxpr"):
        pytest.skip("this equinox has no equinox.internal.finalise_make_jaxpr")
    return eqxi


def test_finalise_make_jaxpr():
    eqxi = _eqxi()
    closed = eqxi.finalise_make_jaxpr(lambda x: jnp.sin(x) * 2)(jnp.array(0.5))
    (out,) = jax.core.eval_jaxpr(closed.jaxpr, closed.consts, jnp.array(0.5))
    assert abs(float(out) - 2 * float(jnp.sin(0.5))) < 1e-6


def test_finalise_fn_custom_jvp():
    # jax.nn.relu is a custom_jvp function: exercises the custom_jvp_call finalisation too.
    eqxi = _eqxi()
    out = eqxi.finalise_fn(jax.nn.relu)(jnp.array([-1.0, 2.0]))
    assert out.tolist() == [0.0, 2.0]


def test_control_finalise_empty_jaxpr():
    # No equations, so get_bind_params is never called.
    eqxi = _eqxi()
    closed = eqxi.finalise_make_jaxpr(lambda x: x)(jnp.array(1.5))
    assert len(closed.jaxpr.eqns) == 0
    assert float(jax.core.eval_jaxpr(closed.jaxpr, closed.consts, jnp.array(1.5))[0]) == 1.5

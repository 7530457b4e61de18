"""core-aval-removed-0100: grad through and vmap of equinox while loops fail on jax >= 0.10.0 (equinox < 0.13.3).

Rule in matrix.toml: core-aval-removed-0100 (``test_vmap_buffered_while_loop`` also belongs to
unmapped-aval-051 on jax >= 0.5.1 with equinox < 0.11.12).

Symptom: on jax 0.10.0+ with equinox 0.13.1/0.13.2 (older equinox does not import there),
``jax.grad`` through ``equinox.internal.while_loop(kind="checkpointed")`` -- and so through
every ``diffeqsolve`` with the default adjoint -- fails with ``AttributeError: jax.core.get_aval
was deprecated in JAX v0.8.2 and removed in JAX v0.10.0 ...``; ``jax.vmap`` of a buffered
loop (diffrax ``SaveAt(ts=...)`` under vmap) fails the same way on ``jax.core.mapped_aval``.
On jax >= 0.11 the message is ``module 'jax.core' has no attribute 'get_aval'``.

Cause: jax 0.10.0 removed ``jax.core.get_aval``, ``mapped_aval`` and ``unmapped_aval``;
equinox's symbolic-zero cotangents (``_none_to_zero``) and its batched "vprim" abstract
evaluation still called them.

Fix: upgrade equinox to >= 0.13.3.
"""

import jax
import jax.numpy as jnp
import pytest


def _while_loop():
    eqxi = pytest.importorskip("equinox.internal")
    if not hasattr(eqxi, "while_loop"):
        pytest.skip("this equinox has no equinox.internal.while_loop")
    return eqxi.while_loop


def test_grad_checkpointed_while_loop():
    while_loop = _while_loop()

    def loss(x):
        return while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, 1.0),
                          max_steps=3, kind="checkpointed")[1]

    try:
        g = jax.grad(loss)(1.1)
    except RuntimeError as e:
        # equinox 0.10.x's checkpointed loop cannot differentiate a Python-scalar carry at all
        # (seen on jax 0.4.13-0.4.31 with equinox 0.10.2-0.10.6): not the API this case is about.
        if "custom_vjp gradients must have the same structure" in str(e):
            pytest.skip(f"this equinox cannot differentiate this checkpointed loop: {str(e)[:120]}")
        raise
    assert abs(float(g) - 3 * 1.1**2) < 1e-5


def test_vmap_buffered_while_loop():
    while_loop = _while_loop()

    def fill(x):
        def body(carry):
            i, buf = carry
            return i + 1, buf.at[i].set(x * i)

        return while_loop(lambda c: c[0] < 3, body, (0, jnp.zeros(3)), max_steps=3,
                          buffers=lambda c: c[1], kind="checkpointed")[1]

    assert jax.vmap(fill)(jnp.array([1.0, 2.0])).tolist() == [[0.0, 1.0, 2.0], [0.0, 2.0, 4.0]]


def test_diffrax_grad():
    diffrax = pytest.importorskip("diffrax")

    def loss(y0):
        sol = diffrax.diffeqsolve(diffrax.ODETerm(lambda t, y, args: -y), diffrax.Euler(),
                                  t0=0.0, t1=1.0, dt0=0.5, y0=y0)
        return sol.ys[-1]

    assert abs(float(jax.grad(loss)(1.0)) - 0.5**2) < 1e-6


def test_control_checkpointed_while_loop_forward():
    while_loop = _while_loop()
    out = jax.jit(lambda x: while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x),
                                       (0, 1.0), max_steps=3, kind="checkpointed")[1])(1.1)
    assert abs(float(out) - 1.1**3) < 1e-5

"""find-top-trace-0110: ``eqx.filter_jvp`` fails on jax >= 0.11.0 (equinox < 0.13.7).

Rule in matrix.toml: find-top-trace-0110.

Symptom: every ``eqx.filter_jvp`` call -- and so differentiating through ``lineax.linear_solve``
with a differentiable operator (lineax's ``TangentLinearOperator`` calls ``eqx.filter_jvp``), as
optimistix/diffrax implicit adjoints do -- fails with::

    AttributeError: jax.core.find_top_trace was deprecated in JAX v0.10.0 and removed in JAX v0.11.0.  Use jax.extend.core.find_top_trace.

(on jax >= 0.12: ``module 'jax.core' has no attribute 'find_top_trace'``). On jax 0.10.x it is
only a DeprecationWarning.

Cause: ``filter_jvp`` looks up the JVP trace with ``jax.core.find_top_trace``, which jax
deprecated in 0.10.0 and removed in 0.11.0.

Fix: upgrade equinox to >= 0.13.7 (it uses ``jax.extend.core.find_top_trace``).
"""

import jax
import jax.numpy as jnp
import pytest


def test_filter_jvp():
    eqx = pytest.importorskip("equinox")
    primal, tangent = eqx.filter_jvp(lambda x, n: jnp.sin(x) * n,
                                     (jnp.array(0.0), 3), (jnp.array(1.0), None))
    assert float(primal) == 0.0
    assert float(tangent) == 3.0


def test_lineax_linear_solve_grad():
    lx = pytest.importorskip("lineax")
    b = jnp.array([1.0, 2.0])

    def loss(a):
        return lx.linear_solve(lx.MatrixLinearOperator(a), b).value.sum()

    grad = jax.grad(loss)(2.0 * jnp.eye(2))
    # d/dA sum(A^-1 b) = -A^-T 1 (A^-1 b)^T; for A = 2I: -(1/2)(1/2) [1, 2] in each row
    assert jnp.allclose(grad, jnp.array([[-0.25, -0.5], [-0.25, -0.5]]))


def test_control_filter_grad():
    eqx = pytest.importorskip("equinox")
    grad = eqx.filter_grad(lambda x, n: jnp.sin(x) * n)(jnp.array(0.0), 3)
    assert float(grad) == 3.0

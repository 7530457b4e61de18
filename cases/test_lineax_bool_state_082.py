"""lineax-bool-state-082: on jax >= 0.8.2, lineax < 0.1.0's LU solve fails inside diffrax's implicit solvers.

Rule in matrix.toml: lineax-bool-state-082.

Symptom: every adaptive implicit ``diffeqsolve`` (Kvaerno*, KenCarp*, ImplicitEuler: diffrax's
``VeryChord`` root finder with lineax's ``LU``) fails while tracing on jax 0.8.2 and later with
lineax 0.0.8 -- reported for a tuple state, observed for a plain array state too::

    jax.errors.TracerBoolConversionError: Attempted boolean conversion of traced array with shape bool[].

raised at ``lineax/_solver/lu.py`` (``trans = 1 if transpose else 0``). Explicit solvers,
``lx.linear_solve`` called directly and optimistix's Newton work; jax <= 0.8.1 is clean.

Cause: lineax keeps a Python ``bool`` (``transpose``) as a leaf of the LU solver state; the
state that VeryChord carries reaches ``LU.compute`` as a traced ``bool[]`` from jax 0.8.2 on.

Fix: upgrade lineax to >= 0.1.0 (it moved the bool states into static fields).
"""

import pytest


def test_kvaerno5_tuple_state():
    diffrax = pytest.importorskip("diffrax")
    sol = diffrax.diffeqsolve(diffrax.ODETerm(lambda t, y, args: (-5 * y[0], 0.5 * y[1])),
                              diffrax.Kvaerno5(), t0=0, t1=3, dt0=0.1, y0=(1.0, 1.0),
                              saveat=diffrax.SaveAt(dense=True),
                              stepsize_controller=diffrax.PIDController(rtol=1e-5, atol=1e-5))
    a, b = sol.evaluate(1.0)
    assert abs(float(a) - 0.006737947) < 1e-3 and abs(float(b) - 1.6487213) < 1e-3


def test_kvaerno5_array_state():
    diffrax = pytest.importorskip("diffrax")
    import jax.numpy as jnp
    sol = diffrax.diffeqsolve(diffrax.ODETerm(lambda t, y, args: -y), diffrax.Kvaerno5(),
                              t0=0.0, t1=1.0, dt0=0.1, y0=jnp.array([1.0, 2.0]),
                              stepsize_controller=diffrax.PIDController(rtol=1e-5, atol=1e-5))
    assert jnp.allclose(sol.ys[-1], jnp.exp(-1.0) * jnp.array([1.0, 2.0]), rtol=1e-3)


def test_control_explicit_tuple_state_and_linear_solve():
    diffrax = pytest.importorskip("diffrax")
    lx = pytest.importorskip("lineax")
    import jax.numpy as jnp
    sol = diffrax.diffeqsolve(diffrax.ODETerm(lambda t, y, args: (-5 * y[0], 0.5 * y[1])),
                              diffrax.Tsit5(), t0=0, t1=3, dt0=0.1, y0=(1.0, 1.0),
                              saveat=diffrax.SaveAt(dense=True),
                              stepsize_controller=diffrax.PIDController(rtol=1e-5, atol=1e-5))
    a, b = sol.evaluate(1.0)
    assert abs(float(a) - 0.006737947) < 1e-3 and abs(float(b) - 1.6487213) < 1e-3
    x = lx.linear_solve(lx.MatrixLinearOperator(jnp.array([[2.0, 0.0], [0.0, 4.0]])),
                        jnp.array([2.0, 4.0]), lx.LU()).value
    assert jnp.allclose(x, jnp.array([1.0, 1.0]))

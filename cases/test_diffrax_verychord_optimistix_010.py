"""diffrax-verychord-optimistix-010: diffrax < 0.7.2 with optimistix >= 0.1.0: adaptive Kvaerno5 solves never accept a step.

Rule in matrix.toml: diffrax-verychord-optimistix-010.

Symptom: with diffrax 0.7.0 or 0.7.1 and optimistix 0.1.0 (they install together: diffrax
declares only ``optimistix>=0.0.10``), ``diffeqsolve`` with ``Kvaerno5`` and an adaptive
step-size controller rejects every step::

    equinox.EquinoxRuntimeError: The maximum number of solver steps was reached. Try increasing `max_steps`.

Explicit solvers, ``optx.root_find`` / ``optx.minimise`` and lineax are fine.

Cause: diffrax's ``VeryChord`` reports ``nonlinear_divergence`` on its first iteration, before
it has two iterates to compare; optimistix 0.1.0 stops a root find as soon as a step reports
an unsuccessful result, so every Newton solve "diverges" at once.

Fix: upgrade diffrax to >= 0.7.2.
"""

import jax.numpy as jnp
import pytest


def _solve(diffrax, solver):
    return diffrax.diffeqsolve(diffrax.ODETerm(lambda t, y, args: -y), solver, t0=0.0, t1=1.0,
                               dt0=0.1, y0=jnp.array([1.0, 2.0]),
                               stepsize_controller=diffrax.PIDController(rtol=1e-5, atol=1e-5))


def test_kvaerno5_adaptive():
    diffrax = pytest.importorskip("diffrax")
    sol = _solve(diffrax, diffrax.Kvaerno5())
    assert jnp.allclose(sol.ys[-1], jnp.exp(-1.0) * jnp.array([1.0, 2.0]), rtol=1e-3)


def test_control_explicit_adaptive():
    diffrax = pytest.importorskip("diffrax")
    sol = _solve(diffrax, diffrax.Tsit5())
    assert jnp.allclose(sol.ys[-1], jnp.exp(-1.0) * jnp.array([1.0, 2.0]), rtol=1e-3)

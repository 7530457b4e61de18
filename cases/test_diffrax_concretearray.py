"""diffrax-concretearray: every ``diffrax.diffeqsolve`` fails on jax >= 0.4.36 with diffrax <= 0.6.0.

Rule in matrix.toml: diffrax-concretearray.

Symptom: ``import diffrax`` works; the first ``diffeqsolve`` (any solver, jitted or not,
forward only) fails while tracing the solve loop with::

    AttributeError: module 'jax.core' has no attribute 'ConcreteArray'

Cause: jax 0.4.36 ("stackless" tracing) removed ``jax.core.ConcreteArray``. diffrax 0.6.0
tests ``type(jax.core.get_aval(x)) is jax.core.ConcreteArray`` inside its solve loop
(``static_select``, ``_maybe_static``), so it fails at solve time, not at import. A resolver
given an equinox < 0.11.10 picks diffrax 0.6.0 (0.6.1 needs equinox >= 0.11.10), so an old
equinox pinned on a new jax lands here.

Fix: upgrade diffrax to >= 0.6.1 (with equinox >= 0.11.10).
"""

import jax
import jax.numpy as jnp
import pytest


def _solve():
    import diffrax

    term = diffrax.ODETerm(lambda t, y, args: -y)
    sol = diffrax.diffeqsolve(term, diffrax.Euler(), t0=0.0, t1=1.0, dt0=0.25,
                              y0=jnp.array(1.0))
    return sol.ys


def test_control_import_diffrax():
    diffrax = pytest.importorskip("diffrax")
    assert hasattr(diffrax, "diffeqsolve")


def test_diffeqsolve():
    pytest.importorskip("diffrax")
    ys = _solve()
    assert abs(float(ys[-1]) - 0.75**4) < 1e-6  # four Euler steps of y' = -y


def test_diffeqsolve_jit():
    pytest.importorskip("diffrax")
    ys = jax.jit(_solve)()
    assert abs(float(ys[-1]) - 0.75**4) < 1e-6

"""diffrax-concretearray: every ``diffrax.diffeqsolve`` fails on jax >= 0.4.36 with diffrax <= 0.6.0.

Symptom
-------
``import diffrax`` works; the first ``diffeqsolve`` (any solver, jitted or not, forward
only) fails while tracing the solve loop with::

    AttributeError: module 'jax.core' has no attribute 'ConcreteArray'

Cause
-----
jax 0.4.36 landed "stackless" tracing and removed ``jax.core.ConcreteArray`` (values
known at trace time are no longer a separate aval type). diffrax 0.6.0 tests
``type(jax.core.get_aval(x)) is jax.core.ConcreteArray`` inside functions, not at
module level: in ``diffrax/_misc.py::static_select`` and
``diffrax/_integrate.py::_maybe_static``, both called from the solve loop. So the
failure is at solve time, not at import. diffrax 0.6.1 no longer uses it; it
requires equinox >= 0.11.10 (itself updated for jax 0.4.36).

Affected / fixed (observed, CPU, Python 3.11)
---------------------------------------------
- affected: diffrax 0.6.0 on jax 0.4.36 (equinox 0.11.9) and on jax 0.4.38 (equinox
  0.11.7 and 0.11.9): ``test_diffeqsolve`` and ``test_diffeqsolve_jit`` fail, import works.
- clean: diffrax 0.6.0 on jax 0.4.35 (equinox 0.11.8); diffrax 0.6.1 (equinox 0.11.10)
  and 0.7.0 (equinox 0.11.12) on jax 0.4.38.
- The equinox version does not matter: the removed attribute is read by diffrax.
  But a resolver given ``diffrax = "*"`` with equinox < 0.11.10 picks diffrax 0.6.0
  (0.6.1+ need equinox >= 0.11.10), so an old equinox pinned on a new jax lands here.
- fix: upgrade diffrax to >= 0.6.1 (and equinox to >= 0.11.10). Workaround: pin
  jax/jaxlib <= 0.4.35.

Upstream
--------
- https://github.com/patrick-kidger/diffrax/issues/532 ("JAX 0.4.36 Failing")
- fix: https://github.com/patrick-kidger/diffrax/pull/527 ("Compatibility with JAX
  0.4.36, which removes ConcreteArray"), commit 965f6b4 in diffrax 0.6.1
- https://github.com/patrick-kidger/diffrax/releases/tag/v0.6.1
- jax change: https://github.com/jax-ml/jax/commit/c36e1f7c1ad4782060cbc8e8c596d85dfb83986f
  (stackless, jax 0.4.36 changelog)

Differences from UPSTREAM.md
----------------------------
- None in the boundaries. UPSTREAM.md does not say when it fails: it is at solve
  (trace) time, so this is a case-stage failure, not an import-stage one.
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

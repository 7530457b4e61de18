"""make-jaxpr-consts-0427: on jax 0.4.27 ``jax.make_jaxpr`` inside a trace drops closed-over tracers from ``consts``.

Rule in matrix.toml: make-jaxpr-consts-0427.

Symptom: on jax 0.4.27 only, ``jax.make_jaxpr(f)`` called inside another trace (``jax.jit``,
``eqx.filter_jit``, ``grad``...) on an ``f`` that closes over a tracer of that trace returns a
``ClosedJaxpr`` with empty ``consts`` and the closed-over values as extra leading inputs, so
``jax.core.eval_jaxpr(cj.jaxpr, cj.consts, *args)`` fails with::

    ValueError: safe_map() argument 2 is shorter than argument 1

equinox's closure conversion is built on ``make_jaxpr`` and diffrax closure-converts the vector
field, so even diffrax's quick-start example fails. Top-level ``make_jaxpr`` is not affected.

Cause: jax 0.4.27 reimplemented ``make_jaxpr`` as ``jit(fun).specialize(*args).jaxpr``, which
discarded the tracer consts that pjit hands back separately; jax 0.4.28 reverted it.

Fix: use any jax other than 0.4.27 (equinox >= 0.11.5 already refuses it).
"""

import jax
import jax.numpy as jnp
import pytest


def _eval(closed, *args):
    return jax.core.eval_jaxpr(closed.jaxpr, closed.consts, *args)


def test_make_jaxpr_inside_jit_closes_over_tracer():
    def outer(y):
        def f(x):
            return x + y  # y is a tracer of the outer jit

        closed = jax.make_jaxpr(f)(1.0)
        (out,) = _eval(closed, y)
        assert len(closed.jaxpr.invars) == 1
        return out

    assert float(jax.jit(outer)(2.0)) == 4.0


def test_control_make_jaxpr_top_level_consts():
    y = jnp.array(2.0)

    def f(x):
        return x + y

    closed = jax.make_jaxpr(f)(1.0)
    assert len(closed.jaxpr.invars) == 1
    assert float(_eval(closed, 1.0)[0]) == 3.0


def test_filter_closure_convert_in_jit():
    eqx = pytest.importorskip("equinox")

    def outer(y):
        fc = eqx.filter_closure_convert(lambda x: x * y, jnp.array(1.0))
        return fc(jnp.array(3.0))

    assert float(jax.jit(outer)(jnp.array(2.0))) == 6.0


def test_diffrax_quick_example():
    # diffrax#459: the quick-start example from diffrax's README.
    diffrax = pytest.importorskip("diffrax")
    term = diffrax.ODETerm(lambda t, y, args: -y)
    sol = diffrax.diffeqsolve(term, diffrax.Dopri5(), t0=0, t1=1, dt0=0.1,
                              y0=jnp.array([2.0, 3.0]))
    assert jnp.allclose(sol.ys[-1], jnp.array([2.0, 3.0]) * jnp.exp(-1.0), rtol=1e-3)

"""flatten-weakref: jax >= 0.7.1 weak-references primitive params; equinox < 0.13.1's ``Flatten`` has none.

Rule in matrix.toml: flatten-weakref.

Symptom: every *traced* call of an equinox-defined primitive fails -- ``lineax.linear_solve``,
optimistix's Newton/Chord root finders, diffrax's implicit solvers (Kvaerno*, ImplicitEuler),
any ``equinox.internal.filter_primitive_bind`` under ``jit``/``make_jaxpr``::

    TypeError: cannot create weak reference to 'Flatten' object

Explicit diffrax solvers, plain ``eqx.filter_jit`` and eager (untraced) binds still work.

Cause: jax 0.7.1 caches abstract evaluation while tracing (``partial_eval._cached_abstract_eval``,
a ``weakref_lru_cache`` keyed on the primitive's params). ``filter_primitive_bind`` passes a
``Flatten`` instance as a param, and ``Flatten`` declares ``__slots__`` without ``__weakref__``.

Fix: upgrade equinox to >= 0.13.1 (it adds ``"__weakref__"`` to ``Flatten.__slots__``).
"""

import jax
import jax.numpy as jnp
import pytest


def _primitive(name):
    try:
        from jax.extend.core import Primitive
    except ImportError:  # older jax
        from jax.core import Primitive
    eqxi = pytest.importorskip("equinox.internal")
    if not hasattr(eqxi, "filter_primitive_bind"):
        pytest.skip("this equinox has no equinox.internal.filter_primitive_bind")
    prim = Primitive(name)
    prim.multiple_results = True
    prim.def_impl(eqxi.filter_primitive_def(lambda x: x + 1))
    prim.def_abstract_eval(eqxi.filter_primitive_def(lambda x: x))
    return eqxi, prim


def test_filter_primitive_bind_traced():
    eqxi, prim = _primitive("flatten_weakref_traced")
    closed = jax.make_jaxpr(lambda x: eqxi.filter_primitive_bind(prim, x))(jnp.ones(2))
    assert [v.aval.shape for v in closed.jaxpr.outvars] == [(2,)]


def test_lineax_linear_solve():
    lx = pytest.importorskip("lineax")
    sol = lx.linear_solve(lx.MatrixLinearOperator(2.0 * jnp.eye(2)), jnp.ones(2))
    assert sol.value.tolist() == [0.5, 0.5]


def test_optimistix_newton_root_find():
    optx = pytest.importorskip("optimistix")
    sol = optx.root_find(lambda y, args: y - 1.0, optx.Newton(rtol=1e-6, atol=1e-6), jnp.zeros(2))
    assert jnp.allclose(sol.value, 1.0)


def test_diffrax_implicit_solver():
    diffrax = pytest.importorskip("diffrax")
    if not hasattr(diffrax, "VeryChord"):
        pytest.skip("this diffrax has no VeryChord root finder (implicit solvers predate optimistix)")
    solver = diffrax.ImplicitEuler(root_finder=diffrax.VeryChord(rtol=1e-6, atol=1e-6))
    sol = diffrax.diffeqsolve(diffrax.ODETerm(lambda t, y, args: -y), solver,
                              t0=0.0, t1=1.0, dt0=0.25, y0=jnp.array(1.0))
    assert abs(float(sol.ys[-1]) - 0.8**4) < 1e-5  # y_{n+1} = y_n / (1 + dt)


def test_control_filter_primitive_bind_eager():
    eqxi, prim = _primitive("flatten_weakref_eager")
    assert eqxi.filter_primitive_bind(prim, jnp.ones(2)).tolist() == [2.0, 2.0]


def test_control_diffrax_explicit_solver():
    diffrax = pytest.importorskip("diffrax")
    sol = diffrax.diffeqsolve(diffrax.ODETerm(lambda t, y, args: -y), diffrax.Euler(),
                              t0=0.0, t1=1.0, dt0=0.25, y0=jnp.array(1.0))
    assert abs(float(sol.ys[-1]) - 0.75**4) < 1e-6

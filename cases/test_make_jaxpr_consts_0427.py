"""make-jaxpr-consts-0427: on jax 0.4.27 ``jax.make_jaxpr`` inside a trace drops closed-over tracers from ``consts``.

Symptom
-------
On jax 0.4.27 only, ``jax.make_jaxpr(f)`` called *inside another trace* (``jax.jit``,
``eqx.filter_jit``, ``grad``...) on a function ``f`` that closes over a tracer of that
outer trace returns a ``ClosedJaxpr`` whose ``consts`` are empty and whose jaxpr has
the closed-over values as *extra leading input variables* instead of constvars.
Evaluating it as usual, ``jax.core.eval_jaxpr(cj.jaxpr, cj.consts, *args)``, then
fails with::

    ValueError: safe_map() argument 2 is shorter than argument 1

equinox's closure conversion (``eqx.filter_closure_convert``) is built on
``make_jaxpr``, and diffrax closure-converts the vector field, so on jax 0.4.27 with
equinox 0.11.4 even diffrax's quick-start example (``diffeqsolve`` with ``Dopri5``)
fails with that ValueError (diffrax#459). ``make_jaxpr`` at top level, where the
consts are concrete arrays, is not affected.

A side effect in the same release, deliberately not tested: ``make_jaxpr`` cached its
trace by function identity (it went through ``jax.jit``'s cache), so a second call
after a closed-over Python value changed returned the old jaxpr. jax 0.4.26/0.4.28
retrace; but jax 0.4.33, 0.4.38, 0.6.0 and 0.7.2 cache again (observed), so that is
jax's design, not this bug.

Cause
-----
jax commit 1956ff7 ("Add `specialize` on `jax.jit` so that we can delete the
duplicate code in `jax.make_jaxpr`") reimplemented ``make_jaxpr`` as
``jit(fun).specialize(*args).jaxpr``. pjit's ``_create_pjit_jaxpr`` turns tracer
consts into leading invars (``pe.convert_constvars_jaxpr``) and hands them back
separately as ``final_consts``, which ``specialize`` discarded. jax 0.4.28 reverted it
(commit 96f888b, "Reverts 1956ff7d7b73794012fece2d8452e097196587fc"; changelog:
"Reverted a change to `make_jaxpr` that was breaking Equinox (#21116)").

Affected / fixed (observed, CPU, Python 3.11)
---------------------------------------------
- affected: jax == 0.4.27 (jaxlib 0.4.27): the pure-JAX test; with equinox 0.11.4
  and diffrax 0.5.1, the equinox and diffrax tests as well.
- clean: jax 0.4.26 and 0.4.28 (same tests), and every other jax tested (0.4.13-0.7.2).
- equinox >= 0.11.5 declares ``jax!=0.4.27`` (equinox commit 685a62c, 2024-05-12), so
  a resolver never pairs them; equinox 0.11.4 and older co-install with jax 0.4.27.
- fix: any jax other than 0.4.27 (upgrade to >= 0.4.28).

Upstream
--------
- https://github.com/jax-ml/jax/issues/21116 (filed by equinox's author from the report below)
- https://github.com/patrick-kidger/equinox/issues/716 ("Jax 0.4.27: ValueError: safe_map()
  argument 2 is shorter than argument 1"; also ``test_closure_convert_basic``:
  ``assert [] == [...]``, i.e. empty consts)
- https://github.com/patrick-kidger/diffrax/issues/415 (neural ODE, diffrax 0.5.0)
- https://github.com/jax-ml/jax/commit/1956ff7d7b73794012fece2d8452e097196587fc (cause)
- https://github.com/jax-ml/jax/commit/96f888bcfeb623551703e6fca630db92fbe92ce5 (revert, jax 0.4.28)
- https://github.com/patrick-kidger/diffrax/issues/459 (the diffrax quick-start failing)
- https://github.com/patrick-kidger/equinox/commit/685a62c03e323f31be4fc9f02bfdf6660c02d38c
  (equinox excludes jax 0.4.27)

Differences from UPSTREAM.md
----------------------------
- UPSTREAM.md calls it a "make_jaxpr consts regression"; concretely it is the loss of
  *tracer* consts when ``make_jaxpr`` runs inside an outer trace (top-level consts are
  fine). Users met it as diffrax's quick-start failing (diffrax#459).
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

"""float0-tangent: equinox's custom JVPs give integer outputs integer zero tangents (jax >= 0.4.34).

Symptom
-------
On jax >= 0.4.34 with equinox <= 0.11.7, differentiating (``jax.grad`` or ``jax.jvp``)
through anything built on ``eqx.filter_custom_jvp`` whose rule returns ``None`` (a
symbolic zero) as the tangent of an integer or boolean output fails while tracing::

    TypeError: Custom JVP rule must produce primal and tangent outputs with corresponding shapes and dtypes, but got:
      primal int32[] with tangent int32[], expecting tangent ShapedArray(float0[])

That is what users met as ``jax.grad`` through ``diffrax.diffeqsolve`` (diffrax#508):
equinox's checkpointed while loop (``_stop_gradient_on_unperturbed_jvp``) is such a
rule, and the solver state carries integer step counters and boolean flags. Forward
solves work.

Cause
-----
jax 0.4.34 checks that a ``custom_jvp`` rule's tangent outputs have the *tangent*
type of the primal outputs (``float0`` for integer/boolean primals). Earlier jax
expected integer tangents there, so equinox's ``_none_to_zero`` deliberately built
``SymbolicZero(aval)`` from the primal's own aval (int32), and
``internal._primitive._zero_from_primal`` used ``aval.at_least_vspace()``. equinox
0.11.8 (PR #871, commit c9b0d1f "More fixes for JAX 0.4.34") uses
``aval.to_tangent_aval()`` where it exists.

Affected / fixed (observed, CPU, Python 3.11)
---------------------------------------------
- affected: equinox 0.11.6 and 0.11.7 on jax 0.4.35 (every test below); equinox <=
  0.11.4 cannot be imported on jax >= 0.4.34 at all (equinox-import-pp-eqn-rules), so
  in practice the affected equinox are 0.11.5-0.11.7.
- clean: equinox 0.11.8 on jax 0.4.35; any equinox on jax <= 0.4.33 (0.11.6/0.11.7
  on jax 0.4.33 pass the minimal tests); equinox 0.11.12 / 0.12.x on jax 0.4.38.
- On jax 0.4.32-0.4.33 with equinox < 0.11.7 the checkpointed-loop and diffrax
  tests with the *default* adjoint fail with a different bug first
  (weak-type-closure). The loop test here is therefore the public ``filter_custom_jvp``
  reduction, and the diffrax variant uses ``DirectAdjoint``, which does not
  closure-convert, so each test shows only this bug.
- fix: upgrade equinox to >= 0.11.8. Workaround: pin jax <= 0.4.33.

Upstream
--------
- https://github.com/patrick-kidger/diffrax/issues/508 (the report, jax 0.4.34)
- https://github.com/patrick-kidger/equinox/issues/869 (equinox's own test-suite failures)
- https://github.com/patrick-kidger/equinox/pull/871
- https://github.com/patrick-kidger/equinox/commit/c9b0d1f3cacb158808158d07a0fd29107bf919cc
- background: https://github.com/jax-ml/jax/issues/16000 (custom_jvp gave integer
  tangents to integer primals), https://github.com/jax-ml/jax/pull/23779

Differences from UPSTREAM.md
----------------------------
- None in the boundaries (jax >= 0.4.34, equinox <= 0.11.7, fixed 0.11.8). The minimal
  trigger needs no diffrax: any ``eqx.filter_custom_jvp`` returning ``None`` for an
  integer output's tangent.
"""

import jax
import jax.numpy as jnp
import pytest


def _require_none_output_tangents():
    """Skip where this equinox's filter_custom_jvp cannot return None (a symbolic zero) for an
    output tangent at all: the pattern this case is about does not exist there. Seen on jax
    0.4.18-0.4.22 with equinox 0.10.10-0.11.1 ("must produce primal and tangent outputs with
    equal shapes and dtypes ... tangent 2.0", or "... equal container (pytree) structures", for
    float outputs too)."""
    import equinox as eqx

    if not hasattr(eqx.filter_custom_jvp, "def_jvp"):  # equinox < 0.10.7
        pytest.skip("this equinox's filter_custom_jvp has no def_jvp (symbolic zeros)")

    @eqx.filter_custom_jvp
    def probe(x, y):
        return x * 2.0, y + 1.0

    @probe.def_jvp
    def probe_jvp(primals, tangents):
        return probe(*primals), (2.0 * tangents[0], None)

    try:
        jax.jvp(lambda x: probe(x, jnp.array(1.0))[0], (jnp.array(3.0),), (jnp.array(1.0),))
    except TypeError as e:
        if "equal shapes and dtypes" in str(e) or "equal container (pytree) structures" in str(e):
            pytest.skip(f"this equinox/jax pair rejects None output tangents in filter_custom_jvp: {e}")
        raise


def _int_output_custom_jvp():
    import equinox as eqx

    _require_none_output_tangents()

    @eqx.filter_custom_jvp
    def f(x, n):
        return x * 2.0, n + 1  # a float output and an integer output

    @f.def_jvp
    def f_jvp(primals, tangents):
        x, n = primals
        tx, _ = tangents
        # None: a symbolic zero tangent for the integer output, as equinox's own
        # rules (e.g. the checkpointed while loop) return.
        return f(x, n), (2.0 * tx, None)

    return f


def test_filter_custom_jvp_int_output_grad():
    f = _int_output_custom_jvp()
    g = jax.grad(lambda x: f(x, jnp.array(1))[0])(jnp.array(3.0))
    assert float(g) == 2.0


def test_filter_custom_jvp_int_output_jvp():
    f = _int_output_custom_jvp()
    (out, n), (t_out, t_n) = jax.jvp(
        lambda x: f(x, jnp.array(1)), (jnp.array(3.0),), (jnp.array(1.0),)
    )
    assert float(out) == 6.0 and int(n) == 2 and float(t_out) == 2.0
    assert t_n.dtype == jax.dtypes.float0


def test_control_filter_custom_jvp_float_outputs():
    import equinox as eqx

    _require_none_output_tangents()

    @eqx.filter_custom_jvp
    def f(x, y):
        return x * 2.0, y + 1.0

    @f.def_jvp
    def f_jvp(primals, tangents):
        x, y = primals
        tx, _ = tangents
        return f(x, y), (2.0 * tx, None)

    g = jax.grad(lambda x: f(x, jnp.array(1.0))[0])(jnp.array(3.0))
    assert float(g) == 2.0


def _decay(a, adjoint):
    import diffrax

    term = diffrax.ODETerm(lambda t, y, args: -args * y)
    sol = diffrax.diffeqsolve(term, diffrax.Euler(), t0=0.0, t1=1.0, dt0=0.25,
                              y0=jnp.array([2.0, 3.0]), args=a, adjoint=adjoint,
                              max_steps=8)
    return sol.ys[0, -1]  # Euler: 3 * (1 - a/4) ** 4


def test_diffrax_grad():
    # diffrax#508's example (grad of an ODE solution w.r.t. a parameter; Euler and few
    # steps to stay fast), with DirectAdjoint so that the weak-type-closure bug cannot
    # fire first on jax 0.4.32/33.
    diffrax = pytest.importorskip("diffrax")
    g = jax.grad(_decay)(jnp.array(1.0), diffrax.DirectAdjoint())
    assert abs(float(g) - (-3.0 * 0.75**3)) < 1e-4  # d/da 3 (1 - a/4)^4 at a = 1


def test_control_diffrax_forward():
    diffrax = pytest.importorskip("diffrax")
    y = _decay(jnp.array(1.0), diffrax.DirectAdjoint())
    assert abs(float(y) - 3.0 * 0.75**4) < 1e-4

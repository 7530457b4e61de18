"""float0-tangent: equinox's custom JVPs give integer outputs integer zero tangents (jax >= 0.4.34).

Rule in matrix.toml: float0-tangent.

Symptom: on jax >= 0.4.34 with equinox <= 0.11.7, differentiating (``jax.grad`` or ``jax.jvp``)
through an ``eqx.filter_custom_jvp`` whose rule returns ``None`` (a symbolic zero) as the
tangent of an integer or boolean output fails while tracing::

    TypeError: Custom JVP rule must produce primal and tangent outputs with corresponding shapes and dtypes, but got:
      primal int32[] with tangent int32[], expecting tangent ShapedArray(float0[])

Users met it as ``jax.grad`` through ``diffrax.diffeqsolve``: equinox's checkpointed while
loop is such a rule, and the solver state carries integer counters. Forward solves work.

Cause: jax 0.4.34 checks that a custom JVP rule's tangents have the primal's *tangent* type
(``float0`` for integers and booleans); equinox built the symbolic zero from the primal's own
aval. The diffrax test uses ``DirectAdjoint`` so that weak-type-closure (jax 0.4.32-0.4.33,
equinox < 0.11.7, default adjoint) cannot fail first.

Fix: upgrade equinox to >= 0.11.8 (it uses ``aval.to_tangent_aval()``).
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

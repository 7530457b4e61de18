"""weak-type-closure: ``filter_closure_convert`` rejects a call that differs only in weak_type.

Rule in matrix.toml: weak-type-closure (on jax >= 0.4.34 ``test_neural_ode_grad`` fails with
float0-tangent first, which masks this one).

Symptom: on jax >= 0.4.32 with equinox <= 0.11.6, reverse-mode autodiff through a checkpointed
loop -- e.g. training a neural ODE with ``eqx.filter_grad`` through ``diffrax.diffeqsolve`` and
its default adjoint -- fails with::

    ValueError: Closure-converted function called with different dynamic arguments to the example arguments provided:

followed by pytrees whose only difference is ``weak_type=True`` on some leaves. Forward solves work.

Cause: jax 0.4.32 added ``weak_type`` to ``jax.ShapeDtypeStruct`` (``eval_shape`` keeps it and
``==`` compares it); ``filter_closure_convert`` compares each call's ``eval_shape`` with its
example's, so a weak-typed example and a strong-typed call no longer match. (A Python float vs
an array mismatches on every version: static vs dynamic, not this bug, not tested.)

Fix: upgrade equinox to >= 0.11.7 (it strips weak_type before comparing).
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import jax.random as jr
import pytest


def test_filter_closure_convert_weak_example():
    scale = jnp.array(2.0, jnp.float32)

    def f(x):
        return x * scale  # closes over an array: no trivial-function shortcut

    fc = eqx.filter_closure_convert(f, jnp.array(1.0))  # weak-typed example
    out = fc(jnp.ones((), jnp.float32))  # strong-typed call
    assert float(out) == 2.0


def test_control_filter_closure_convert_same_types():
    scale = jnp.array(2.0, jnp.float32)

    def f(x):
        return x * scale

    fc = eqx.filter_closure_convert(f, jnp.ones((), jnp.float32))
    assert float(fc(jnp.full((), 3.0, jnp.float32))) == 6.0
    fw = eqx.filter_closure_convert(f, jnp.array(1.0))
    assert float(fw(jnp.array(3.0))) == 6.0


def _model():
    return eqx.nn.Linear(2, 2, key=jr.PRNGKey(0))


def test_neural_ode_grad():
    # One tiny neural-ODE training step: grad through diffeqsolve (default adjoint)
    # and an SGD update.
    diffrax = pytest.importorskip("diffrax")
    model = _model()
    y0 = jnp.array([1.0, 0.0])

    @eqx.filter_grad
    def grad_loss(m):
        term = diffrax.ODETerm(lambda t, y, args: args(y))
        sol = diffrax.diffeqsolve(
            term, diffrax.Euler(), t0=0.0, t1=1.0, dt0=0.5, y0=y0, args=m, max_steps=4
        )
        return jnp.sum(sol.ys[-1] ** 2)

    grads = grad_loss(model)
    leaves = jax.tree_util.tree_leaves(eqx.filter(grads, eqx.is_array))
    assert leaves and all(bool(jnp.all(jnp.isfinite(g))) for g in leaves)
    updates = jax.tree_util.tree_map(lambda g: -0.1 * g, grads)
    new = eqx.apply_updates(model, updates)
    assert not bool(jnp.allclose(new.weight, model.weight))


def test_control_neural_ode_forward():
    # The forward solve of the same model works on every version.
    diffrax = pytest.importorskip("diffrax")
    term = diffrax.ODETerm(lambda t, y, args: args(y))
    sol = diffrax.diffeqsolve(
        term, diffrax.Euler(), t0=0.0, t1=1.0, dt0=0.5, y0=jnp.array([1.0, 0.0]),
        args=_model(),
    )
    assert bool(jnp.all(jnp.isfinite(sol.ys)))

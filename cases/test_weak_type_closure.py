"""weak-type-closure: `filter_closure_convert` rejects a call that differs only in weak_type.

Symptom (jax >= 0.4.32 with equinox <= 0.11.6): reverse-mode autodiff through a
checkpointed loop, e.g. training a neural ODE with `eqx.filter_grad` through
`diffrax.diffeqsolve` (default adjoint `RecursiveCheckpointAdjoint`), fails with

    ValueError: Closure-converted function called with different dynamic arguments to the example arguments provided:

followed by `Called with: ...` / `Closure-converted with: ...` pytrees, where the
only difference is `weak_type=True` on some leaves. Forward solves still work.

Cause: jax 0.4.32 added `weak_type` to `jax.ShapeDtypeStruct`; `jax.eval_shape`
now keeps it and `==` compares it (jax#23690). `eqx.filter_closure_convert`
records the example arguments' `eval_shape` and compares each call's against it,
so a weak-typed example (`jnp.array(1.0)`) and a strong-typed call
(`jnp.ones((), jnp.float32)`) no longer match. Fix: equinox strips weak_type
before comparing (`_strip_weak_dtype`, commit 8f327d9, PR #856), first released
in equinox 0.11.7.

Observed (CPU, Python 3.11, this suite's scratch envs):
* Fails with the ValueError: equinox 0.10.11, 0.11.4, 0.11.5, 0.11.6 on jax 0.4.32
  (yanked; exact pin) and 0.4.33; equinox 0.11.6 on jax 0.4.35 (minimal form).
* Passes: jax 0.4.13 (eqx 0.10.6), 0.4.30 (eqx 0.11.4), 0.4.31 (eqx 0.11.6);
  equinox 0.11.7 on jax 0.4.33 and 0.4.35; 0.11.8 on 0.4.33; 0.12.x on 0.4.38.
* On jax >= 0.4.34 with equinox <= 0.11.7 the neural-ODE test fails *earlier*
  with a different bug: `TypeError: Custom JVP rule must produce primal and
  tangent outputs with corresponding shapes and dtypes, but got: ... expecting
  tangent ShapedArray(float0[])` (diffrax#508, fixed equinox 0.11.8). That is a
  separate failure id, not this one.
* equinox <= 0.10.x returns a closure-free plain function unchanged from
  `filter_closure_convert`, so the minimal example must close over an array
  (otherwise it passes on equinox 0.10.11 although the bug is present there).

Differences from UPSTREAM.md section 4: (a) the affected equinox range extends
below 0.11.4, at least to 0.10.11; (b) on jax >= 0.4.34 the neural-ODE gradient
fails with the float0 TypeError instead (masking), so only the minimal form shows
this bug there; (c) the minimal form needs a closed-over array on equinox 0.10.x.

Upstream:
* https://github.com/patrick-kidger/equinox/issues/854
* https://github.com/jax-ml/jax/issues/23690
* https://github.com/patrick-kidger/diffrax/issues/502,
  https://github.com/patrick-kidger/diffrax/issues/503 (neural ODE example fails)
* https://github.com/patrick-kidger/optimistix/issues/86
* https://github.com/patrick-kidger/equinox/pull/856
* https://github.com/patrick-kidger/equinox/commit/8f327d9c98ad1f3120d355bc74d80056a8115edd

Workaround before upgrading: pin jax <= 0.4.31, or give the closure-converted
function examples with the same weak-typedness as the real calls.
(Note: a Python float vs an array mismatch fails on *every* version, since it is
static vs dynamic; that is not this bug and is not tested here.)
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

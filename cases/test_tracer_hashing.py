"""tracer-hashing: equinox's checkpointed while loop hashes tracers.

Symptom: on jax 0.4.30-0.4.35 every `diffrax.diffeqsolve` (and any
`equinox.internal.while_loop(..., kind="checkpointed")` whose `cond_fun` closes
over a traced value) emits

    FutureWarning: unhashable type: <class 'jax._src.interpreters.partial_eval.DynamicJaxprTracer'>.
    Attempting to hash a tracer will lead to an error in a future JAX release.

which is a hard failure under a strict warnings policy (`-W error`, or
`filterwarnings = error` as equinox's own tests use). With
`jax._src.deprecations.accelerate("tracer-hash")` (the switch JAX provides
to preview the future error) it is

    TypeError: unhashable type: <class 'jax._src.interpreters.partial_eval.DynamicJaxprTracer'>

Cause: from equinox 0.10.10 the checkpointed loop closure-converts `cond_fun`
(`filter_closure_convert`, commit 77f0b76), producing an `eqx.Module` whose
fields hold the closed-over tracers. That module is passed straight to
`lax.while_loop`, which hashes the function for its tracing cache; a Module's
hash hashes its fields, i.e. the tracers. JAX made tracers warn on hash in
0.4.30 (jax#21824, jax PR #21863) and unhashable in 0.4.36 (jax PR #24722).
Fix: wrap `cond_fun`/`body_fun` in a `lambda` right before `lax.while_loop`
(equinox commit d3a01c8, PR #769), first released in equinox 0.11.5.

Observed (CPU, Python 3.11, this suite's scratch envs):
* Fails (FutureWarning, or TypeError with the accelerate switch):
  equinox 0.10.10 and 0.11.4 on jax 0.4.30, 0.4.31, 0.4.33.
  The diffrax variant fails on jax 0.4.30 (diffrax 0.5.1), 0.4.31 and 0.4.33
  (diffrax 0.6.0) with equinox 0.11.4.
* Passes: equinox 0.10.9 on jax 0.4.30 (cond not closure-converted yet);
  equinox 0.11.4 on jax 0.4.29 (hash is silent, bug latent); equinox 0.10.6
  on jax 0.4.13; equinox 0.11.5, 0.11.6, 0.11.7, 0.11.8 on jax 0.4.30-0.4.35;
  equinox 0.12.0/0.12.1 on jax 0.4.38 (tracers really unhashable there).
* equinox <= 0.11.4 cannot be imported on jax >= 0.4.34
  (`AttributeError: jax.core.pp_eqn_rules was removed in JAX v0.4.34.`), so the
  natural TypeError regime (jax >= 0.4.36) is unreachable with released packages.
Agrees with UPSTREAM.md section 3.

Upstream:
* https://github.com/patrick-kidger/equinox/issues/768 (jakevdp, diffrax repro)
* https://github.com/patrick-kidger/equinox/pull/769
* https://github.com/patrick-kidger/equinox/commit/d3a01c8d1b5531f193f11514c0189104b8f62136
* https://github.com/patrick-kidger/diffrax/issues/445,
  https://github.com/patrick-kidger/diffrax/issues/456,
  https://github.com/patrick-kidger/optimistix/issues/81
* https://github.com/jax-ml/jax/issues/21824, https://github.com/jax-ml/jax/pull/24722

Workaround before upgrading: filter the warning,
`warnings.filterwarnings("ignore", message="unhashable type", category=FutureWarning)`,
or pin jax < 0.4.30.
"""

import contextlib
import warnings

import jax
import jax.numpy as jnp
import pytest


@contextlib.contextmanager
def _strict_tracer_hash():
    """Turn only JAX's tracer-hash FutureWarning into an error."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="unhashable type", category=FutureWarning)
        yield


@contextlib.contextmanager
def _accelerated_tracer_hash():
    """`jax._src.deprecations.accelerate("tracer-hash")`, undone afterwards.

    Exists on jax 0.4.30-0.4.35 only; elsewhere (hashing silent before, a real
    TypeError after) this is a no-op.
    """
    try:
        from jax._src import deprecations

        state = deprecations._registered_deprecations["tracer-hash"]
    except (ImportError, AttributeError, KeyError):
        yield
        return
    old = state.accelerated
    deprecations.accelerate("tracer-hash")
    try:
        yield
    finally:
        state.accelerated = old


def _checkpointed_loop():
    import equinox.internal as eqxi

    @jax.jit
    def run(x, limit):
        def cond(carry):
            i, _ = carry
            return i < limit  # closes over a traced value

        def body(carry):
            i, y = carry
            return i + 1, y * x

        init = (jnp.array(0), jnp.array(1.0))
        return eqxi.while_loop(cond, body, init, max_steps=8, kind="checkpointed")

    i, y = run(jnp.array(2.0), jnp.array(3))
    assert int(i) == 3
    assert float(y) == 8.0


def _diffrax_solve():
    diffrax = pytest.importorskip("diffrax")
    term = diffrax.ODETerm(lambda t, y, args: -y)
    sol = diffrax.diffeqsolve(
        term, diffrax.Tsit5(), t0=0.0, t1=1.0, dt0=0.1, y0=jnp.array(1.0)
    )
    assert abs(float(sol.ys[-1]) - 0.36787944) < 1e-4


def test_checkpointed_while_loop():
    with _strict_tracer_hash():
        _checkpointed_loop()


def test_checkpointed_while_loop_accelerated():
    with _strict_tracer_hash(), _accelerated_tracer_hash():
        _checkpointed_loop()


def test_diffeqsolve():
    with _strict_tracer_hash():
        _diffrax_solve()


def test_diffeqsolve_accelerated():
    with _strict_tracer_hash(), _accelerated_tracer_hash():
        _diffrax_solve()


def test_control_lax_while_loop():
    # The same loop through plain lax.while_loop never hashes a tracer.
    @jax.jit
    def run(x, limit):
        return jax.lax.while_loop(
            lambda c: c[0] < limit, lambda c: (c[0] + 1, c[1] * x), (0, 1.0)
        )

    with _strict_tracer_hash(), _accelerated_tracer_hash():
        i, y = run(jnp.array(2.0), jnp.array(3))
    assert int(i) == 3
    assert float(y) == 8.0

"""tracer-hashing: equinox's checkpointed while loop hashes tracers.

Rule in matrix.toml: tracer-hashing.

Symptom: on jax 0.4.30-0.4.35 every ``diffrax.diffeqsolve`` (and any
``equinox.internal.while_loop(..., kind="checkpointed")`` whose ``cond_fun`` closes over a
traced value) emits ``FutureWarning: unhashable type: <class '...DynamicJaxprTracer'>. Attempting
to hash a tracer will lead to an error in a future JAX release.``, a hard failure under a strict
warnings policy; with ``jax._src.deprecations.accelerate("tracer-hash")`` (jax's preview of the
future error) it is ``TypeError: unhashable type: ...``.

Cause: from equinox 0.10.10 the checkpointed loop closure-converts ``cond_fun`` into an
``eqx.Module`` whose fields hold the closed-over tracers, and passes it straight to
``lax.while_loop``, which hashes the function for its cache. jax made tracers warn on hash in
0.4.30 and unhashable in 0.4.36 (but equinox <= 0.11.4 cannot import on jax >= 0.4.34).

Fix: upgrade equinox to >= 0.11.5 (it wraps ``cond_fun``/``body_fun`` in a ``lambda``).
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

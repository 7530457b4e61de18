"""hashable-jaxpr-params-070: jax >= 0.7.0 rejects equinox < 0.13.0's unhashable ``maybe_set`` params.

Rules in matrix.toml: hashable-jaxpr-params-070; jax070-exit-crash for
``test_filter_jit_process_exits_cleanly``.

Symptom: any write into an ``equinox.internal.while_loop`` buffer -- so ``diffeqsolve`` with
``SaveAt(ts=...)`` or an adaptive step-size controller -- fails while tracing::

    TypeError: As of JAX v0.7, parameters to jaxpr equations must have __hash__ and __eq__ methods. In a call to primitive maybe_set, the value of parameter kwargs was not hashable: {}

Loops without buffers, and diffrax solves that save only ``t1`` with a constant step, work.
Separately, on jax 0.7.0 a script that has run one ``eqx.filter_jit`` function crashes at
interpreter exit (heap corruption: SIGSEGV or SIGABRT); a child interpreter shows it.

Cause: jax 0.7.0 checks that every jaxpr equation parameter is hashable; equinox's
buffer-write primitive ``maybe_set_p`` carries its ``kwargs`` as a plain ``dict``.

Fix: upgrade equinox to >= 0.13.0 (and avoid jax 0.7.0/0.7.1, which equinox >= 0.13.1 refuses).
"""

import jax.numpy as jnp
import pytest


def test_buffered_while_loop():
    eqxi = pytest.importorskip("equinox.internal")
    if not hasattr(eqxi, "while_loop"):
        pytest.skip("this equinox has no equinox.internal.while_loop")

    def body(carry):
        i, buf = carry
        return i + 1, buf.at[i].set(2.0 * i)

    _, buf = eqxi.while_loop(lambda c: c[0] < 3, body, (0, jnp.zeros(3)), max_steps=3,
                             buffers=lambda c: c[1], kind="checkpointed")
    assert buf.tolist() == [0.0, 2.0, 4.0]


def test_diffrax_saveat_ts():
    diffrax = pytest.importorskip("diffrax")
    term = diffrax.ODETerm(lambda t, y, args: -y)
    sol = diffrax.diffeqsolve(term, diffrax.Euler(), t0=0.0, t1=1.0, dt0=0.25,
                              y0=jnp.array(1.0), saveat=diffrax.SaveAt(ts=jnp.array([0.5, 1.0])))
    assert abs(float(sol.ys[-1]) - 0.75**4) < 1e-6


def test_diffrax_adaptive():
    diffrax = pytest.importorskip("diffrax")
    term = diffrax.ODETerm(lambda t, y, args: -y)
    sol = diffrax.diffeqsolve(term, diffrax.Tsit5(), t0=0.0, t1=1.0, dt0=0.1,
                              y0=jnp.array(1.0),
                              stepsize_controller=diffrax.PIDController(rtol=1e-4, atol=1e-6))
    assert abs(float(sol.ys[-1]) - float(jnp.exp(-1.0))) < 1e-3


def test_control_unbuffered_while_loop():
    eqxi = pytest.importorskip("equinox.internal")
    if not hasattr(eqxi, "while_loop"):
        pytest.skip("this equinox has no equinox.internal.while_loop")
    out = eqxi.while_loop(lambda c: c < 3, lambda c: c + 1, 0, max_steps=3, kind="checkpointed")
    assert int(out) == 3


def test_control_diffrax_constant_step_t1():
    diffrax = pytest.importorskip("diffrax")
    term = diffrax.ODETerm(lambda t, y, args: -y)
    sol = diffrax.diffeqsolve(term, diffrax.Euler(), t0=0.0, t1=1.0, dt0=0.25,
                              y0=jnp.array(1.0))
    assert abs(float(sol.ys[-1]) - 0.75**4) < 1e-6


def test_filter_jit_process_exits_cleanly(child):
    pytest.importorskip("equinox")
    run = child("import equinox as eqx, jax.numpy as jnp; "
                "print(eqx.filter_jit(lambda x: x * 2)(jnp.ones(2)).tolist())")
    if run.killed_by:
        tail = " | ".join(run.stderr.strip().splitlines()[-2:])
        raise ChildProcessError(f"interpreter killed by {run.killed_by} at exit after eqx.filter_jit: "
                                f"stdout={run.stdout.strip()!r} {tail}")
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "[2.0, 2.0]"

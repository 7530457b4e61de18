"""hashable-jaxpr-params-070: jax >= 0.7.0 rejects equinox's unhashable ``maybe_set`` params (equinox < 0.13.0).

Symptom
-------
On jax 0.7.0 with equinox 0.12.2, any write into an ``equinox.internal.while_loop``
buffer -- and so ``diffrax.diffeqsolve`` with ``SaveAt(ts=...)``, ``SaveAt(steps=True)``
or an adaptive step-size controller -- fails while tracing, with or without
``jit``/``vmap``::

    TypeError: As of JAX v0.7, parameters to jaxpr equations must have __hash__ and __eq__ methods. In a call to primitive maybe_set, the value of parameter kwargs was not hashable: {}

Plain ``eqx.filter_jit``, while loops without buffers, optimistix root finds and
diffrax solves that save only ``t1`` with a constant step work.

Cause
-----
jax 0.7.0 verifies that every equation parameter is hashable
(``partial_eval._verify_params_are_hashable``). equinox's buffer write primitive
``maybe_set_p`` carries its ``kwargs`` as a plain ``dict``. equinox 0.13.0 makes the
params hashable.

Affected / fixed (observed, CPU, Python 3.11)
---------------------------------------------
- affected: equinox 0.12.2 on jax 0.7.0 and 0.7.2 (all three affected tests).
- clean: equinox 0.13.0 on jax 0.7.0; equinox 0.13.2 on jax 0.7.2; equinox 0.12.x
  on jax <= 0.6.x (e.g. 0.12.1 on jax 0.4.38).
- equinox 0.12.0/0.12.1 do not import on jax >= 0.6.1 at all
  (``ModuleNotFoundError: No module named 'jaxlib.xla_extension'``), so in practice the
  affected equinox is 0.12.2.
- equinox 0.12.2 on jax 0.7.2 has a further, unrelated failure (seen in
  ``test_callback_error_deferral.py::test_optimistix_max_steps_raises_at_call``, optimistix
  0.0.10): ``TypeError: cannot create weak reference to 'Flatten' object``; not on jax 0.7.0.
- fix: upgrade equinox to >= 0.13.0 (>= 0.13.1 also refuses jax 0.7.0/0.7.1, below).

Installing it (uv 0.13.9, as of 2025-07-23 and without a cutoff): nothing needs
forcing. ``jax==0.7.0`` + ``equinox==0.12.2`` resolves, because equinox 0.12.2 and
0.13.0 declare only ``jax>=0.4.38``; the ``!=0.7.0,!=0.7.1`` exclusion starts with
equinox 0.13.1 (commit f1a3161, PR #1104) and optimistix 0.0.11. Unpinned, a resolver
given ``jax==0.7.0`` picks equinox 0.13.0 and optimistix 0.0.10. Only asking for
``equinox>=0.13.1`` with ``jax==0.7.0`` is unresolvable::

    Because equinox>=0.13.1 depends on one of:
        jax>=0.4.38,<0.7.0
        jax>0.7.1
    and you require jax==0.7.0, we can conclude that your requirements and equinox>=0.13.1 are incompatible.

Why 0.7.0/0.7.1 are excluded is a different bug (jax#30517, equinox#1084): heap
corruption. Observed here: with jax 0.7.0 (jaxlib 0.7.0), a plain ``python -c`` script
that has run one ``eqx.filter_jit`` function dies at interpreter exit with a segfault
(exit 139; 3 of 3 runs) or, after more work, ``double free or corruption`` /
``corrupted size vs. prev_size`` (SIGABRT, exit 134), with equinox 0.12.2 and 0.13.0
alike; importing equinox alone, or ``jax.jit`` without equinox, exits cleanly; jax
0.7.1 (equinox 0.13.0, 2 runs) and 0.7.2 are clean in the same check. Running this module under pytest, the process exited normally (rc 0/1).
``test_filter_jit_process_exits_cleanly`` documents it (a separate failure id).

Upstream
--------
- https://github.com/patrick-kidger/diffrax/issues/662 ("TypeError when using diffrax
  with JAX v0.7.0")
- https://github.com/patrick-kidger/equinox/issues/1084 (JAX 0.7.0 segfaults with Equinox)
- https://github.com/jax-ml/jax/issues/30517
- https://github.com/patrick-kidger/equinox/pull/1104 (exclude jax 0.7.0/0.7.1)

Differences from UPSTREAM.md
----------------------------
- "equinox and optimistix exclude jax 0.7.0 and 0.7.1": only equinox >= 0.13.1 and
  optimistix >= 0.0.11 do. equinox 0.12.2/0.13.0 and optimistix 0.0.10 install with
  jax 0.7.0 unforced, so this is a case-stage failure, not a resolve-stage one.
- The failure is not limited to jax 0.7.0: equinox 0.12.2 fails the same way on jax
  0.7.2.
"""

import signal
import subprocess
import sys

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


def test_filter_jit_process_exits_cleanly():
    # jax#30517 / equinox#1084: on jax 0.7.0 the interpreter crashes at exit after
    # running an eqx.filter_jit function. Checked in a child interpreter.
    pytest.importorskip("equinox")
    code = ("import equinox as eqx, jax.numpy as jnp; "
            "print(eqx.filter_jit(lambda x: x * 2)(jnp.ones(2)).tolist())")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    if proc.returncode < 0:
        name = signal.Signals(-proc.returncode).name
        tail = " | ".join(proc.stderr.strip().splitlines()[-2:])
        raise ChildProcessError(f"interpreter killed by {name} at exit after eqx.filter_jit: "
                                f"stdout={proc.stdout.strip()!r} {tail}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[2.0, 2.0]"

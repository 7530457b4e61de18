"""unmapped-aval-051: vmapping equinox's buffered while loops fails on jax >= 0.5.1 with equinox <= 0.11.11.

Symptom
-------
On jax 0.5.1+ with equinox <= 0.11.11, ``jax.vmap`` of anything that writes into an
``equinox.internal.while_loop`` buffer -- every loop kind (``lax``, ``bounded``,
``checkpointed``), and so ``jax.vmap`` of ``diffrax.diffeqsolve`` with
``SaveAt(ts=...)`` -- fails while tracing with::

    TypeError: no unmapping handler for 0 of type <class 'int'>

Unbatched loops, jitted or not, are fine.

Cause
-----
Buffer writes go through ``maybe_set_p``, a "vprim" (``equinox.internal.create_vprim``).
Its batched abstract evaluation called ``jax.core.unmapped_aval(axis_size, axis_name,
0, aval)``. jax 0.5.1 dropped the ``axis_name`` parameter:
``unmapped_aval(size, axis, aval, explicit_mesh_axis=None)``, so equinox's ``0`` lands
in the ``aval`` slot. equinox 0.11.12 (commit 645a77f, "Fix for JAX 0.5.1 (#959)")
calls the new signature on jax >= 0.5.1.

Affected / fixed (observed, CPU, Python 3.11)
---------------------------------------------
- affected: equinox 0.11.11 on jax 0.5.1 and 0.5.3.
- clean: equinox 0.11.11 on jax 0.5.0; equinox 0.11.12 on jax 0.5.1 and 0.5.3;
  equinox 0.12.x later.
- diffrax#612's trigger, ``jax.jacfwd`` through ``diffeqsolve`` with
  ``adjoint=diffrax.ForwardMode()`` and ``SaveAt(ts=...)`` (diffrax 0.7.0, jax 0.5.3),
  fails the same way with equinox 0.11.11 and passes with 0.11.12 (checked by hand,
  not a test here: ``jacfwd`` is vmap of jvp, i.e. the same batched buffer write).
- fix: upgrade equinox to >= 0.11.12. Workaround: pin jax <= 0.5.0.

Upstream
--------
- https://github.com/patrick-kidger/equinox/issues/959 ("TypeError: no unmapping handler
  for 0 of type <class 'int'>", equinox's own test_vprim / test_while_loop vmap tests)
- https://github.com/patrick-kidger/equinox/commit/645a77f03a885e5883d088530f95fcc4ec98048b
- https://github.com/patrick-kidger/diffrax/issues/612 (met through diffrax forward-mode
  autodiff; the reporter also saw it "on 0.11.12", which this suite does not reproduce)

Differences from UPSTREAM.md
----------------------------
- "unmapped_aval signature change" is jax's side; the user-visible trigger is vmap of
  an equinox buffered while loop (diffrax's saving), and it is not limited to jax
  0.5.1 exactly: every later jax keeps the new signature, so equinox <= 0.11.11 stays
  broken there (seen on 0.5.3). equinox 0.11.11 already requires jax >= 0.4.38.
"""

import jax
import jax.numpy as jnp
import pytest


def _fill(x, kind):
    eqxi = pytest.importorskip("equinox.internal")
    if not hasattr(eqxi, "while_loop"):
        pytest.skip("this equinox has no equinox.internal.while_loop")

    def cond(carry):
        return carry[0] < 3

    def body(carry):
        i, buf = carry
        return i + 1, buf.at[i].set(x * i)

    _, buf = eqxi.while_loop(cond, body, (0, jnp.zeros(3)), max_steps=3,
                             buffers=lambda carry: carry[1], kind=kind)
    return buf


# Two functions rather than one parametrized test, so that matrix rules can name each
# (on jax 0.4.27, for instance, only the checkpointed kind fails).
def _check_vmap(kind):
    out = jax.vmap(lambda x: _fill(x, kind))(jnp.array([1.0, 2.0]))
    assert out.tolist() == [[0.0, 1.0, 2.0], [0.0, 2.0, 4.0]]


def test_vmap_buffered_while_loop_lax():
    _check_vmap("lax")


def test_vmap_buffered_while_loop_checkpointed():
    _check_vmap("checkpointed")


def test_control_unbatched_buffered_while_loop():
    out = jax.jit(lambda x: _fill(x, "checkpointed"))(2.0)
    assert out.tolist() == [0.0, 2.0, 4.0]


def test_diffrax_vmap_saveat_ts():
    diffrax = pytest.importorskip("diffrax")

    def solve(y0):
        term = diffrax.ODETerm(lambda t, y, args: -y)
        sol = diffrax.diffeqsolve(term, diffrax.Euler(), t0=0.0, t1=1.0, dt0=0.25, y0=y0,
                                  saveat=diffrax.SaveAt(ts=jnp.array([0.5, 1.0])))
        return sol.ys

    ys = jax.vmap(solve)(jnp.array([1.0, 2.0]))
    assert ys.shape == (2, 2)
    assert abs(float(ys[1, 1]) - 2.0 * 0.75**4) < 1e-5

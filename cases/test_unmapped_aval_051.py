"""unmapped-aval-051: vmapping equinox's buffered while loops fails on jax >= 0.5.1 with equinox <= 0.11.11.

Rule in matrix.toml: unmapped-aval-051.

Symptom: ``jax.vmap`` of anything that writes into an ``equinox.internal.while_loop`` buffer --
every loop kind (``lax``, ``bounded``, ``checkpointed``), and so ``jax.vmap`` (or ``jacfwd``) of
``diffrax.diffeqsolve`` with ``SaveAt(ts=...)`` -- fails while tracing with::

    TypeError: no unmapping handler for 0 of type <class 'int'>

Unbatched loops, jitted or not, are fine.

Cause: buffer writes go through ``maybe_set_p``, a "vprim", whose batched abstract evaluation
called ``jax.core.unmapped_aval(axis_size, axis_name, 0, aval)``. jax 0.5.1 dropped the
``axis_name`` parameter, so equinox's ``0`` lands in the ``aval`` slot.

Fix: upgrade equinox to >= 0.11.12 (it calls the new signature).
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

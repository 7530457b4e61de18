"""hashable-slice-070: on Python < 3.12, equinox 0.13.0 buffer writes with a slice fail on jax >= 0.7.

Rule in matrix.toml: hashable-slice-070.

Symptom: inside ``equinox.internal.while_loop(..., buffers=...)`` (what diffrax/optimistix use
for saved outputs), writing a buffer through a slice, ``buf.at[1:3].set(...)``, fails while
tracing on jax >= 0.7.0 with equinox 0.13.0 under Python 3.11::

    TypeError: As of JAX v0.7, parameters to jaxpr equations must have __hash__ and __eq__
    methods. In a call to primitive maybe_set, the value of parameter i_static was not
    hashable: slice(1, 3, None)

Integer indices work, and so does everything on Python >= 3.12, where ``slice`` objects are
hashable (there the test skips: nothing to check).

Cause: jax 0.7.0 requires hashable equation params. equinox 0.13.0 made ``maybe_set``'s
``kwargs`` hashable (the hashable-jaxpr-params-070 fix) but still passed the static part of the
index, a raw ``slice``, as a param.

Fix: upgrade equinox to >= 0.13.1 (it wraps slices in a hashable ``_HashableSlice``).
"""

import jax.numpy as jnp
import pytest


def _while_loop():
    eqxi = pytest.importorskip("equinox.internal")
    if not hasattr(eqxi, "while_loop"):
        pytest.skip("this equinox has no equinox.internal.while_loop")
    return eqxi.while_loop


def test_buffer_write_through_slice():
    try:
        hash(slice(1, 3))
    except TypeError:
        pass
    else:
        pytest.skip("slice objects are hashable on this Python (3.12+): the bug cannot occur")
    while_loop = _while_loop()

    def body(carry):
        i, buf = carry
        return i + 1, buf.at[1:3].set(jnp.full(2, 5.0))

    _, buf = while_loop(lambda c: c[0] < 1, body, (0, jnp.zeros(4)), max_steps=2,
                        buffers=lambda c: c[1], kind="checkpointed")
    assert buf.tolist() == [0.0, 5.0, 5.0, 0.0]


def test_control_buffer_write_through_integer():
    while_loop = _while_loop()

    def body(carry):
        i, buf = carry
        return i + 1, buf.at[i].set(5.0)

    _, buf = while_loop(lambda c: c[0] < 2, body, (0, jnp.zeros(4)), max_steps=2,
                        buffers=lambda c: c[1], kind="checkpointed")
    assert buf.tolist() == [5.0, 5.0, 0.0, 0.0]

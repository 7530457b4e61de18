"""error-if-after-clean-call: on jax >= 0.7.2 an error after a clean call of the same jitted function escapes equinox.

Rule in matrix.toml: error-if-after-clean-call (which also covers jax 0.4.13 with equinox
>= 0.11.6, where the same test fails with "Generated function failed: CpuCallback error").

Symptom: ``eqx.error_if`` inside ``eqx.filter_jit`` raises ``EquinoxRuntimeError`` with the
user's message on a first call, but once the function has run cleanly an erroring call raises::

    ValueError: INTERNAL: CpuCallback error calling callback: Traceback (most recent call last):
    ...
    An error occurred during the runtime of your JAX program! Unfortunately you do not
    appear to be using `equinox.filter_jit` ...

Cause: from jax 0.7.2 a host-callback error raised through the C++ jit fast path (any call of
an already-compiled function) is a plain ``ValueError``; the first, Python-path call still
raises ``JaxRuntimeError``, the only type equinox's ``filter_jit`` translated.

Fix: upgrade equinox to >= 0.13.3.
"""

import pytest

USER_MSG = "error-if-after-clean-call: x must be non-positive"
FALLBACK_TEXT = "Unfortunately you do not appear to be using"


def _error_if():
    eqx = pytest.importorskip("equinox")
    if hasattr(eqx, "error_if"):
        return eqx, eqx.error_if
    from equinox.internal import error_if  # equinox 0.10.x

    return eqx, error_if


def _expect_user_error(thunk):
    """Correct: `thunk()` raises an error carrying USER_MSG, not equinox's fallback text."""
    import jax

    try:
        jax.block_until_ready(thunk())
    except Exception as e:
        if USER_MSG not in str(e) or FALLBACK_TEXT in str(e):
            raise  # the wrong error: let it propagate as is
        return
    pytest.fail("no error raised although the error_if condition holds")


def _filter_jitted():
    eqx, error_if = _error_if()

    @eqx.filter_jit
    def f(x):
        return error_if(x, x > 0, USER_MSG)

    return f


def test_error_if_after_clean_call():
    import jax.numpy as jnp

    f = _filter_jitted()
    assert float(f(jnp.array(-1.0))) == -1.0  # clean call: compiles, caches
    try:
        _expect_user_error(lambda: f(jnp.array(1.0)))
    finally:
        f(jnp.array(-1.0)).block_until_ready()  # leave a clean runtime token behind


def test_control_error_if_on_first_call():
    import jax.numpy as jnp

    f = _filter_jitted()
    try:
        _expect_user_error(lambda: f(jnp.array(1.0)))
    finally:
        f(jnp.array(-1.0)).block_until_ready()


def test_control_clean_calls():
    import jax.numpy as jnp

    f = _filter_jitted()
    assert [float(f(jnp.array(v))) for v in (-1.0, -2.0)] == [-1.0, -2.0]

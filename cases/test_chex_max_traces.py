"""chex-max-traces: ``chex.assert_max_traces`` counts nothing around (or, with static-only arguments, inside) ``eqx.filter_jit``.

Rule in matrix.toml: chex-max-traces (advisory: an interaction seen on every release, not a
version bug). The two affected tests assert what a user expects, so they are ``reproduced``
everywhere; the day chex does count there, the rule turns ``stale``. The controls pin the
orderings that behave as documented.

Symptom: ``eqx.filter_jit(chex.assert_max_traces(f, n=1))`` called as ``f(2.0 * i, i)`` in a
loop retraces on every call and chex never complains; ``chex.assert_max_traces(eqx.filter_jit(f))``
is silent too (with ``jax.jit`` that ordering raises "must not wrap JAX-transformed function").

Cause: chex counts a trace only when the wrapped function's arguments contain tracers.
``filter_jit`` makes every non-array argument static: around it, chex sees only concrete
arrays; inside it, a call whose arguments are all Python scalars reaches chex without a single
tracer (with one array argument present, every retrace is counted, static-caused ones too).
chex's wrap-time ordering check does not recognise equinox's ``_JitWrapper``.

Fix: use ``eqx.debug.assert_max_traces`` (equinox >= 0.11.2) inside ``eqx.filter_jit``.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import pytest


def _has_eqx_assert_max_traces():
    debug = getattr(eqx, "debug", None)
    return debug is not None and hasattr(debug, "assert_max_traces")


def _chex_missed(what: str, traces: int) -> None:
    pytest.fail(f"chex.assert_max_traces(n=1) counted nothing: {what} traced {traces} times "
                "and no AssertionError was raised")


def test_chex_outside_filter_jit_catches_retrace():
    chex = pytest.importorskip("chex")
    chex.clear_trace_counter()
    traces = []

    def f(x, flag):
        traces.append(None)
        return x + 1 if flag else x - 1

    g = chex.assert_max_traces(eqx.filter_jit(f), n=1)  # no wrap-time ValueError
    try:
        g(jnp.ones(2), True)
        g(jnp.ones(3), True)  # retrace: new shape
        g(jnp.ones(2), False)  # retrace: new static value
    except AssertionError as e:
        assert "traced > 1 times" in str(e)
        return
    assert len(traces) == 3  # three real traces happened...
    _chex_missed("chex.assert_max_traces(eqx.filter_jit(f))", len(traces))  # ...none reported


def test_chex_inside_filter_jit_catches_static_retrace():
    # The upstream example: every argument is a Python scalar, so filter_jit makes
    # them all static, chex never sees a tracer, and each call retraces silently.
    chex = pytest.importorskip("chex")
    chex.clear_trace_counter()
    traces = []

    def f(x, i):
        traces.append(None)
        return x * 2

    g = eqx.filter_jit(chex.assert_max_traces(f, n=1))
    try:
        for i in range(3):
            assert float(g(2.0 * i, i)) == 4.0 * i
    except AssertionError as e:
        assert "traced > 1 times" in str(e)
        return
    assert len(traces) == 3
    _chex_missed("eqx.filter_jit(chex.assert_max_traces(f)) with only static arguments", len(traces))


def test_control_chex_inside_filter_jit_counts_retraces_with_array_arg():
    # With an array argument present, chex does count a retrace caused only by a
    # changed static argument.
    chex = pytest.importorskip("chex")
    chex.clear_trace_counter()

    def f(x, flag):
        return x + 1 if flag else x - 1

    g = eqx.filter_jit(chex.assert_max_traces(f, n=1))
    g(jnp.ones(2), True)
    g(jnp.ones(2), True)  # cache hit, not a trace
    with pytest.raises(AssertionError, match=r"is traced > 1 times"):
        g(jnp.ones(2), False)


def test_control_chex_around_jax_jit_rejected_at_wrap_time():
    chex = pytest.importorskip("chex")
    with pytest.raises(ValueError, match=r"must not wrap JAX-transformed function"):
        chex.assert_max_traces(jax.jit(lambda x: x + 1), n=1)


def test_control_chex_inside_jax_jit():
    # chex's documented ordering with plain jax.jit works as intended.
    chex = pytest.importorskip("chex")
    chex.clear_trace_counter()

    def f(x):
        return x + 1

    g = jax.jit(chex.assert_max_traces(f, n=1))
    g(jnp.ones(2))
    g(jnp.ones(2))
    with pytest.raises(AssertionError, match=r"is traced > 1 times"):
        g(jnp.ones(3))


def test_control_eqx_debug_assert_max_traces():
    if not _has_eqx_assert_max_traces():
        pytest.skip("eqx.debug.assert_max_traces needs equinox >= 0.11.2")

    @eqx.filter_jit
    @eqx.debug.assert_max_traces(max_traces=1)
    def f(x, i):
        return x * 2

    assert float(f(0.0, 0)) == 0.0
    assert float(f(0.0, 0)) == 0.0  # cache hit
    # The upstream example's retrace (all arguments static) is caught.
    with pytest.raises(RuntimeError, match=r"can only be traced 1 times"):
        f(2.0, 1)

"""chex-max-traces: `chex.assert_max_traces` combined with `eqx.filter_jit`.

This is an *interaction*, not a version bug: it reproduces on every release seen.
The two affected tests assert what a user expects (chex catches the retrace), so
they fail everywhere with the documented symptom ("chex counted nothing") and the
rule in matrix.toml (affects every chex) reports them ``reproduced``; the moment
either library changes so that chex does count, they pass and the rule is
reported ``stale``. The other orderings, which behave as documented, are
controls that pass everywhere and fail if that behaviour ever changes.

Symptom (upstream report): a function decorated

    @eqx.filter_jit
    @chex.assert_max_traces(1)
    def f(x, i): ...

    for i in range(10): f(2.0 * i, i)

recompiles on every call and chex never complains; with the decorators the
other way round chex raises at wrap time
``ValueError: @assert_max_traces must not wrap JAX-transformed function (@jit,
@vmap, @pmap etc.); change wrappers ordering.``

Cause: chex counts a trace only when the wrapped function's *arguments contain
tracers*. `eqx.filter_jit` traces array arguments and treats everything else
(Python ints/floats/bools) as static, so:

* `chex.assert_max_traces(eqx.filter_jit(f), n=1)`: the chex wrapper sits
  outside the JIT and only ever sees concrete arrays -> it counts nothing,
  silently, however often `f` retraces. (chex's wrap-time ordering check does
  not recognise an equinox `_JitWrapper`, so there is no ValueError either.)
* `eqx.filter_jit(chex.assert_max_traces(f, n=1))`: a trace is counted only if
  at least one argument is an array. When *all* arguments are Python scalars
  (the upstream example, `f(2.0 * i, i)`) every call retraces and nothing is
  counted. When an array argument is present, every retrace is counted,
  including one caused only by a changed static (non-array) argument.
* `chex.assert_max_traces(jax.jit(f), n=1)` raises the ordering ValueError at
  wrap time.
* `eqx.debug.assert_max_traces(max_traces=1)` placed inside `eqx.filter_jit`
  counts every trace, static-only ones included (equinox >= 0.11.2; the test
  skips on older equinox where it does not exist).

Observed (this suite's scratch envs): identical on jax 0.4.13 / equinox 0.10.6
/ chex 0.1.81, and on jax 0.4.29-0.4.38 / equinox 0.11.4-0.12.1 / chex 0.1.86.

Differences from UPSTREAM.md section 5: it says filter_jit(chex(f)) "misses
retraces caused only by non-array arguments". Observed: it misses them only
when *no* argument is an array (no tracers at all reach chex); with an array
argument present, a retrace caused only by a static argument *is* counted and
raises chex's AssertionError. Both halves are pinned below.

Upstream: https://github.com/patrick-kidger/equinox/issues/645
(answered as a usage question; closed; no code fix in either library).
Advice: use `eqx.debug.assert_max_traces` inside `eqx.filter_jit`.
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

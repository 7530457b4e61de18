"""callback-error-deferral: on CPU, runtime errors from host callbacks escape the jitted call.

Rule in matrix.toml: callback-error-deferral.

Symptom: when ``eqx.error_if`` (or diffrax's / optimistix's max_steps check) fails inside
``eqx.filter_jit``, the call returns normally. The error surfaces wherever the result is first
waited on, as a raw ``XlaRuntimeError: ... Buffer Definition Event: CpuCallback error ...``
carrying equinox's "Unfortunately you do not appear to be using `equinox.filter_jit`" text;
a result never touched is printed at exit ("Exception ignored in atexit callback").

Cause: jax 0.4.32 turned ``jax_cpu_enable_async_dispatch`` on by default, so an exception
raised in a host callback is attached to the output buffers instead of raised by the call;
equinox <= 0.11.7 only converted errors raised by the call. XLA's CPU client still runs cheap
programs synchronously, so each test here does enough work to be dispatched asynchronously.

Fix: upgrade equinox to >= 0.11.8 (it blocks on a marker inside its error handler).
"""

import pytest

# Big enough that XLA's CPU client dispatches asynchronously. Observed on jax 0.4.33: an 8x8
# matmul, a 256-element ODE state and a 16-element root find already defer; a 4x4 matmul, a
# 16-element state and a 4-element root find still raise at the call on every version.
MATMUL_N = 128
ODE_STATE_SIZE = 4096
ROOT_FIND_SIZE = 128

FALLBACK_TEXT = "Unfortunately you do not appear to be using"

_ERROR_IF_SRC = """
import equinox as eqx
try:
    error_if = eqx.error_if
except AttributeError:  # equinox 0.10.x
    from equinox.internal import error_if
"""


def _error_if():
    import equinox as eqx

    try:
        return eqx.error_if
    except AttributeError:  # equinox 0.10.x: only in equinox.internal
        from equinox.internal import error_if

        return error_if


def _replace_runtime_token():
    """Run a callback-carrying computation that succeeds.

    On affected versions the failed computation's runtime token keeps the error and
    jax's atexit hook would print it again when pytest exits; a later computation with
    a host callback replaces that token. Never raises.
    """
    try:
        import equinox as eqx
        import jax
        import jax.numpy as jnp

        error_if = _error_if()

        @eqx.filter_jit
        def ok(x):
            return error_if(x, x < 0, "never raised")

        jax.block_until_ready(ok(jnp.array(1.0)))
    except Exception:  # noqa: BLE001 - a cleanup that never raises: whatever failed, the case goes on
        pass


def _assert_raises_at_call(thunk, user_msg):
    """The correct behaviour: `thunk()` raises, at the call, an error with `user_msg`.

    Where the bug is present the call returns; the deferred error is then forced with
    `jax.block_until_ready` so that the real XlaRuntimeError propagates.
    """
    import jax

    try:
        out = thunk()
    except Exception as e:
        msg = str(e)
        if user_msg not in msg or FALLBACK_TEXT in msg:
            raise  # wrong error, or equinox's fallback text: let it propagate as is
        return
    try:
        jax.block_until_ready(out)  # bug present: this raises the deferred error
    finally:
        _replace_runtime_token()
    pytest.fail(
        f"expected an error containing {user_msg!r} at the call, but none was raised "
        "(not even when blocking on the result)"
    )


@pytest.mark.gpu
def test_error_if_raises_at_call_on_gpu():
    """On a GPU, dispatch is always asynchronous, whatever the size of the program: the same
    contract (raise at the call, with the user's message) must hold there. Observed: passes on an
    NVIDIA H100 (CUDA 13) with jax 0.11.2 + equinox 0.13.8 (2026-11-24); no GPU run yet of an
    equinox < 0.11.8, so no rule covers it (a failure on a GPU cell is a finding, not a known one).
    Without a GPU it is skipped with the reason."""
    import equinox as eqx
    import jax.numpy as jnp

    error_if = _error_if()

    @eqx.filter_jit
    def f(x):
        return error_if(x, x < 0, "callback-error-deferral: gpu")

    _assert_raises_at_call(lambda: f(jnp.array(-1.0)), "callback-error-deferral: gpu")


@pytest.mark.cpu
def test_control_cheap_computation_raises_at_call():
    """A scalar-only program runs synchronously on CPU: raises at the call everywhere."""
    import equinox as eqx
    import jax.numpy as jnp

    error_if = _error_if()

    @eqx.filter_jit
    def f(x):
        return error_if(x, x < 0, "callback-error-deferral: cheap control")

    _assert_raises_at_call(
        lambda: f(jnp.array(-1.0)), "callback-error-deferral: cheap control"
    )


@pytest.mark.cpu
def test_error_if_raises_at_call():
    import equinox as eqx
    import jax.numpy as jnp

    error_if = _error_if()

    @eqx.filter_jit
    def f(x, m):
        x = error_if(x, x < 0, "callback-error-deferral: x must be non-negative")
        return x, m @ m  # real work, so that CPU dispatch is asynchronous

    x = jnp.array(-1.0)
    m = jnp.ones((MATMUL_N, MATMUL_N))
    _assert_raises_at_call(
        lambda: f(x, m), "callback-error-deferral: x must be non-negative"
    )


@pytest.mark.cpu
def test_diffrax_max_steps_raises_at_call():
    diffrax = pytest.importorskip("diffrax")
    import jax.numpy as jnp

    term = diffrax.ODETerm(lambda t, y, args: -y)
    y0 = jnp.ones(ODE_STATE_SIZE)

    def solve():
        sol = diffrax.diffeqsolve(
            term,
            diffrax.Tsit5(),
            t0=0.0,
            t1=100.0,
            dt0=0.01,
            y0=y0,
            max_steps=4,
        )
        return sol.ys

    _assert_raises_at_call(solve, "maximum number of solver steps was reached")


@pytest.mark.cpu
def test_optimistix_max_steps_raises_at_call():
    optx = pytest.importorskip("optimistix")
    import jax.numpy as jnp

    def fn(y, args):
        return jnp.tanh(y) + y - 1.0

    y0 = jnp.full((ROOT_FIND_SIZE,), 10.0)

    def solve():
        solver = optx.Newton(rtol=1e-8, atol=1e-8)
        return optx.root_find(fn, solver, y0, max_steps=1).value

    _assert_raises_at_call(solve, "maximum number of steps was reached")


_END_OF_MAIN = "-- callback-error-deferral: end of main, interpreter exiting --"

_CHILD = (
    _ERROR_IF_SRC
    + """
import sys
import jax
import jax.numpy as jnp

if sys.argv[1] == "sync":
    try:
        jax.config.update("jax_cpu_enable_async_dispatch", False)
    except (AttributeError, KeyError):
        print("NO_ASYNC_DISPATCH_OPTION", flush=True)
        sys.exit(0)

@eqx.filter_jit
def f(x, m):
    x = error_if(x, x < 0, "callback-error-deferral: child error")
    return x, m @ m

try:
    out = f(jnp.array(-1.0), jnp.ones((%d, %d)))
except Exception as e:
    print("RAISED_AT_CALL", type(e).__name__, flush=True)
else:
    print("NOT_RAISED_AT_CALL", flush=True)
    # deliberately never touch `out`
# Everything on stderr after this line is printed while the interpreter exits.
print("%s", file=sys.stderr, flush=True)
"""
    % (MATMUL_N, MATMUL_N, _END_OF_MAIN)
)


def _run_child(child, mode):
    # jax_cpu_enable_async_dispatch is read only when the CPU client is created (no environment
    # variable sets it), and this process has computed already: a fresh interpreter it is.
    return child(_CHILD, mode, env={"JAX_PLATFORMS": "cpu"}, timeout=120)


def _check_child(proc):
    stdout, stderr = proc.stdout, proc.stderr
    raised = "RAISED_AT_CALL" in stdout.split()
    finished = _END_OF_MAIN in stderr
    # Only what is printed at interpreter exit counts: equinox <= 0.11.4 also logs
    # "jax.pure_callback failed" + traceback during the call, even where it raises.
    at_exit = stderr.split(_END_OF_MAIN, 1)[1] if finished else stderr
    noisy = (
        "Exception ignored" in at_exit
        or "callback-error-deferral: child error" in at_exit
        or "CpuCallback error" in at_exit
    )
    if raised and finished and not noisy and proc.returncode == 0:
        return
    pytest.fail(
        "child process: error "
        + ("raised" if raised else "NOT raised")
        + f" at the call; exit code {proc.returncode}; main finished: {finished}; "
        + f"error printed at exit: {noisy}."
        + f"\n--- child stdout ---\n{stdout[-2000:]}"
        + f"\n--- child stderr at exit ---\n{at_exit[-6000:]}",
        pytrace=False,
    )


@pytest.mark.cpu
def test_at_exit_nothing_printed(child):
    """Call the erroring function in a child, never touch the result, let it exit.

    Correct: the error raises at the call and nothing about it is printed at exit.
    Where the bug is present the call returns and jax's atexit hook prints
    "Exception ignored in atexit callback ... CpuCallback error ..." (exit code 0).
    """
    _check_child(_run_child(child, "async"))


@pytest.mark.cpu
def test_control_sync_dispatch_raises_at_call(child):
    """With jax_cpu_enable_async_dispatch=False the error raises at the call everywhere.

    The option is read when the CPU client is created, so it is set in a fresh child
    process before any computation.
    """
    proc = _run_child(child, "sync")
    if "NO_ASYNC_DISPATCH_OPTION" in proc.stdout:
        pytest.skip("this jax has no jax_cpu_enable_async_dispatch option")
    _check_child(proc)

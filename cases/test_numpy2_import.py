"""numpy2-import / numpy2-jaxlib-abi: old jax and jaxlib under NumPy 2.

Rules in matrix.toml: numpy2-import (jax <= 0.4.14 cannot be imported; stage "import") and
numpy2-jaxlib-abi (jaxlib < 0.4.26 imports, then breaks at run time). Neither declared an
upper bound on numpy before NumPy 2.0 existed, so upgrading numpy alone lands here.

Symptom: on jax <= 0.4.14 ``import jax`` raises, from jax's own ``jax/_src/dtypes.py``:
``AttributeError: `np.issubsctype` was removed in the NumPy 2.0 release.`` On jax/jaxlib
0.4.18-0.4.25 ``import jax`` only prints "A module that was compiled using NumPy 1.x cannot
be run in NumPy 2.x ..."; pure-jax code works, but every NumPy array sent to the device fails
(``XlaRuntimeError: INVALID_ARGUMENT: Unknown NumPy dtype ...`` or ``ValueError: Unable to
avoid copy while creating an array as requested``). The harness's import probe cannot catch
that: in such a cell nearly every case fails.

Cause: jax <= 0.4.14 calls ``np.issubsctype``, which NumPy 2 removed; jaxlib's extension up
to 0.4.25 was built against the NumPy 1.x ABI. jaxlib 0.4.26 is the first built for NumPy 2.

Fix: jax/jaxlib >= 0.4.26, or ``numpy<2`` with an older jax.
"""

import jax
import jax.numpy as jnp

_ABI_MESSAGE = "A module that was compiled using NumPy 1.x cannot be run in"
_IMPORT_JAX = "import jax, jax.numpy"


def test_import_jax(child):
    run = child(_IMPORT_JAX)
    if run.returncode != 0:
        run.raise_here("import jax")


def test_jaxlib_numpy_abi(child):
    run = child(_IMPORT_JAX)
    if _ABI_MESSAGE in run.stderr:
        start = run.stderr.index(_ABI_MESSAGE)
        raise ImportError(" ".join(run.stderr[start:start + 400].split()))


def test_numpy_array_to_device():
    import numpy as np

    out = jnp.asarray(np.arange(4, dtype=np.int32)) + 1
    assert out.tolist() == [1, 2, 3, 4]


def test_jit_numpy_argument():
    import numpy as np

    out = jax.jit(lambda x: x * 2)(np.ones(2, np.float32))
    assert out.tolist() == [2.0, 2.0]


def test_random_normal():
    out = jax.random.normal(jax.random.PRNGKey(0), (2,))
    assert out.shape == (2,)


def test_control_jnp_arange():
    import numpy as np

    out = jnp.arange(3.0).sum()
    assert float(np.asarray(out)) == 3.0

"""numpy2-import: old jax / jaxlib under NumPy 2 (jax <= 0.4.14 cannot import; jaxlib < 0.4.26 breaks at run time).

Neither jax nor jaxlib declared an upper bound on numpy before NumPy 2.0 existed, so
upgrading numpy alone (or resolving an old jax pin with today's dependencies) lands
here. Two different failures, split by version:

1. jax <= 0.4.14 (installable: 0.4.13 and 0.4.14, both with jaxlib 0.4.13):
   ``import jax`` raises, from ``jax/_src/dtypes.py`` (``issubsctype = np.issubsctype``
   at module level)::

       AttributeError: `np.issubsctype` was removed in the NumPy 2.0 release. Use `np.issubdtype` instead.

   It is *jax* that fails here, not jaxlib (jaxlib's NumPy-1.x ABI warning below is
   printed first, but the exception comes from jax's own Python code).

2. jax 0.4.18-0.4.25 with jaxlib 0.4.18-0.4.25 (checked 0.4.18, 0.4.20, 0.4.23, 0.4.25):
   ``import jax`` *succeeds* but prints, without raising::

       A module that was compiled using NumPy 1.x cannot be run in
       NumPy 2.1.1 as it may crash. ...
       AttributeError: _ARRAY_API not found

   (``jaxlib/xla_extension`` was built against NumPy 1.x). Pure-jax code such as
   ``jnp.arange(3.0).sum()`` then works, but every transfer of a NumPy array to the
   device fails -- ``jnp.asarray(np_array)``, passing NumPy arrays to a jitted function
   or to ``grad``::

       XlaRuntimeError: INVALID_ARGUMENT: Unknown NumPy dtype dtype('float32') char f kind f itemsize 0

   and ``jax.random.normal(jax.random.PRNGKey(0), ...)`` or ``float(jnp.array(1.5))``::

       ValueError: Unable to avoid copy while creating an array as requested.

   Here it is *jaxlib* that is incompatible. Because import works, the harness's
   import probe does not catch it: such a cell would run, and nearly every case in
   the suite would fail.

jaxlib 0.4.26 is the first built against NumPy 2 (changelog: "JAX now supports NumPy
2.0"), and jax 0.4.26 with jaxlib 0.4.26 passes every test below; so do 0.4.27 and
0.4.28. jax 0.4.15-0.4.17 need jaxlib 0.4.14-0.4.17, which have no PyPI wheels, and
jax 0.4.17 refuses jaxlib 0.4.18 ("jaxlib version 0.4.18 is newer than and
incompatible with jax version 0.4.17"), so they cannot be tested from PyPI.

Observed (CPU, Python 3.11, numpy 2.1.1, resolved as of 2024-09-15 with numpy>=2):
- jax 0.4.13 / 0.4.14 (jaxlib 0.4.13): import fails (AttributeError, above).
- jax 0.4.18, 0.4.20, 0.4.23, 0.4.25: imports; ABI message; transfers fail (above).
- jax 0.4.26, 0.4.27, 0.4.28: clean.
- fix: jax/jaxlib >= 0.4.26, or ``numpy<2`` for older jax.

Upstream
--------
- https://github.com/jax-ml/jax/issues/19246 (NumPy 2.0 support tracking issue)
- https://github.com/jax-ml/jax/blob/main/CHANGELOG.md (jaxlib 0.4.26: "JAX now supports NumPy 2.0")

Differences from UPSTREAM.md and matrix.toml
--------------------------------------------
- The import failure covers jax <= 0.4.14 only, not jax < 0.4.26 (matrix.toml's
  current guess): jax 0.4.18-0.4.25 import under NumPy 2. What breaks there is jaxlib,
  at run time, with different errors -- a separate rule (``numpy2-jaxlib-abi``).
"""

import builtins
import subprocess
import sys

import jax
import jax.numpy as jnp

_ABI_MESSAGE = "A module that was compiled using NumPy 1.x cannot be run in"


def _child_import_jax():
    proc = subprocess.run([sys.executable, "-c", "import jax, jax.numpy"],
                          capture_output=True, text=True, timeout=120)
    return proc


def test_import_jax():
    proc = _child_import_jax()
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
        last = lines[-1] if lines else f"exit status {proc.returncode}"
        name, _, message = last.partition(": ")
        exc_type = getattr(builtins, name, None)
        if isinstance(exc_type, type) and issubclass(exc_type, BaseException):
            raise exc_type(message) from RuntimeError(proc.stderr[-4000:])
        raise ImportError(f"import jax failed in a child interpreter: {last}")


def test_jaxlib_numpy_abi():
    proc = _child_import_jax()
    if _ABI_MESSAGE in proc.stderr:
        start = proc.stderr.index(_ABI_MESSAGE)
        raise ImportError(" ".join(proc.stderr[start:start + 400].split()))


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

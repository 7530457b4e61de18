"""What of the process environment configures a test run: the one list every key and every shown
environment reads.

A test run inherits the caller's whole environment (run/runner.pytest_env). The ecosystem's own
variables change what the tests do (``JAX_ENABLE_X64``, ``XLA_FLAGS``, ``EQX_ON_ERROR``,
``HYPOTHESIS_PROFILE``, ``OMP_NUM_THREADS``, ``PYTHONHASHSEED`` …): a stored result is re-used only
under the same values (resultcache's side key, the crater's result cache), and their values are
shown as they are wherever an environment is shown (_util/redact). The package index variables
decide what installs: they are keyed too, but by a hash, never in clear (they may hold a token).
"""

from __future__ import annotations

import hashlib
import re

# a name is the ecosystem's when it is one of these, or one of these followed by "_" (JAX and PYTHON:
# any name they begin: JAXLIB_…, PYTHONHASHSEED, PYTHONPATH)
CONFIGURES = re.compile(r"^(JAX\w*|XLA|TF|TPU|CUDA|NVIDIA|ROCM|HIP|OMP|MKL|OPENBLAS|EQX|EQUINOX|JAXTYPING|"
                        r"DIFFRAX|OPTAX|FLAX|PYTHON\w*|PYTEST|HYPOTHESIS|NUMPY|NPY|LC|LANG|TZ|MPLBACKEND|KERAS)(_|$)")
# where packages come from: keyed by a hash only
INDEXES = ("UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_FIND_LINKS", "UV_INDEX", "UV_DEFAULT_INDEX",
           "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS")
# never passed on to a test run: the runner drops them (a caller that is itself a test or an xdist worker)
NOT_PASSED = ("PYTEST_ADDOPTS", "PYTEST_XDIST_", "PYTEST_CURRENT_")
OWN = "JAXCOMPAT_"  # jax-compat's own: the runner sets what the plugin reads


def passed(name: str) -> bool:
    """Whether a test run is given the caller's variable ``name``."""
    return not name.startswith(NOT_PASSED)


# what changes from one run or shell to the next and configures no test: left out of a key (every other
# variable is in it: a test may read any, ``SCIPY_ARRAY_API``, ``CHEX_…``, and a stale side is the worst
# answer; an unknown one costs a run, never a wrong verdict)
VOLATILE = re.compile(r"^(GITHUB_\w*|RUNNER_\w*|ACTIONS_\w*|CI|BUILD_\w*|JOB_\w*|HOSTNAME|HOST|PWD|OLDPWD|SHLVL|_|"
                      r"TERM\w*|COLORTERM|COLUMNS|LINES|SSH_\w*|DISPLAY|WAYLAND_\w*|XDG_\w*|DBUS_\w*|LS_COLORS|"
                      r"MAIL|USER|LOGNAME|HOME|SHELL|EDITOR|VISUAL|PAGER|LESS\w*|PS\d|PROMPT_COMMAND|"
                      r"HISTFILE|HISTSIZE|NOX_\w*|VIRTUAL_ENV_PROMPT|TMUX\w*|STY|WINDOW|SUDO_\w*|OTEL_\w*)$")


def configuring(environ: dict[str, str]) -> dict[str, str]:
    """The variables of ``environ`` that may configure a test run, as a key holds them: the ecosystem's
    (``CONFIGURES``) as they are; every other that is passed on and not ``VOLATILE`` as the SHA-256 of
    its value (an index's, a token's: never in clear)."""
    out = {}
    for name, value in sorted(environ.items()):
        if not passed(name) or name.startswith(OWN):
            continue
        if CONFIGURES.match(name):
            out[name] = value
        elif name in INDEXES or not VOLATILE.match(name):
            out[name] = "sha256:" + hashlib.sha256(value.encode()).hexdigest()
    return out

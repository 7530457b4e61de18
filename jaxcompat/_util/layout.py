"""Where jax-compat reads its data (matrix.toml, cases/, conftest.py, the pytest config) and
where it writes reports and keeps environments.

Two layouts, told apart by where this package lives:

- **the repository checkout**: ``jaxcompat/`` sits next to ``matrix.toml`` and ``cases/``. The
  data is the checkout; reports go to ``<checkout>/reports``, environments and caches to
  ``<checkout>/.jaxcompat`` (the nox sessions and CI), wherever the command is started from.
- **an installed wheel**: the build copies the data into ``jaxcompat/bundle/`` (pyproject.toml,
  ``[tool.hatch.build.targets.wheel.sources]``). Reports go to ``./reports`` of the current
  directory; environments and caches to the user's cache directory,
  ``$XDG_CACHE_HOME/jax-compat`` or ``~/.cache/jax-compat``.

``$JAXCOMPAT_STATE`` overrides the state folder in both; ``--reports``/``--state`` override both.
What lives where inside the state folder is said in ``statedir``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]  # the jaxcompat package (this file is in _util/)
BUNDLE = "bundle"  # the folder inside the package that an installed wheel carries the data in
STATE_ENV = "JAXCOMPAT_STATE"


@dataclass(frozen=True)
class Layout:
    root: Path  # holds matrix.toml, conftest.py, cases/ and the pytest config (pyproject.toml)
    bundled: bool  # True: the data bundled into an installed wheel; False: the repository checkout
    reports: Path  # default --reports
    state: Path  # default --state


def layout(package: Path = PACKAGE, cwd: Path | None = None, env: Mapping[str, str] | None = None,
           home: Path | None = None) -> Layout:
    env = os.environ if env is None else env
    bundle = package / BUNDLE
    override = env.get(STATE_ENV)
    if (bundle / "matrix.toml").is_file():
        cwd = Path.cwd() if cwd is None else cwd
        return Layout(root=bundle, bundled=True, reports=cwd / "reports",
                      state=Path(override) if override else user_cache(env, home) / "jax-compat")
    root = package.parent
    return Layout(root=root, bundled=False, reports=root / "reports",
                  state=Path(override) if override else root / ".jaxcompat")


def user_cache(env: Mapping[str, str], home: Path | None = None) -> Path:
    """The XDG cache directory: ``$XDG_CACHE_HOME`` if it is an absolute path, else ``~/.cache``."""
    xdg = env.get("XDG_CACHE_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg)
    return (Path.home() if home is None else home) / ".cache"


def command(session: str) -> str:
    """How a user runs ``session`` with the extra arguments that follow: the nox session in the
    checkout, the console script when installed (for hints in messages and issue bodies)."""
    return f"jax-compat {session}" if layout().bundled else f"nox -s {session} --"

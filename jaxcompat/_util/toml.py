"""The TOML reader on every supported Python: ``tomllib`` from 3.11, the ``tomli`` backport on 3.10
(pyproject.toml declares it for 3.10 only)."""

try:  # Python >= 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10 hosts
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = ["tomllib"]

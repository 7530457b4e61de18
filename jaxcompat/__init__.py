"""jax-compat: the mechanism behind the version-compatibility matrix (no jax import here)."""

__version__ = "0.1.0"

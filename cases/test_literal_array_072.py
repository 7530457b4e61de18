"""literal-array-072: jax >= 0.7.2 turns NumPy constants in jaxprs into LiteralArray/TypedNdArray.

Rules in matrix.toml: literal-array-072 (equinox) and literal-array-072-jaxtyping
(``test_jaxtyping_arraylike_admits_jaxpr_constant``).

Symptom: with equinox 0.13.0 on jax 0.7.2+, a closure-converted function that closes over a
NumPy array can no longer cross ``eqx.filter_jit`` (as diffrax/optimistix-style code does)::

    ValueError: Non-hashable static arguments are not supported. An error occurred while
    trying to hash an object of type <class 'tuple'>, (... LiteralArray([1., 2.], dtype=float32) ...

(``TypedNdArray`` from jax 0.8.0 on). ``eqx.is_array`` returns False for the constant, and
jaxtyping 0.3.2's ``Float[ArrayLike, ...]`` does not admit it either.

Cause: jax 0.7.2 stores a jaxpr's NumPy constants as the private ``LiteralArray`` (renamed
``TypedNdArray`` in 0.8.0): neither an ``np.ndarray`` nor a ``jax.Array``, and unhashable.
equinox partitions by ``is_array``, so the constant lands in the static (hashed) half.

Fix: upgrade equinox to >= 0.13.1, and jaxtyping to >= 0.3.3 on jax 0.7.2.
"""

import typing

import jax
import jax.numpy as jnp
import numpy as np
import pytest


def _numpy_const():
    c = np.array([1.0, 2.0], dtype=np.float32)
    return jax.make_jaxpr(lambda x: x * c)(jnp.float32(1.0)).consts[0]


def _closure_converted(c):
    eqx = pytest.importorskip("equinox")
    if not hasattr(eqx, "filter_closure_convert"):
        pytest.skip("this equinox has no filter_closure_convert")
    return eqx.filter_closure_convert(lambda x: x * c, jnp.ones(2))  # closes over `c`


def test_is_array_jaxpr_constant():
    eqx = pytest.importorskip("equinox")
    const = _numpy_const()
    assert eqx.is_array(const), f"eqx.is_array is False for a jaxpr constant of type {type(const).__name__}"


def test_filter_jit_closure_over_numpy_array():
    eqx = pytest.importorskip("equinox")
    f = _closure_converted(np.array([1.0, 2.0], dtype=np.float32))
    out = eqx.filter_jit(lambda f, x: f(x))(f, jnp.ones(2))
    assert out.tolist() == [1.0, 2.0]


def test_jaxtyping_arraylike_admits_jaxpr_constant():
    jaxtyping = pytest.importorskip("jaxtyping")
    const = _numpy_const()
    members = typing.get_args(jaxtyping.Float[jaxtyping.ArrayLike, "2"])
    assert any(isinstance(const, m) for m in members), (
        f"jaxtyping Float[ArrayLike, '2'] does not admit a jaxpr constant of type {type(const).__name__}")


def test_control_filter_jit_closure_over_jax_array():
    eqx = pytest.importorskip("equinox")
    f = _closure_converted(jnp.array([1.0, 2.0]))
    out = eqx.filter_jit(lambda f, x: f(x))(f, jnp.ones(2))
    assert out.tolist() == [1.0, 2.0]


def test_control_is_array_numpy():
    eqx = pytest.importorskip("equinox")
    assert eqx.is_array(np.ones(2)) and eqx.is_array(jnp.ones(2))

import equinox as eqx
import jax
import jax.numpy as jnp

import tinyproj


def test_call_shape(model):
    assert model(jnp.ones(3)).shape == (2,)


def test_grad_is_finite(model):
    x, y = jnp.ones((4, 3)), jnp.zeros((4, 2))
    grads = eqx.filter_grad(tinyproj.loss)(model, x, y)
    assert jnp.all(jnp.isfinite(grads.weight))


def test_jit_matches_eager(model):
    x = jnp.arange(3.0)
    assert jnp.allclose(eqx.filter_jit(model)(x), model(x))

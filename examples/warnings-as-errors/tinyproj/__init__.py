"""A tiny project on equinox: a linear model and its loss."""
import equinox as eqx
import jax
import jax.numpy as jnp


class Linear(eqx.Module):
    weight: jax.Array
    bias: jax.Array

    def __init__(self, n_in: int, n_out: int, key):
        wkey, _ = jax.random.split(key)
        self.weight = jax.random.normal(wkey, (n_out, n_in))
        self.bias = jnp.zeros(n_out)

    def __call__(self, x):
        return self.weight @ x + self.bias


def loss(model: Linear, x, y):
    return jnp.mean((jax.vmap(model)(x) - y) ** 2)

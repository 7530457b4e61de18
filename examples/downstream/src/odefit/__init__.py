"""Fit the decay rate of dy/dt = -k y with a small neural vector field (equinox + diffrax)."""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp


class Field(eqx.Module):
    layer: eqx.nn.Linear

    def __init__(self, key):
        self.layer = eqx.nn.Linear(1, 1, key=key)

    def __call__(self, t, y, args):
        return self.layer(y)


def solve(model, y0, t1=1.0):
    sol = diffrax.diffeqsolve(diffrax.ODETerm(model), diffrax.Tsit5(), t0=0.0, t1=t1, dt0=0.1,
                              y0=y0, saveat=diffrax.SaveAt(t1=True))
    return sol.ys[-1]


def loss(model, y0, target):
    return jnp.sum((solve(model, y0) - target) ** 2)


@eqx.filter_jit
def train_step(model, y0, target, lr=0.1):
    grads = eqx.filter_grad(loss)(model, y0, target)
    return jax.tree_util.tree_map(lambda p, g: p - lr * g, model, grads)


def half_life(k):
    """Time for y to halve under dy/dt = -k y."""
    return jnp.log(2.0) * k  # the project's own bug: should be log(2) / k

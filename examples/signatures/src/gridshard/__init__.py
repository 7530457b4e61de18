"""Fields on a device mesh, as a simulation code sets them up."""

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec


def mesh_1d(n: int = 1):
    return jax.make_mesh(axis_shapes=(n,), axis_names=("X",))


def as_field(values, dtype=jnp.float32):
    return jnp.array(values, dtype, False)  # no copy of what is already an array


def sharded(values, mesh):
    return jax.device_put(as_field(values), NamedSharding(mesh, PartitionSpec("X")))


def total(values) -> float:
    return float(jnp.sum(jnp.asarray(values, dtype=jnp.float32)))

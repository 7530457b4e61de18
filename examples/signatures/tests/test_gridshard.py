import jax.numpy as jnp

import gridshard


def test_mesh_has_the_axis():
    assert gridshard.mesh_1d().axis_names == ("X",)


def test_field_keeps_values():
    assert gridshard.as_field([1.0, 2.0]).tolist() == [1.0, 2.0]


def test_sharded_sum():
    assert float(jnp.sum(gridshard.sharded([1.0, 2.0], gridshard.mesh_1d()))) == 3.0


def test_total_is_plain():
    assert gridshard.total([1, 2, 3]) == 6.0

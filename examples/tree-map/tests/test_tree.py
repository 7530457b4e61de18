import jax.numpy as jnp
import pytest

from treemapproj import scale, scale_util, total


@pytest.mark.parametrize("k", [2.0, 3.0])
def test_scale(k):
    assert float(total(scale({"a": jnp.ones(3), "b": [jnp.ones(2)]}, k))) == 5 * k


def test_scale_util():
    assert float(total(scale_util({"a": jnp.ones(3)}, 2.0))) == 6.0


def test_total():
    assert float(total([jnp.arange(4.0)])) == 6.0

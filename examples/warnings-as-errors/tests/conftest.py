import jax
import pytest

import tinyproj


@pytest.fixture
def model():
    return tinyproj.Linear(3, 2, jax.random.PRNGKey(0))

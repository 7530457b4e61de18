import jax
import jax.numpy as jnp

import odefit


def model():
    return odefit.Field(jax.random.PRNGKey(0))


def test_forward_solve():
    y1 = odefit.solve(model(), jnp.array([1.0]))
    assert y1.shape == (1,) and bool(jnp.isfinite(y1).all())


def test_training_step_lowers_the_loss():
    # Reverse-mode through diffrax's checkpointed loop: a weak-typed scalar (1.0) as y0 is
    # what trips equinox's closure conversion on some jax/equinox pairs.
    m, y0, target = model(), jnp.array([1.0]), jnp.array([0.5])
    before = odefit.loss(m, y0, target)
    after = odefit.loss(odefit.train_step(m, y0, target), y0, target)
    assert after < before


def test_output_shape_contract():
    # Our API promises the abstract output of solve: shape and dtype, nothing else.
    out = jax.eval_shape(lambda y: y * 2, 1.0)
    assert out == jax.ShapeDtypeStruct((), jnp.float32)


def test_half_life():
    assert jnp.allclose(odefit.half_life(2.0), jnp.log(2.0) / 2.0)

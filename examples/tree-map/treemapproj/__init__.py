"""A tiny project that calls ``jax.tree_map`` (deprecated in jax 0.4.26, removed in 0.6.0) and,
for contrast, ``jax.tree_util.tree_map`` (never deprecated)."""

import jax
import jax.numpy as jnp


def scale(tree, k):
    return jax.tree_map(lambda x: x * k, tree)


def scale_util(tree, k):
    return jax.tree_util.tree_map(lambda x: x * k, tree)


def total(tree):
    return sum(jnp.sum(x) for x in jax.tree_util.tree_leaves(tree))

"""The packages the suite knows: one list, imported everywhere (no third-party imports here)."""

# The ecosystem, in the order reports show it; each distribution imports under its own name.
ECOSYSTEM = ("jax", "jaxlib", "equinox", "diffrax", "optimistix", "lineax", "chex")
# Resolved to what a candidate allows when a user does not name them.
COMPANIONS = ("diffrax", "optimistix", "lineax", "chex")
# Whose code the deprecation watch covers (jax's warnings raised into these packages).
WATCHED = ("equinox", "diffrax", "optimistix", "lineax", "chex", "jaxtyping")
# Versions a report records for each cell.
KEY_DISTS = ECOSYSTEM + ("jaxtyping", "numpy", "scipy", "ml-dtypes", "pytest")

"""The packages the suite knows: one list, imported everywhere (no third-party imports here)."""

# The ecosystem, in the order reports show it; each distribution imports under its own name.
ECOSYSTEM = ("jax", "jaxlib", "equinox", "diffrax", "optimistix", "lineax", "chex")
# Resolved to what a candidate allows when a user does not name them.
COMPANIONS = ("diffrax", "optimistix", "lineax", "chex")
# The libraries built on jax (everything of the ecosystem but jax and jaxlib themselves).
DEPENDENTS = tuple(d for d in ECOSYSTEM if d not in ("jax", "jaxlib"))
# The libraries built on equinox: their releases have ranges of equinox and jax (compat.md).
ON_EQUINOX = ("diffrax", "optimistix", "lineax")
# Whose code the deprecation watch covers (jax's warnings raised into these packages).
WATCHED = ("equinox", "diffrax", "optimistix", "lineax", "chex", "jaxtyping")
# Versions a report records for each cell.
KEY_DISTS = ECOSYSTEM + ("jaxtyping", "numpy", "scipy", "ml-dtypes", "pytest")
# How a case skipped for a library its environment lacks says so (the plugin writes it; check --env
# reads it back to name, by library, what it did not judge).
NOT_INSTALLED = "which this environment does not have installed"
# Set in a case run's environment: a case module that imports, at its top, a library of the ecosystem
# that is not installed there is skipped whole, that library named (check --env; a candidate whose
# added companions were all left out, which leaves out equinox too). The matrix's cells never set it.
SKIP_MISSING = "JAXCOMPAT_SKIP_MISSING"
IMPORTED = "ok"  # the import probe's word for a module that imported (else: its traceback)
IMPORT_FAILED = "error"  # a stored probe's word (learned.json's `tried`) for a module that did not

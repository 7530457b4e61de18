"""Root conftest: the jax-compat pytest plugin (backend markers, raw result recording).

It must stay importable without jax: the harness's own tests load it too.
"""

pytest_plugins = ("jaxcompat.plugin.pytest_plugin",)

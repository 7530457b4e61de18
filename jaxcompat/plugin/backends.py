"""Backends: what the names mean, which marker runs where, and which backend an environment has.

    cpu     jax's CPU backend (jaxlib alone)
    cuda12  an NVIDIA GPU through CUDA 12: jax[cuda12] (jax-cuda12-plugin/-pjrt; a jaxlib
            ``+cuda12`` build for old jax)
    cuda13  an NVIDIA GPU through CUDA 13: jax[cuda13] (jax-cuda13-plugin/-pjrt, jax >= 0.7.0)
    rocm    an AMD GPU through ROCm (jax-rocm*-plugin; installed by hand, no jax extra builds it)
    tpu     a TPU (libtpu)

The ``gpu`` case marker runs on every CUDA and ROCm backend. An environment's backend is read from
what is installed (the plugin distributions, a jaxlib CUDA build) together with what its jax reports
(``jax.default_backend()``, the device's ``platform_version``): jax says *gpu* for CUDA and ROCm
alike, and the wheels say which.

Standard library only, Python 3.8+, no module-level state: it runs inside every cell (the pytest
plugin) and, as a script, in the interpreter of ``check --env``.
"""

from __future__ import annotations

import re

BACKENDS = ("cpu", "cuda12", "cuda13", "rocm", "tpu")
# The jax extra that installs each GPU backend into a built cell, and the first jax whose metadata
# declares it (read from PyPI with `uv pip compile`: jax 0.4.21 has no cuda12 extra, 0.4.22 has one
# but its plugin wheels start at 0.4.23; jax 0.6.2 has no cuda13 extra, 0.7.0 declares it, its
# plugin wheels start at 0.7.2, so 0.7.0/0.7.1 are `unresolvable` with the resolver's message).
# jax declares no rocm extra: ROCm is a backend of existing environments (`check --env`).
JAX_EXTRAS = {"cuda12": ("cuda12", "0.4.22"), "cuda13": ("cuda13", "0.7.0")}
MARKERS = ("cpu", "gpu", "tpu")


def marker(backend: str) -> str:
    """The case marker that runs on ``backend``: cpu, gpu (every CUDA/ROCm line) or tpu."""
    if backend.startswith(("cuda", "rocm")) or backend == "gpu":
        return "gpu"
    return backend


def installed_backend(distributions: dict[str, str]) -> str:
    """The backend the installed wheels are for (names PEP 503-normalised): a CUDA 13 plugin wins
    over a CUDA 12 one (jax tries jax_cuda13_plugin first), then ROCm, a jaxlib CUDA build, TPU."""
    names = set(distributions)
    for line in ("cuda13", "cuda12"):
        if any(n.startswith(f"jax-{line}-") for n in names):
            return line
    if any(re.match(r"jax-rocm\d*-", n) for n in names):
        return "rocm"
    m = re.search(r"\+cuda(\d+)", distributions.get("jaxlib", ""))
    if m:
        return f"cuda{m.group(1)}"
    if any(n.startswith("libtpu") for n in names):
        return "tpu"
    return "cpu"


def backend_of(platform: str, distributions: dict[str, str], platform_version: str = "") -> str:
    """The backend of an environment whose jax reports ``platform`` (``jax.default_backend()``):
    cpu and tpu as said; a GPU is the CUDA line or ROCm its wheels (or its client) name."""
    if platform in ("cpu", "tpu"):
        return platform
    if platform in ("gpu", "cuda", "rocm"):
        wheels = installed_backend(distributions)
        if marker(wheels) == "gpu":
            return wheels
        text = platform_version.lower()
        if platform == "rocm" or "rocm" in text:
            return "rocm"
        m = re.search(r"cuda\D*(\d+)", text)
        if m:
            return f"cuda{int(m.group(1)) // 1000 if int(m.group(1)) >= 1000 else m.group(1)}"
        return "gpu"  # a GPU whose CUDA/ROCm line nothing names
    return platform


def _cuda_version(v: int) -> str:
    return f"{v // 1000}.{v % 1000 // 10}"


def _cudnn_version(v: int) -> str:
    return f"{v // 10000}.{v % 10000 // 100}.{v % 100}" if v >= 10000 else f"{v // 1000}.{v % 1000 // 100}.{v % 100}"


def device_info() -> dict:
    """What jax reports about its default devices: platform, kind ("NVIDIA H100 80GB HBM3", "cpu"),
    count, the client's platform_version, a CUDA device's compute capability, and the CUDA
    runtime/driver and cuDNN versions the CUDA plugin reports. Keys jax cannot answer are left out."""
    import jax

    devices = jax.devices()
    d = devices[0]
    info: dict = {"platform": str(d.platform), "kind": str(getattr(d, "device_kind", "")), "count": len(devices)}
    try:
        info["platform_version"] = str(d.client.platform_version).strip()
    except Exception:  # noqa: BLE001 - older clients have no such attribute
        pass
    cc = getattr(d, "compute_capability", None)
    if cc:
        info["compute_capability"] = str(cc)
    if info["platform"] != "cpu":
        try:
            from jax._src.lib import cuda_versions  # None without a CUDA plugin
        except Exception:  # noqa: BLE001 - jax older than this module, or no CUDA at all
            cuda_versions = None
        for key, fn, fmt in (("cuda_runtime", "cuda_runtime_get_version", _cuda_version),
                             ("cuda_driver", "cuda_driver_get_version", _cuda_version),
                             ("cudnn", "cudnn_get_version", _cudnn_version)):
            try:
                info[key] = fmt(int(getattr(cuda_versions, fn)()))
            except Exception:  # noqa: BLE001 - not reported by this plugin
                pass
    return info


def describe_device(info: dict) -> str:
    """One line for a report: "1 x NVIDIA H100 80GB HBM3 (gpu; CUDA runtime 13.0, driver 13.0, cuDNN 9.12.0)"."""
    if not info:
        return ""
    extra = [info.get("platform", "")] if info.get("platform") != info.get("kind") else []
    extra += [f"compute capability {info['compute_capability']}"] if info.get("compute_capability") else []
    extra += [f"CUDA runtime {info['cuda_runtime']}"] if info.get("cuda_runtime") else []
    extra += [f"driver supports CUDA {info['cuda_driver']}"] if info.get("cuda_driver") else []
    extra += [f"cuDNN {info['cudnn']}"] if info.get("cudnn") else []
    extra += [info["platform_version"]] if info.get("platform_version") and info.get("platform") != "cpu" else []
    extra = [e for e in extra if e]
    return f"{info.get('count', '?')} x {info.get('kind') or '?'}" + (f" ({'; '.join(extra)})" if extra else "")

"""The import probe: what really imports in an environment (a release may need more than it
declares), and the real world that ``knowledge.learned.settle`` asks while it walks back to a
release that imports. ``learned`` holds the records and the decisions; the subprocesses, the
installs and the index reads are here.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import subprocess
import zipfile
from pathlib import Path

from packaging.version import Version

from jaxcompat._util.atomic import write_text
from jaxcompat._util.statedir import CacheDir, StateDir
from jaxcompat.env import envs, releases, resolution
from jaxcompat.knowledge.learned import World
from jaxcompat.model.matrix import Cell
from jaxcompat.plugin.packages import IMPORTED

PROBE_TIMEOUT_S = 300

_PROBE = f"""
import json, sys, traceback
out = {{}}
for m in sys.argv[1:]:
    try:
        __import__(m)
        out[m] = {IMPORTED!r}
    except BaseException as e:
        out[m] = "".join(traceback.format_exception(type(e), e, e.__traceback__))[-4000:]
print("JAXCOMPAT-PROBE " + json.dumps(out))
"""


def probe(env_python: str, modules: list[str], timeout_s: float = PROBE_TIMEOUT_S) -> dict[str, str]:
    """{module: IMPORTED | traceback}: the modules imported in order, in one interpreter of the env."""
    try:
        proc = subprocess.run([env_python, "-c", _PROBE, *modules], capture_output=True, text=True,
                              timeout=timeout_s, stdin=subprocess.DEVNULL, env={**os.environ, "JAX_PLATFORMS": "cpu"},
                              cwd=str(Path(env_python).parent))
    except subprocess.TimeoutExpired:
        return {m: f"the import probe timed out after {timeout_s:.0f} s" for m in modules}
    for line in proc.stdout.splitlines():
        if line.startswith("JAXCOMPAT-PROBE "):
            return json.loads(line[len("JAXCOMPAT-PROBE "):])
    why = f"the import probe died (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}"
    return {m: why for m in modules}


class ProbeCache:
    """Import results by lock (an environment installed from the same lock imports the same)."""

    def __init__(self, state_dir: Path):
        self.path = CacheDir(StateDir(state_dir).cache).import_probes
        try:
            self.data = json.loads(self.path.read_text()) if self.path.is_file() else {}
        except ValueError:
            self.data = {}

    @staticmethod
    def key(lock_text: str, modules: list[str]) -> str:
        return hashlib.sha256((lock_text + "\n" + ",".join(modules)).encode()).hexdigest()[:20]

    def get(self, lock_text: str, modules: list[str]) -> dict[str, str] | None:
        return self.data.get(self.key(lock_text, modules))

    def put(self, lock_text: str, modules: list[str], result: dict[str, str]) -> None:
        self.data[self.key(lock_text, modules)] = result
        write_text(self.path, json.dumps(self.data, indent=0, sort_keys=True))


def real_world(python_exe: str, harness: tuple[str, ...], state_dir: Path, compile_bytecode: bool) -> World:
    probes = ProbeCache(state_dir)

    def lock(cell: Cell) -> str:
        return envs.lock(cell, python_exe, cell.date, harness, StateDir(state_dir).envs, StateDir(state_dir).locks)[0]

    def imports(cell: Cell, lock_text: str, modules: list[str]) -> dict[str, str]:
        key_text = f"{python_exe}\n{lock_text}"
        cached = probes.get(key_text, modules)
        if cached is not None:
            return cached
        built = envs.install(cell, python_exe, lock_text, StateDir(state_dir).envs, compile_bytecode)
        got = probe(built.python, modules)
        if not any("probe timed out" in v or "probe died" in v for v in got.values()):
            probes.put(key_text, modules, got)
        return got

    def dates(dist: str) -> dict[str, str]:
        try:
            return {v: m["date"] for v, m in releases.release_info(dist, StateDir(state_dir).cache).items()}
        except releases.IndexError_:
            return {}

    def declared(dist: str, version: str, on: str) -> str:
        try:
            return str(resolution.declared(dist, version, on, StateDir(state_dir).cache))
        except Exception:  # noqa: BLE001 - the index could not tell: say nothing rather than guess
            return ""

    def defines(dist: str, name: str, after: str) -> str | None:
        """Read the wheels of the releases after ``after`` (oldest first) for a definition of
        ``name`` (``name =``, ``def name``, ``class name``, or an import ``as name``/``name,``)."""
        memo_path = CacheDir(StateDir(state_dir).cache).defines
        try:
            memo = json.loads(memo_path.read_text()) if memo_path.is_file() else {}
        except ValueError:
            memo = {}
        key = f"{dist}:{name}:{after}"
        if key not in memo:
            memo[key] = first_defining(dist, name, after, StateDir(state_dir).cache)
            write_text(memo_path, json.dumps(memo, indent=0, sort_keys=True))
        return memo[key]

    return World(lock, imports, dates, declared, defines)


def first_defining(dist: str, name: str, after: str, cache_dir: Path) -> str | None:
    """The first of the (six) releases of ``dist`` after ``after`` whose wheel defines ``name``."""
    pattern = re.compile(rf"(^\s*(class|def)\s+{name}\b|\b{name}\s*=|\bas\s+{name}\b|import\s+{name}\b)", re.M)
    try:
        later = [v for v in releases.versions(dist, cache_dir) if Version(v) > Version(after)]
    except releases.IndexError_:
        return None
    for v in later[:6]:
        try:
            fname, blob = resolution.download(dist, v, cache_dir)
        except Exception:  # noqa: BLE001 - cannot read the index: no refinement
            return None
        if not fname.endswith(".whl"):
            continue
        with zipfile.ZipFile(io.BytesIO(blob)) as z:
            if any(pattern.search(z.read(n).decode("utf-8", "replace")) for n in z.namelist()
                   if n.endswith(".py") and n.startswith(dist.replace("-", "_") + "/")):
                return v
    return None

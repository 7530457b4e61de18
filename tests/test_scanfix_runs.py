"""`scan --fix` proven by running it, over the real wheels: for every rename the rule table offers
from one jax release to another (0.4.26, 0.4.38, 0.6.2 and the timeline's newest, every pair
older → newer), a module that uses the old name (``import jax; _ = jax.core.Primitive``, the same
with the name's own module imported or aliased, ``from jax.core import Primitive``) is run in the
source release; each one that runs there is scanned with ``scan --from SRC --jax DST --fix``, and
every module the fix rewrote must run in the target release, and give ``_`` the same kind of
thing (no allowance for a fixed module that fails there, even as the unfixed one does: the import
of a module that moved whole, ``import jax.extend.ffi``, gone in 0.8.0, is rewritten too). A fix
that cannot be made so is withheld, and its finding says why.

Each release's modules run in one Python process: ``import jax`` once, then each module in a fork
of it (its own ``sys.modules`` from that point, as a fresh interpreter's after ``import jax``), so
one module's imports never make another's attribute chain reachable."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jaxcompat._util.uvbin import uv_bin
from jaxcompat.apihistory.apitimeline import DEPRECATED, PRESENT, Timeline
from jaxcompat.apihistory.scanlookup import is_rename
from jaxcompat.env.pythons import PythonMissing, find_python

ROOT = Path(__file__).resolve().parent.parent
NEWEST = Timeline.load().newest
# what each release's environment installs; Python 3.12 serves them all (jax >= 0.11 needs it;
# jaxlib 0.4.26 was built against numpy 1)
RELEASES = {
    "0.4.26": ["jax==0.4.26", "jaxlib==0.4.26", "numpy<2"],
    "0.4.38": ["jax[cpu]==0.4.38"],
    "0.6.2": ["jax[cpu]==0.6.2"],
    NEWEST: [f"jax[cpu]=={NEWEST}"],
}
PAIRS = [(a, b) for i, a in enumerate(RELEASES) for b in list(RELEASES)[i + 1:]]

# runs in each release's environment: {key: module text} on stdin, {key: [status, detail]} to argv[1]
RUNNER = r"""
import json, os, signal, sys, types, warnings
warnings.simplefilter("ignore")
import jax  # loaded once: each module runs in a fork, from what `import jax` loads and nothing more

def kind(x):  # what a rename keeps (a class may become a function: jax.core.set_current_trace did)
    return "module" if isinstance(x, types.ModuleType) else "callable" if callable(x) else "value"

out = {}
for key, code in json.load(sys.stdin).items():
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1); os.dup2(null, 2)
        signal.alarm(60)
        try:
            ns = {"__name__": "m"}
            exec(compile(code, key, "exec"), ns)
            res = ["ok", kind(ns.get("_"))]
        except BaseException as e:
            res = ["error", f"{type(e).__name__}: {e}"[:300]]
        os.write(w, json.dumps(res).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    out[key] = json.loads(data) if data else ["error", "the module's process died"]
with open(sys.argv[1], "w") as f:
    json.dump(out, f)
"""


def renames(tl: Timeline) -> list[tuple[str, str]]:
    """(old module, old name) of every name or module the timeline gives a plain-rename replacement."""
    out = [(mod, n) for mod, names in tl.names.items() for n, rec in names.items()
           if rec.get("replacement") and is_rename(f"{mod}.{n}", rec["replacement"])]
    for mod in tl.modules:
        st = tl.module(mod, tl.newest)
        if "." in mod and st.replacement and is_rename(mod, st.replacement):
            out.append(tuple(mod.rsplit(".", 1)))
    return sorted(set(out))


def uses(mod: str, name: str) -> dict[str, str]:
    """One-line modules that use ``mod.name``, in the ways code reaches a jax name."""
    old = f"{mod}.{name}"
    out = {"jax": f"import jax; _ = {old}\n", "jax-lines": f"import jax\n_ = {old}\n",
           "from": f"from {mod} import {name}; _ = {name}\n"}
    if mod != "jax":
        out["module"] = f"import {mod}; _ = {old}\n"
        out["alias"] = f"import {mod} as m; _ = m.{name}\n"
    return out


def run_all(python: Path, modules: dict[str, str], work: Path) -> dict[str, list[str]]:
    """Run each module in the environment of ``python``: {key: ["ok", what ``_`` is] or ["error", why]}."""
    if not modules:
        return {}
    result = work / f"run-{time.monotonic_ns()}.json"
    done = subprocess.run([str(python), "-c", RUNNER, str(result)], input=json.dumps(modules), text=True,
                          capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(result.read_text())


@pytest.fixture(scope="module")
def envs(tmp_path_factory) -> dict[str, Path]:
    try:
        py = find_python("3.12")
    except PythonMissing as e:
        pytest.skip(f"Python 3.12 is needed to run jax {NEWEST}: {e}")
    root = tmp_path_factory.mktemp("envs")
    out = {}
    for release, reqs in RELEASES.items():
        venv = root / release
        subprocess.run([uv_bin(), "venv", "-q", "-p", py, str(venv)], check=True)
        subprocess.run([uv_bin(), "pip", "install", "-q", "-p", str(venv / "bin" / "python"), *reqs], check=True)
        out[release] = venv / "bin" / "python"
    return out


@pytest.mark.integration
def test_every_fix_runs_in_the_target_release(envs, tmp_path):
    t0 = time.perf_counter()
    tl = Timeline.load()
    cases = {f"{mod}.{n}|{form}": code for mod, n in renames(tl) for form, code in uses(mod, n).items()}
    scanned = {pair: scan_fix(tl, cases, *pair, tmp_path) for pair in PAIRS}
    at_source = {src: run_all(envs[src], {k: cases[k] for (s, _), (fixed, withheld) in scanned.items()
                                          if s == src for k in [*fixed, *withheld]}, tmp_path)
                 for src in list(RELEASES)[:-1]}
    at_target = {dst: run_all(envs[dst], {new: new for (s, d), (fixed, _) in scanned.items() if d == dst
                                          for k, new in fixed.items() if at_source[s][k][0] == "ok"}, tmp_path)
                 for dst in list(RELEASES)[1:]}
    figures, broken, unexplained = [], [], []
    for (src, dst), (fixed, withheld) in scanned.items():
        ran = {k: new for k, new in fixed.items() if at_source[src][k][0] == "ok"}
        held = {k: why for k, why in withheld.items() if at_source[src][k][0] == "ok"}
        bad = len(broken)
        for key, new in ran.items():
            (status, detail), before = at_target[dst][new], at_source[src][key][1]
            if status != "ok" or detail != before:
                broken.append(f"{src}->{dst} {key}: {cases[key].strip()!r} -> {new.strip()!r}: {detail}"
                              + ("" if status != "ok" else f" (a {before} in {src})"))
        bad = len(broken) - bad
        unexplained += [f"{src}->{dst} {k}: {why}" for k, why in held.items() if not explains(why)]
        figures.append(f"{src} -> {dst}: {len(fixed)} modules fixed, {len(ran)} of them run at the source "
                       f"({len({k.split('|')[0] for k in ran})} renames): {len(ran) - bad} run in the target, "
                       f"{bad} fail; {len(held)} withheld, "
                       f"{sum(not explains(w) for w in held.values())} of them without saying why")
    summary = "\n".join(figures) + f"\n{time.perf_counter() - t0:.0f} s after the environments were made"
    print(summary)
    assert not broken, "\n".join(broken[:80]) + f"\n({len(broken)} in all)\n" + summary
    assert not unexplained, "\n".join(unexplained[:40]) + f"\n({len(unexplained)} in all)\n" + summary


def explains(message: str) -> bool:
    """Does the finding of a rename left unfixed say why?"""
    return "not fixed" in message or "was removed too" in message


def scan_fix(tl: Timeline, cases: dict[str, str], src: str, dst: str, work: Path):
    """``scan --from SRC --jax DST --fix`` over every module whose old name the timeline has at
    SRC: ({key: the fixed text}, {key: the message of a rename's finding left unfixed})."""
    folder = work / f"{src}-{dst}"
    folder.mkdir()
    files = {}
    for i, (key, code) in enumerate(sorted(cases.items())):
        mod, _, name = key.split("|")[0].rpartition(".")
        st = tl.module(f"{mod}.{name}", src) if tl.is_module(f"{mod}.{name}") else tl.name(mod, name, src)
        if st.state in (PRESENT, DEPRECATED, ""):
            files[key] = folder / f"m{i}.py"
            files[key].write_text(code)
    done = subprocess.run([sys.executable, "-m", "jaxcompat", "scan", str(folder), "--from", src, "--jax", dst,
                           "--fix", "--format", "json"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode in (0, 1), done.stderr
    left: dict[str, list[dict]] = {}
    for f in json.loads(done.stdout)["findings"]:
        left.setdefault(f["path"], []).append(f)
    fixed, withheld = {}, {}
    for key, path in files.items():
        text, old, here = path.read_text(), key.split("|")[0], left.get(str(path), [])
        if text != cases[key]:
            fixed[key] = text
            continue
        mine = [f for f in here if f["replacement"] and (f["name"] == old or old.startswith(f["name"] + "."))]
        if mine:
            withheld[key] = mine[0]["message"]
    return fixed, withheld

"""Benchmark the matrix against its floor, the naive setup, and a cold cache.

    nox -s bench                      # everything (naive and cold on a sample of cells)
    nox -s bench -- --naive-cells 16  # the naive baseline on every cell (slow)

Measures, on this machine, in one run, and writes reports/bench.json:
  floor      per cell: start Python, import jax/equinox/diffrax…, run every case body once
             (benchmarks/floor.py, no pytest); summed over cells / cores
  warm       `python -m jaxcompat matrix --no-cache` with environments, locks and uv cache
             warm: every case runs (the per-cell breakdown the cell reports record)
  nochange   the same matrix again with the result cache: nothing changed, nothing should run
  rule       one rule's text edited (in a copy of the tree): every verdict recomputed, no run
  module     one case module edited (in a copy of the tree): only that module runs, per cell
  check      a warm `check` of one combination, against that combination's own floor
  naive      virtualenv + pip, sequential, no reuse (fresh venv, pip install, pytest) per cell
  cold       empty uv cache and state in a temp dir: time and bytes downloaded
A timing is a measurement, never an assertion: nothing here fails on a slow machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jaxcompat._util.atomic import write_text  # noqa: E402
from jaxcompat._util.statedir import StateDir  # noqa: E402
from jaxcompat.knowledge.config import load  # noqa: E402


def sh(argv, env=None, cwd=ROOT, timeout=3600) -> tuple[float, subprocess.CompletedProcess]:
    t = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return round(time.perf_counter() - t, 3), proc


def rx_bytes() -> int:
    total = 0
    try:
        for line in Path("/proc/net/dev").read_text().splitlines()[2:]:
            name, data = line.split(":", 1)
            if name.strip() != "lo":
                total += int(data.split()[0])
    except OSError:
        return 0
    return total


def matrix_run(state: Path, reports: Path, cells: list[str], env=None, *options: str,
               matrix_file: Path | None = None) -> tuple[float, dict]:
    argv = [sys.executable, "-m", "jaxcompat", "matrix", "--state", str(state), "--reports", str(reports),
            *options, *(["--matrix", str(matrix_file)] if matrix_file else [])]
    for c in cells:
        argv += ["--cell", c]
    wall, proc = sh(argv, env=env)
    if proc.returncode not in (0, 1):
        print(proc.stdout[-2000:], proc.stderr[-2000:], file=sys.stderr)
    data = json.loads((reports / "matrix.json").read_text()) if (reports / "matrix.json").is_file() else {}
    return wall, {"wall_s": wall, "rc": proc.returncode, "cells": data.get("cells", [])}


def breakdown(cells: list[dict]) -> dict:
    keys = ("find_python_s", "resolve_s", "venv_s", "install_s", "pytest_s", "total_s")
    per_cell = {c["id"]: {k: c.get("timings", {}).get(k, 0.0) for k in keys} for c in cells}
    sums = {k: round(sum(v[k] for v in per_cell.values()), 3) for k in keys}
    return {"per_cell": per_cell, "sum": sums}


def floor(state: Path, cell_ids: list[str]) -> dict:
    per = {}
    for cid in cell_ids:
        py = StateDir(state).env(cid) / "bin" / "python"
        if not py.exists():
            continue
        wall, proc = sh([str(py), str(ROOT / "benchmarks" / "floor.py"), str(ROOT / "cases")],
                        env={"JAX_PLATFORMS": "cpu"})
        try:
            detail = json.loads(proc.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            detail = {"error": proc.stderr[-500:]}
        per[cid] = {"wall_s": wall, **detail}
    return per


def naive(matrix, state: Path, cell_ids: list[str], workdir: Path, no_cache: bool = False) -> dict:
    """virtualenv + pip + pytest, sequentially, nothing reused between cells (with ``no_cache``
    not even pip's wheel cache). Installs the cell's resolved lock — no resolution, the same
    environment — so this baseline is, if anything, generous to the naive way."""
    from jaxcompat.env.pythons import find_python

    per = {}
    for cid in cell_ids:
        lock = StateDir(state).env(cid) / "jaxcompat-lock.txt"
        if not lock.is_file():
            continue
        cell = matrix.cell(cid)
        venv = workdir / f"naive-{cid}"
        shutil.rmtree(venv, ignore_errors=True)
        t_venv, p1 = sh([find_python(cell.python), "-m", "venv", str(venv)])
        t_pip, p2 = sh([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "-r", str(lock)]
                       + (["--no-cache-dir"] if no_cache else []))
        t_test, p3 = sh([str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                         "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(ROOT), "cases"],
                        env={"JAX_PLATFORMS": "cpu"})
        per[cid] = {"venv_s": t_venv, "install_s": t_pip, "pytest_s": t_test,
                    "total_s": round(t_venv + t_pip + t_test, 3), "pip_rc": p2.returncode}
        shutil.rmtree(venv, ignore_errors=True)
    return per


def verdicts(cells: list[dict]) -> dict:
    """What a run concluded, per cell: status, cell outcome and every case's outcome and rule."""
    return {c["id"]: (c["status"], c.get("outcome"), c.get("failure"),
                      sorted((r["case"], r["outcome"], r.get("failure")) for r in c.get("results", [])))
            for c in cells}


def reused(cells: list[dict]) -> tuple[int, int]:
    rs = [r for c in cells for r in c.get("results", [])]
    return sum(1 for r in rs if r.get("reused_from")), len(rs)


def tree_copy(dest: Path) -> Path:
    """The parts of the checkout a run reads, copied (edits there leave the checkout alone)."""
    for name in ("matrix.toml", "conftest.py", "pyproject.toml"):
        shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(ROOT / "cases", dest / "cases", ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "jaxcompat").symlink_to(ROOT / "jaxcompat")  # the plugin, imported from the root
    return dest / "matrix.toml"


def edit_rule(matrix_file: Path) -> str:
    """Append a sentence to the first rule's fix: a knowledge edit that changes no verdict."""
    text = matrix_file.read_text()
    i = text.index("[[failure]]")
    j = text.index("\nfix = ", i)
    k = text.index("\n", j + 1)
    line = text[j + 1:k]
    edited = line[:-1] + ' (edited by the benchmark)"'
    matrix_file.write_text(text[:j + 1] + edited + text[k:])
    return edited


def incremental(state: Path, tmp: Path, module: str, warm_wall: float, warm_cells: list[dict],
                cells: list[str]) -> dict:
    """no change / one rule / one case module, each against the --no-cache warm run."""
    out: dict = {}
    base = verdicts(warm_cells)
    print("no-change re-run (result cache)…", flush=True)
    wall, run = matrix_run(state, tmp / "nochange", cells)
    n, total = reused(run["cells"])
    out["nochange"] = {"wall_s": wall, "rc": run["rc"], "reused": n, "results": total,
                       "verdicts_equal_no_cache_run": verdicts(run["cells"]) == base,
                       "warm_over_this": round(warm_wall / wall, 1)}
    print(f"  {wall:.1f} s, {n}/{total} re-used; warm/no-change = {out['nochange']['warm_over_this']}", flush=True)

    tree = tmp / "tree"
    tree.mkdir()
    matrix_file = tree_copy(tree)
    edited = edit_rule(matrix_file)
    print(f"one rule edited ({edited[:60]}…)…", flush=True)
    wall, run = matrix_run(state, tmp / "rule", cells, matrix_file=matrix_file)
    n, total = reused(run["cells"])
    seen = any(r.get("fix", "").endswith("(edited by the benchmark)") for c in run["cells"] for r in c["results"])
    out["rule"] = {"wall_s": wall, "rc": run["rc"], "reused": n, "results": total,
                   "verdicts_equal_no_cache_run": verdicts(run["cells"]) == base, "edited_fix_in_reports": seen,
                   "warm_over_this": round(warm_wall / wall, 1)}
    print(f"  {wall:.1f} s; verdicts equal: {out['rule']['verdicts_equal_no_cache_run']}; "
          f"warm/rule-edit = {out['rule']['warm_over_this']}", flush=True)

    path = tree / module
    path.write_text(path.read_text() + "\n# edited by the benchmark\n")
    print(f"one case module edited ({module})…", flush=True)
    wall, run = matrix_run(state, tmp / "module", cells, matrix_file=matrix_file)
    n, total = reused(run["cells"])
    all_s = sum(r["duration_s"] for c in warm_cells for r in c.get("results", []))
    mod_s = sum(r["duration_s"] for c in warm_cells for r in c.get("results", []) if r["case"].startswith(module))
    share = warm_wall * mod_s / all_s if all_s else 0.0
    ran = sum(1 for c in run["cells"] for r in c["results"] if not r.get("reused_from"))
    out["module"] = {"module": module, "wall_s": wall, "rc": run["rc"], "reused": n, "results": total,
                     "ran": ran, "module_share_of_warm_s": round(share, 3),
                     "target_s": round(share + 10, 3), "within_target": wall <= share + 10,
                     "verdicts_equal_no_cache_run": verdicts(run["cells"]) == base}
    print(f"  {wall:.1f} s ({ran} results run); the module's share of the warm run {share:.1f} s "
          f"(+10 s = {share + 10:.1f} s)", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--state", default=str(ROOT / ".jaxcompat"), help="state folder (environments, caches)")
    ap.add_argument("--naive-cells", type=int, default=3, help="cells to run the naive way (extrapolated)")
    ap.add_argument("--cold-cells", type=int, default=2, help="cells to install with an empty cache")
    ap.add_argument("--module", default="cases/test_weak_type_closure.py", help="the case module to edit")
    ap.add_argument("--cell", action="append", default=[], help="only these cells (ids or globs; a smoke test)")
    ap.add_argument("--warmup", action="store_true", help="a first run to build the environments (needed on a "
                    "fresh state folder: the --no-cache run must find them built)")
    ap.add_argument("--keep", metavar="DIR", help="keep the --no-cache run's reports there (a full matrix run)")
    ap.add_argument("--skip-naive", action="store_true")
    ap.add_argument("--skip-cold", action="store_true")
    ap.add_argument("--skip-floor", action="store_true")
    ap.add_argument("--skip-check", action="store_true")
    ap.add_argument("--check", default="jax==0.4.35 equinox==0.11.6", help="combination for the check timing")
    ap.add_argument("--only-naive", action="store_true",
                    help="measure only the naive setups and update an existing reports/bench.json")
    args = ap.parse_args()
    if args.only_naive:
        return only_naive(args)

    matrix = load(ROOT / "matrix.toml")
    state = Path(args.state)
    cores = os.cpu_count() or 1
    out: dict = {"machine": {"cores": cores, "python": sys.version.split()[0]},
                 "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    tmp = Path(tempfile.mkdtemp(prefix="jaxcompat-bench-"))
    try:
        if args.warmup:
            print("warming (a first matrix run: environments built)…", flush=True)
            matrix_run(state, tmp / "warmup", args.cell)
        print("warm matrix run, --no-cache…", flush=True)
        wall, warm = matrix_run(state, tmp / "warm", args.cell, None, "--no-cache")
        ran = [c["id"] for c in warm["cells"] if c["status"] == "ok"]
        out["warm"] = {"wall_s": wall, "rc": warm["rc"], "cells": len(warm["cells"]), "cells_ran": len(ran),
                       "no_cache": True, **breakdown(warm["cells"])}
        print(f"  {wall:.1f} s for {len(warm['cells'])} cells", flush=True)
        if args.keep:
            shutil.copytree(tmp / "warm", args.keep, dirs_exist_ok=True)
        out["ratios"] = {}
        out["incremental"] = incremental(state, tmp, args.module, wall, warm["cells"], args.cell)
        inc = out["incremental"]
        out["ratios"].update(
            {
                "no_cache_over_nochange": inc["nochange"]["warm_over_this"],
                "no_cache_over_rule_edit": inc["rule"]["warm_over_this"],
                "module_edit_s_over_target_s": round(inc["module"]["wall_s"] / inc["module"]["target_s"], 3),
            }
        )

        if not args.skip_floor:
            print("floor (bare import + case bodies per cell)…", flush=True)
            per = floor(state, ran)
            floor_sum = round(sum(v["wall_s"] for v in per.values()), 3)
            out["floor"] = {"per_cell": per, "sum_s": floor_sum, "cores": cores,
                            "floor_s": round(floor_sum / cores, 3)}
            out["ratios"]["warm_over_floor"] = round(wall / (floor_sum / cores), 3)
            print(f"  floor {floor_sum / cores:.1f} s (sum {floor_sum:.1f} s / {cores} cores); "
                  f"warm/floor = {out['ratios']['warm_over_floor']}", flush=True)

        if not args.skip_check:
            print(f"warm check: {args.check}…", flush=True)
            argv = [sys.executable, "-m", "jaxcompat", "check", "--state", str(state), "--no-cache",
                    "--reports", str(tmp / "check"), *args.check.split()]
            sh(argv)  # warm it
            check_wall, _ = sh(argv)
            check_data = json.loads((tmp / "check" / "check.json").read_text())
            check_floor = floor(state, [check_data["id"]]).get(check_data["id"], {}).get("wall_s")
            out["check"] = {"combination": args.check, "wall_s": check_wall, "floor_s": check_floor,
                            "over_floor": round(check_wall / check_floor, 3) if check_floor else None}
            print(f"  {check_wall:.1f} s vs floor {check_floor} s", flush=True)

        if not args.skip_naive:
            sample = ran[: args.naive_cells]
            print(f"naive setup (venv + pip + pytest, sequential) on {len(sample)} cell(s)…", flush=True)
            nv = naive(matrix, state, sample, tmp)
            measured = round(sum(v["total_s"] for v in nv.values()), 3)
            per_cell = measured / max(1, len(nv))
            extrapolated = round(per_cell * len(ran), 3)
            out["naive"] = {"per_cell": nv, "measured_cells": len(nv), "measured_s": measured,
                            "extrapolated_all_s": extrapolated,
                            "note": "sequential; extrapolated linearly from the measured cells"
                            if len(nv) < len(ran) else "all cells measured"}
            out["ratios"]["naive_over_warm"] = round(extrapolated / wall, 3)
            out["ratios"]["naive_over_nochange"] = round(extrapolated / inc["nochange"]["wall_s"], 1)
            print(f"  {measured:.1f} s for {len(nv)} cells → {extrapolated:.0f} s for {len(ran)}; "
                  f"naive/warm = {out['ratios']['naive_over_warm']}, "
                  f"naive/no-change = {out['ratios']['naive_over_nochange']}", flush=True)

        if not args.skip_cold:
            sample = [c for c in ran][: args.cold_cells]
            print(f"cold (empty uv cache) on {len(sample)} cell(s)…", flush=True)
            cache = tmp / "uv-cache"
            before = rx_bytes()
            cold_wall, cold = matrix_run(tmp / "cold-state", tmp / "cold", sample, env={"UV_CACHE_DIR": str(cache)})
            size = sum(f.stat().st_size for f in cache.rglob("*") if f.is_file()) if cache.exists() else 0
            out["cold"] = {"cells": sample, "wall_s": cold_wall, "rx_bytes": rx_bytes() - before,
                           "uv_cache_bytes": size, **breakdown(cold["cells"])}
            print(f"  {cold_wall:.1f} s, {(rx_bytes() - before) / 1e6:.0f} MB received", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    target = ROOT / "reports" / ("bench.json" if not args.cell else "bench-smoke.json")
    write_text(target, json.dumps(out, indent=2) + "\n")
    print(json.dumps(out["ratios"], indent=2))
    print(f"written: {target}")
    return 0


def only_naive(args) -> int:
    path = ROOT / "reports" / "bench.json"
    out = json.loads(path.read_text())
    matrix = load(ROOT / "matrix.toml")
    state = Path(args.state)
    ran = [c for c, v in out["warm"]["per_cell"].items() if v.get("pytest_s")]
    n_all = out["warm"].get("cells_ran", len(ran))  # cells that ran their cases, as in the full bench
    wall = out["warm"]["wall_s"]
    tmp = Path(tempfile.mkdtemp(prefix="jaxcompat-bench-"))
    try:
        for key, no_cache in (("naive", False), ("naive_no_cache", True)):
            sample = ran[: args.naive_cells]
            print(f"{key}: {len(sample)} cell(s)…", flush=True)
            nv = naive(matrix, state, sample, tmp, no_cache=no_cache)
            measured = round(sum(v["total_s"] for v in nv.values()), 3)
            extrapolated = round(measured / max(1, len(nv)) * n_all, 3)
            out[key] = {"per_cell": nv, "measured_cells": len(nv), "measured_s": measured,
                        "extrapolated_all_s": extrapolated, "pip_cache": not no_cache,
                        "note": "sequential; extrapolated linearly from the measured cells"}
            out["ratios"][f"{key}_over_warm"] = round(extrapolated / wall, 3)
            print(f"  {measured:.1f} s → {extrapolated:.0f} s for {n_all} cells; "
                  f"{key}/warm = {out['ratios'][f'{key}_over_warm']}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    write_text(path, json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

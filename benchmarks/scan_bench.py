"""How long `jax-compat scan` takes on a large tree of real jax code, beside `ruff check`.

The tree: the Python files of a real jax release (its own code is the densest user of jax names
there is), taken whole file by file until --lines lines (default 100,000), copied into a
temporary folder. Each command runs --runs times after one warm-up; the median wall time and
the median CPU time (user + sys) are printed, and the ratios scan/ruff when ruff is installed
(`pip install ruff`). On a shared machine quote the CPU figures: wall time there is mostly
waiting for a core.

    python benchmarks/scan_bench.py                      # jax 0.4.30 from PyPI (pip download)
    python benchmarks/scan_bench.py --wheel jax-0.4.30-py3-none-any.whl --jax 0.10.0
    python benchmarks/scan_bench.py --tree ../myproject  # any tree, as it is
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build_tree(wheel: Path, out: Path, lines: int) -> tuple[int, int]:
    n_lines = n_files = 0
    with zipfile.ZipFile(wheel) as z:
        for name in sorted(z.namelist()):
            if not name.endswith(".py") or n_lines >= lines:
                continue
            text = z.read(name).decode("utf-8", "replace")
            dest = out / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text, encoding="utf-8")
            n_lines += text.count("\n")
            n_files += 1
    return n_files, n_lines


def timed(cmd: list[str], runs: int) -> tuple[float, float]:
    """Median wall and median CPU (user + sys of the process and its children) seconds."""
    subprocess.run(cmd, capture_output=True, cwd=ROOT)  # warm-up (page cache, bytecode)
    wall, cpu = [], []
    for _ in range(runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, cwd=ROOT)
        wall.append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    return round(statistics.median(wall), 3), round(statistics.median(cpu), 3)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tree", help="scan this tree as it is (default: build one from a jax wheel)")
    p.add_argument("--wheel", help="the jax wheel to take the tree from (default: pip download jax==0.4.30)")
    p.add_argument("--lines", type=int, default=100_000)
    p.add_argument("--jax", default="0.10.0", help="the release scanned against")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--ruff", default=shutil.which("ruff"), help="the ruff to compare with (default: on PATH)")
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="scan-bench-"))
    try:
        if args.tree:
            tree = Path(args.tree)
            files = list(tree.rglob("*.py"))
            n_files, n_lines = len(files), sum(f.read_text(errors="replace").count("\n") for f in files)
        else:
            wheel = Path(args.wheel) if args.wheel else None
            if wheel is None:
                subprocess.run(
                    [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "jax==0.4.30", "-d", str(tmp)],
                    check=True,
                )
                wheel = next(tmp.glob("jax-*.whl"))
            tree = tmp / "tree"
            n_files, n_lines = build_tree(wheel, tree, args.lines)
        scan = [sys.executable, "-m", "jaxcompat", "scan", str(tree), "--jax", args.jax]
        result = {"files": n_files, "lines": n_lines, "jax": args.jax}
        findings = subprocess.run(scan + ["--format", "json"], capture_output=True, text=True, cwd=ROOT)
        if findings.returncode not in (0, 1) or not findings.stdout.startswith("{"):
            sys.exit(f"scan failed (exit {findings.returncode}):\n{findings.stderr[-2000:]}")
        result["findings"] = len(json.loads(findings.stdout)["findings"])
        result["scan_wall_s"], result["scan_cpu_s"] = timed(scan, args.runs)
        ruff = args.ruff
        if ruff:
            result["ruff_wall_s"], result["ruff_cpu_s"] = timed([ruff, "check", "--no-cache", "--quiet", str(tree)],
                                                                args.runs)
            result["scan_over_ruff_wall"] = round(result["scan_wall_s"] / result["ruff_wall_s"], 2)
            result["scan_over_ruff_cpu"] = round(result["scan_cpu_s"] / result["ruff_cpu_s"], 2)
        print(json.dumps(result, indent=2))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

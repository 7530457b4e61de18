"""Every report byte-identical before and after a change, on the inputs stored in the repository.

    python benchmarks/same_reports.py [--before REV] [--after REV] [--keep]

REV is a git revision or ``worktree`` (the current files: tracked and untracked, not ignored);
the defaults are ``--before main --after worktree``. Each revision's tree is extracted alone, and in it
that tree's own ``python -m jaxcompat`` (this interpreter, cwd and PYTHONPATH the tree, no network:
the proxies point nowhere and uv is offline) re-renders every report that can be rebuilt from what the
repository stores, into a folder of its own. Both revisions run at the same paths (one after the
other), so a path a report prints is the same on both sides. Nothing is normalized but the one clock
reading a rebuilt report holds (matrix.json's "generated", also in matrix.html): that string is taken
out of both sides, the rest compared, and the table says so. Each command's
standard output, standard error and exit status are kept beside the files it writes and compared too.
A file both sides hold byte for byte as the stored input it was copied from is an input, left out.

The families (what each re-renders, from what) are listed by ``FAMILIES``; those that cannot be rebuilt
offline are listed by ``NOT_COVERED`` with why, and printed under the table. Exit 0 when every file
is the same on both sides, 1 otherwise, 2 when a revision could not be extracted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOWHERE = "http://127.0.0.1:9"  # a proxy that refuses at once: any download fails, never hangs
SCAN_FORMATS = ("text", "json", "sarif", "github")
PINS_EVERY = 5  # pins renders one jax's row: every fifth of compat.json's rows (a command costs a second)
NOW = b"<now>"
# a command that did not render (the same crash on both sides is no evidence of the same reports)
CRASHES = (b"Traceback (most recent call last)", b"a bug of jax-compat", b"No module named")

NOT_COVERED = {
    "survey": "reports/survey.json/.md/.html: its raw observations (reports/survey/) are not committed, "
              "so `survey --report-only` has nothing to score",
    "survey edges": "reports/survey-edges.*: written from the same uncommitted observations",
    "compat": "reports/compat.json/.md: `compat` reads the release space from PyPI's listing "
              "(no cache of it is stored): offline it stops with `could not read https://pypi.org/pypi/jax/json`",
    "check (its own reports)": "check.json/.md/.xml/terminal of `check`: written only by running cells "
                               "(environments); the stored check runs are read by `report --compare` below",
    "bisect regions": "reports/unknown/region-*.json and tests/data/unknown/*.json regions: no command re-renders "
                      "a stored region; `bisect --from` runs its steps again (environments)",
    "bisect --commits": "reports/bisect-commits/*: needs the git mirrors and environments",
    "usertests-vs-pytest": "reports/usertests-vs-pytest/, reports/crater/*/vs-pytest/: "
                           "benchmarks/plain_pytest.py runs plain pytest in real environments",
    "scan of chex": "reports/scan-chex-0.1.86.md: chex's sdist is not stored (scan of the stored examples/ is covered)",
    "bench, latest": "reports/bench.json (timings), `latest` (tonight's nightly): runs, not renderings",
}


# ------------------------------------------------------------------------------------------- trees
def extract(rev: str, dest: Path, repo: Path = ROOT) -> None:
    """``rev``'s tree into ``dest``: ``git archive`` of a revision, or the worktree's files
    (tracked and untracked, not ignored, as they are now)."""
    dest.mkdir(parents=True)
    if rev == "worktree":
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                                cwd=repo, check=True, capture_output=True).stdout
        for name in filter(None, listed.decode().split("\0")):
            src = repo / name
            if src.is_file():  # a tracked file deleted in the worktree is not there
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / name)
        return
    archive = subprocess.run(["git", "archive", "--format=tar", rev], cwd=repo, capture_output=True)
    if archive.returncode:
        raise SystemExit(f"error: git archive {rev}: {archive.stderr.decode().strip()} (give a revision "
                         "git knows, or 'worktree')")
    tar = dest.parent / "tree.tar"
    tar.write_bytes(archive.stdout)
    with tarfile.open(tar) as t:
        t.extractall(dest, filter="data") if hasattr(tarfile, "data_filter") else t.extractall(dest)
    tar.unlink()


def offline_env(tree: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.upper().endswith("_PROXY")}
    env.update(PYTHONPATH=str(tree), UV_OFFLINE="1", PIP_NO_INDEX="1", NO_PROXY="", no_proxy="",
               HTTP_PROXY=NOWHERE, HTTPS_PROXY=NOWHERE, http_proxy=NOWHERE, https_proxy=NOWHERE,
               PYTHONHASHSEED="0", JAXCOMPAT_STATE=str(tree.parent / "state"))
    return env


# ------------------------------------------------------------------------------------------- jobs
class Job:
    """One command of one family: its argv (after ``python -m jaxcompat``), the folder it writes in,
    and the stored files copied there first (inputs, left out of the comparison when untouched)."""

    def __init__(self, family: str, name: str, argv: list[str], inputs: dict[str, Path] | None = None,
                 chain: str = ""):
        self.family, self.name, self.argv, self.inputs = family, name, argv, inputs or {}
        self.chain = chain or f"{family}/{name}"  # jobs of one chain run in order (one reads the other's file)
        self.exit, self.crashed = -1, False


def crater_jobs(tree: Path, out: Path) -> list[Job]:
    """Every crater run stored with its results: ``crater --report-only`` over a copy of its
    ``dependents/`` (and ``bisect.json``), its reports left out so that each is written anew. A run
    recorded before the plans were stored is rendered too, with the gap that says so (exit 2)."""
    jobs = []
    for run in sorted(p for p in (tree / "reports" / "crater").iterdir() if (p / "dependents").is_dir()):
        folder = out / "crater" / run.name / "reports" / "crater" / run.name
        inputs = {str(f.relative_to(run)): f for f in sorted(run.rglob("*"))
                  if f.is_file() and (f.parts[len(run.parts)] == "dependents" or f.name == "bisect.json")}
        argv = ["crater", "--report-only", "--reports", str(folder.parents[1]), "--name", run.name,
                "--dependents", str(_dependents_file(tree, run))]
        jobs.append(Job("crater", run.name, argv, {str(Path(run.name, "reports", "crater", run.name, k)): v
                                                   for k, v in inputs.items()}))
    return jobs


def _dependents_file(tree: Path, run: Path) -> Path:
    """The smallest stored seeds file naming every dependent of the run, else dependents.toml (the
    file only tells the report which credentials to keep out; the stored results hold none)."""
    names = {f.name.split(".")[0] for f in (run / "dependents").glob("*.json")}
    fits = []
    for seeds in sorted((tree / "reports" / "crater" / "seeds").glob("*.toml")):
        text = seeds.read_text(encoding="utf-8")
        declared = {line.split("=", 1)[1].strip().strip('"') for line in text.splitlines()
                    if line.replace(" ", "").startswith("name=")}
        if names <= declared:
            fits.append((len(declared), seeds))
    return min(fits)[1] if fits else tree / "dependents.toml"


def matrix_jobs(tree: Path, out: Path) -> list[Job]:
    """``report`` over the stored baseline's cells (reports/baseline.json, one cells/<id>.json each),
    then ``report --compare`` of the stored baseline against the matrix.json it wrote."""
    cells = json.loads((tree / "reports" / "baseline.json").read_text(encoding="utf-8"))["cells"]
    folder = out / "matrix" / "reports"
    inputs = {}
    for cell in cells:
        path = tree.parent / "cells" / f"{cell['id']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(cell, indent=1) + "\n", encoding="utf-8")
        inputs[f"reports/cells/{cell['id']}.json"] = path
    return [Job("matrix", "report", ["report", "--reports", str(folder)], inputs, chain="matrix"),
            Job("matrix", "compare-baseline", ["report", "--compare", str(tree / "reports" / "baseline.json"),
                                               "--against", str(folder / "matrix.json"), "--reports", str(folder)],
                chain="matrix")]


def check_jobs(tree: Path, out: Path) -> list[Job]:
    """The stored check runs (tests/data/unknown/*.json's check, reports/gpu/*.json) read and
    compared pairwise by ``report --compare`` (two single-cell reports)."""
    runs = []
    for rec in sorted((tree / "tests" / "data" / "unknown").glob("*.json")):
        path = tree.parent / "checks" / f"{rec.stem}.check.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(json.loads(rec.read_text(encoding="utf-8"))["check"], indent=1) + "\n",
                        encoding="utf-8")
        runs.append(path)
    runs += sorted((tree / "reports" / "gpu").glob("*.json"))
    return [Job("check", f"compare {a.stem} {b.stem}", ["report", "--compare", str(a), "--against", str(b),
                                                        "--reports", str(out / "check" / "reports")])
            for a, b in zip(runs, runs[1:] + runs[:1], strict=True) if a != b]


def small_jobs(tree: Path, out: Path) -> list[Job]:
    """scan of the stored example projects in every format, pins for every PINS_EVERY-th jax of the
    stored compat.json (and its newest), the learned requirements as read."""
    examples = [str(p.relative_to(tree)) for p in sorted((tree / "examples").iterdir()) if p.is_dir()]
    jobs = [Job("scan", f"examples {fmt}", ["scan", *examples, "--format", fmt]) for fmt in SCAN_FORMATS]
    rows = json.loads((tree / "reports" / "compat.json").read_text(encoding="utf-8"))["rows"]
    chosen = rows[::PINS_EVERY] + ([rows[-1]] if (len(rows) - 1) % PINS_EVERY else [])
    jobs += [Job("pins", f"jax {row['jax']}", ["pins", "--jax", row["jax"]]) for row in chosen]
    jobs.append(Job("learned", "learned", ["learned"]))
    return jobs


FAMILIES = (crater_jobs, matrix_jobs, check_jobs, small_jobs)


# ------------------------------------------------------------------------------------------- runs
def render(tree: Path, out: Path, python: str = sys.executable) -> list[Job]:
    """Every family's jobs in ``tree``, written under ``out``: per job, its files and
    ``<name>.stdout``, ``.stderr``, ``.exit`` under ``out/<family>/_terminal/``."""
    jobs = [j for family in FAMILIES for j in family(tree, out)]
    env = offline_env(tree)
    chains: dict[str, list[Job]] = {}
    for job in jobs:
        chains.setdefault(job.chain, []).append(job)

    def run_chain(chain: list[Job]) -> None:
        for job in chain:
            run_job(job, tree, out, env, python)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        list(pool.map(run_chain, chains.values()))  # list(): a job's exception is raised here
    return jobs


def run_job(job: Job, tree: Path, out: Path, env: dict, python: str) -> None:
    for rel, src in job.inputs.items():
        (out / job.family / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, out / job.family / rel)
    proc = subprocess.run([python, "-m", "jaxcompat", *job.argv], cwd=tree, env=env, capture_output=True,
                          timeout=300)
    term = out / job.family / "_terminal"
    term.mkdir(parents=True, exist_ok=True)
    stem = job.name.replace(" ", "_")
    (term / f"{stem}.stdout").write_bytes(proc.stdout)
    (term / f"{stem}.stderr").write_bytes(proc.stderr)
    (term / f"{stem}.exit").write_text(f"{proc.returncode}\n")
    job.exit = proc.returncode
    job.crashed = proc.returncode not in (0, 1, 2) or any(m in proc.stderr for m in CRASHES)
    for rel, src in job.inputs.items():  # an input the run left as it was is not a report
        copy = out / job.family / rel
        if copy.is_file() and copy.read_bytes() == src.read_bytes():
            copy.unlink()


def compare(before: Path, after: Path) -> list[tuple[str, str, str]]:
    """(family, file, "same" or "DIFFERENT: ...") for every file either folder holds, sorted."""
    names = sorted({str(p.relative_to(d)) for d in (before, after) for p in d.rglob("*") if p.is_file()})
    rows = []
    for name in names:
        a, b = before / name, after / name
        if not a.is_file() or not b.is_file():
            rows.append((name.split(os.sep)[0], name, f"DIFFERENT: only {'after' if b.is_file() else 'before'}"))
            continue
        x, y = a.read_bytes(), b.read_bytes()
        now_x, now_y = now_stamp(a), now_stamp(b)
        if x != y and now_x and now_y and (now_x in x or now_y in y):  # "now" out, the rest compared
            x, y = x.replace(now_x, NOW), y.replace(now_y, NOW)
            said = f"same but for the time it was written (now: {now_x.decode()} / {now_y.decode()})"
        else:
            said = "same"
        rows.append((name.split(os.sep)[0], name, said if x == y else "DIFFERENT: " + first_difference(x, y)))
    return rows


def now_stamp(path: Path) -> bytes:
    """The time of writing a report of the folder holds ("generated" of matrix.json: the clock when
    ``report`` ran, not an input), or b"" where there is none."""
    stamped = path.parent / "matrix.json"
    try:
        return json.loads(stamped.read_text(encoding="utf-8")).get("generated", "").encode()
    except (OSError, ValueError, AttributeError):
        return b""


def first_difference(x: bytes, y: bytes) -> str:
    xs, ys = x.splitlines(keepends=True), y.splitlines(keepends=True)
    for i, (p, q) in enumerate(zip(xs, ys, strict=False), 1):
        if p != q:
            col = next((k for k, (u, v) in enumerate(zip(p, q, strict=False)) if u != v), min(len(p), len(q)))
            start = max(0, col - 40)
            return f"line {i} (byte {col + 1}): {_clip(p[start:])} -> {_clip(q[start:])}"
    n = min(len(xs), len(ys)) + 1
    a = "(ends)" if len(xs) < n else _clip(xs[n - 1])
    b = "(ends)" if len(ys) < n else _clip(ys[n - 1])
    return f"line {n}: {a} -> {b}"


def _clip(line: bytes, width: int = 100) -> str:
    text = repr(line.decode("utf-8", "replace").rstrip("\n"))
    return text if len(text) <= width else text[:width] + "…"


def exits(jobs: list[Job]) -> list[str]:
    """Per family, how its commands exited, and each command that crashed instead of rendering."""
    per: dict[str, dict[int, int]] = {}
    for j in jobs:
        per.setdefault(j.family, {}).setdefault(j.exit, 0)
        per[j.family][j.exit] += 1
    lines = [f"{fam}: {sum(c.values())} commands, " + ", ".join(f"exit {k}: {v}" for k, v in sorted(c.items()))
             for fam, c in per.items()]
    return lines + [f"CRASHED: {j.family} {j.name}: python -m jaxcompat {' '.join(j.argv)}" for j in jobs if j.crashed]


def table(rows: list[tuple[str, str, str]], seconds: dict[str, float]) -> str:
    width = max([len(r[1]) for r in rows] + [4])
    lines = [f"{'family':<10} {'file':<{width}} result", f"{'-' * 10} {'-' * width} ------"]
    lines += [f"{fam:<10} {name:<{width}} {res}" for fam, name, res in rows]
    counts: dict[str, list[int]] = {}
    for fam, _, res in rows:
        c = counts.setdefault(fam, [0, 0])
        c[res.startswith("DIFFERENT")] += 1
    lines.append("")
    lines += [f"{fam}: {c[0] + c[1]} files compared, {c[0]} same, {c[1]} DIFFERENT"
              for fam, c in sorted(counts.items())]
    same = sum(not r[2].startswith("DIFFERENT") for r in rows)
    lines.append(f"total: {len(rows)} files compared, {same} same, {len(rows) - same} DIFFERENT; "
                 + ", ".join(f"{k} {v:.0f} s" for k, v in seconds.items()))
    lines.append("\nnot covered (cannot be rebuilt offline from what the repository stores):")
    lines += [f"  {k}: {v}" for k, v in NOT_COVERED.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", default="main", help="a git revision or 'worktree' (default: main)")
    ap.add_argument("--after", default="worktree", help="a git revision or 'worktree' (default: worktree)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="same-reports-"))
    seconds, said, crashed = {}, [], False
    try:
        for side, rev in (("before", args.before), ("after", args.after)):
            t0 = time.perf_counter()
            tree, out = work / "tree", work / "out"
            extract(rev, tree)
            jobs = render(tree, out)
            said += [f"{side} ({rev}): {line}" for line in exits(jobs)]
            crashed = crashed or any(j.crashed for j in jobs)
            out.rename(work / side)
            for scratch in ("tree", "state", "cells", "checks"):
                shutil.rmtree(work / scratch, ignore_errors=True)
            seconds[f"{side} ({rev}, {len(jobs)} commands)"] = time.perf_counter() - t0
        rows = compare(work / "before", work / "after")
        print(table(rows, seconds))
        print("\nthe commands and their exits (a crater run recorded before plans were stored exits 2, "
              "its gap said in its report):")
        print("\n".join(f"  {line}" for line in said))
        return 0 if rows and not crashed and not any(r[2].startswith("DIFFERENT") for r in rows) else 1
    finally:
        if args.keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

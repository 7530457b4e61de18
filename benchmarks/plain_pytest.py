"""The ground truth for `check --tests`: plain pytest in the same two environments, test by test.

After `jax-compat check --tests PROJECT --baseline … CANDIDATE` has built the two environments,
this runs the project's tests there with nothing of ours (no plugin, no watchdog, no re-runs):
`python -m pytest -p no:cacheprovider --continue-on-collection-errors --junitxml=…` from the
project root, with the project's own configuration. Each test's outcome on each side gives its
plain class (broken, fixed, fails-both, fails, pass, skipped), which is compared with the class
`check.json` gave it. Writes a Markdown table of the figures and every disagreement.

    python benchmarks/plain_pytest.py --check-json reports/check.json --project ../flowjax \
        --state .jaxcompat --out reports/usertests-vs-pytest/flowjax.md

A test that only we call `flaky` (run twice, outcome changed) is listed apart, not as a mismatch.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path


def run_plain(python: str, project: Path, xml: Path, timeout_s: int, only: list[str] | None = None,
              extra_env: dict[str, str] | None = None) -> tuple[int, float]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    env.update(extra_env or {})
    env.setdefault("JAX_PLATFORMS", "cpu")
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([python, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                               "--continue-on-collection-errors", f"--junitxml={xml}", "-o", "junit_family=xunit1",
                               *(only or [])], cwd=project, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout_s)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        rc = 124
    return rc, round(time.perf_counter() - t0, 1)


def install_seconds(state: Path, cell: str, scratch: Path) -> float:
    """What installing one side costs with a warm uv cache: a fresh venv synced from that
    environment's lock (as the crater's first build of it did), timed."""
    env = state / "envs" / cell
    lock = env / "jaxcompat-lock.txt"
    python = (env / "bin" / "python").resolve()
    if not lock.is_file():
        return 0.0
    t0 = time.perf_counter()
    subprocess.run(["uv", "venv", "--quiet", "--clear", "--python", str(python), str(scratch)], check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run(["uv", "pip", "sync", "--quiet", "--python", str(scratch / "bin" / "python"), str(lock)],
                   check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return round(time.perf_counter() - t0, 1)


def from_crater(crater_json: Path, name: str, state: Path) -> tuple[dict, Path]:
    """A dependent of a crater report as a check.json of ``check --tests`` (its tests, its two
    environments, its versions), and the root of its unpacked source under the state folder."""
    data = json.loads(crater_json.read_text())
    dep = data if "dependents" not in data else next(d for d in data["dependents"] if d["name"] == name)
    # an sdist unpacks under its version, a git source's checkout under its commit
    src = state / "crater" / "src" / f"{name}-{dep.get('commit') or dep['version']}" / "src"
    entries = [p for p in src.iterdir() if not p.name.startswith(".")]
    root = entries[0] if len(entries) == 1 and entries[0].is_dir() else src
    ran = {side: {"ran": n} for side, n in dep.get("ran", {}).items()}
    cells = dep.get("cells", {})
    return ({"id": cells.get("candidate", ""), "user_tests": dep["tests"],
             "user_tests_run": {"cells": cells, "sides": ran},
             "user_tests_versions": dep.get("versions", {}), "_only": dep.get("only", []),
             "_env": dep.get("env", {}), "_seconds": dep.get("seconds", 0.0),
             "_part_seconds": dep.get("part_seconds", [])}, root)


def outcomes(xml: Path) -> dict[str, str]:
    """junit (classname, name) -> passed | failed | error | skipped."""
    out: dict[str, str] = {}
    if not xml.is_file():
        return out
    for case in ET.parse(xml).getroot().iter("testcase"):
        key = f"{case.get('classname', '')}::{case.get('name', '')}"
        kinds = {child.tag for child in case}
        status = ("failed" if "failure" in kinds else "error" if "error" in kinds
                  else "skipped" if "skipped" in kinds else "passed")
        # a test failing in call and erroring in teardown appears once per report: keep the worst
        if out.get(key) not in ("failed", "error"):
            out[key] = status
    return out


def junit_key(nodeid: str) -> str:
    """tests/test_x.py::TestC::test_a[p] -> tests.test_x.TestC::test_a[p]; a module alone -> its
    collection-error record (classname empty, name the dotted module)."""
    parts = nodeid.split("::")
    module = parts[0].removesuffix(".py").replace("/", ".")
    if len(parts) == 1:
        return f"::{module}"
    return ".".join([module, *parts[1:-1]]) + "::" + parts[-1]


def plain_class(before: str | None, after: str | None) -> str:
    bad = ("failed", "error")
    if after == "skipped":
        return "skipped"
    if after is None:
        return "broken" if before == "passed" else "skipped"
    if before in (None, "skipped"):
        return "fails" if after in bad else "pass"
    if after in bad:
        return "broken" if before == "passed" else "fails-both"
    return "fixed" if before in bad else "pass"

def _key_versions(data: dict, side: str) -> str:
    """``jax=0.4.33, jaxlib=0.4.33, equinox=0.11.6`` of one side of a check.json."""
    versions = data.get("user_tests_versions", {}).get(side, {})
    return ", ".join(f"{k}={v}" for k, v in sorted(versions.items()) if k in ("jax", "jaxlib", "equinox"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check-json", help="check.json of `check --tests`")
    ap.add_argument("--crater-json", help="instead: a crater.json (or one dependent's result), with --dependent NAME")
    ap.add_argument("--dependent", help="with --crater-json: which dependent")
    ap.add_argument("--project", help="the project's root (with --crater-json: its unpacked source)")
    ap.add_argument("--only", action="append", default=[], metavar="PATH",
                    help="run only these tests (default: what the crater recorded; else the project's configuration)")
    ap.add_argument("--installs", action="store_true",
                    help="also time each side's install from its lock (warm uv cache) for the cost ratio")
    ap.add_argument("--state", required=True, help="the --state folder of the check (its envs/)")
    ap.add_argument("--candidate-cell", help="default: from check.json")
    ap.add_argument("--baseline-cell", help="default: from check.json")
    ap.add_argument("--out", required=True)
    ap.add_argument("--timeout", type=int, default=3600)
    ap.add_argument("--reuse", action="store_true", help="re-use the plain runs' junit files of an earlier call")
    args = ap.parse_args(argv)
    if args.crater_json:
        data, project = from_crater(Path(args.crater_json), args.dependent, Path(args.state).resolve())
    else:
        if not (args.check_json and args.project):
            ap.error("give --check-json and --project, or --crater-json and --dependent")
        data, project = json.loads(Path(args.check_json).read_text()), Path(args.project).resolve()
    cells = data.get("user_tests_run", {}).get("cells", {})
    sides = {"candidate": args.candidate_cell or cells.get("candidate") or data["id"],
             "baseline": args.baseline_cell or cells.get("baseline")}
    work = Path(args.out).resolve().with_suffix(".work")  # absolute: pytest writes it from the project's folder
    work.mkdir(parents=True, exist_ok=True)
    plain, timing = {}, {}
    for side, cell in sides.items():
        python = str(Path(args.state).resolve() / "envs" / cell / "bin" / "python")
        xml = work / f"{side}.xml"
        meta = work / f"{side}.json"
        if args.reuse and xml.is_file() and meta.is_file():
            rc, secs = json.loads(meta.read_text())
        else:
            rc, secs = run_plain(python, project, xml, args.timeout, args.only or data.get("_only"), data.get("_env"))
            meta.write_text(json.dumps([rc, secs]))
        plain[side], timing[side] = outcomes(xml), (rc, secs)
        print(f"{side}: pytest exit {rc} in {secs} s, {len(plain[side])} results", file=sys.stderr)
    for side, other in (("candidate", "baseline"), ("baseline", "candidate")):
        _module_errors_to_tests(plain[side], plain[other])
    ours = {t["test"]: t for t in data["user_tests"]}
    keys = set(plain["candidate"]) | set(plain["baseline"])
    by_key = {junit_key(k): v for k, v in ours.items()}
    mismatches, flaky, counts = [], [], {}
    for key in sorted(keys | set(by_key)):
        before, after = plain["baseline"].get(key), plain["candidate"].get(key)
        if before is None and after is None:
            # ours only: a module's tests that were absent from one side carry the module's error
            continue
        cls = plain_class(before, after)
        counts[cls] = counts.get(cls, 0) + 1
        mine = by_key.get(key)
        got = mine["class"] if mine else "(absent)"
        if got == "flaky":
            flaky.append((key, cls))
        elif got != cls:
            mismatches.append((key, before, after, cls, got))
    agree = sum(counts.values()) - len(mismatches) - len(flaky)
    ours_name = "the crater" if args.crater_json else "`check --tests`"
    lines = [
        f"# {'crater' if args.crater_json else 'check --tests'} vs plain pytest: {project.name}",
        "",
        f"Plain pytest (`-p no:cacheprovider --continue-on-collection-errors`, the project's own configuration) "
        f"in the two environments that {ours_name} built: baseline `{sides['baseline']}` "
        f"({_key_versions(data, 'baseline')}), "
        f"candidate `{sides['candidate']}` "
        f"({_key_versions(data, 'candidate')}).",
        "",
        f"- plain pytest: baseline exit {timing['baseline'][0]} ({timing['baseline'][1]} s), "
        f"{_tally(plain['baseline'])}; candidate exit {timing['candidate'][0]} ({timing['candidate'][1]} s), "
        f"{_tally(plain['candidate'])}",
        f"- plain classes: {', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}",
        f"- {ours_name} classes: {', '.join(f'{k} {v}' for k, v in sorted(_classes(ours).items()))}; "
        f"ran {data.get('user_tests_run', {}).get('sides', {}).get('candidate', {}).get('ran', '?')} in the candidate, "
        f"{data.get('user_tests_run', {}).get('sides', {}).get('baseline', {}).get('ran', '?')} in the baseline",
        f"- **agree on {agree} of {sum(counts.values())} tests**; flaky by our re-run: {len(flaky)}; "
        f"disagree: {len(mismatches)}",
        "",
    ]
    if args.installs:
        installs = {side: install_seconds(Path(args.state).resolve(), cell, work / f"venv-{side}")
                    for side, cell in sides.items()}
        plain_total = sum(t[1] for t in timing.values()) + sum(installs.values())
        ours_s = data.get("_seconds") or 0.0
        lines.insert(-1, f"- cost: plain pytest {timing['baseline'][1] + timing['candidate'][1]:.0f} s + installs "
                         f"{sum(installs.values()):.0f} s (warm uv cache, from the locks) = {plain_total:.0f} s; "
                         + (f"the crater took {ours_s:.0f} s for this dependent (re-runs before blame included): "
                            f"**{ours_s / plain_total:.2f}x**" if ours_s and plain_total else "crater time unknown"))
        lines.insert(-1, split_line(data.get("_part_seconds") or [], plain_total))
    if mismatches:
        lines += ["| test | plain baseline | plain candidate | plain class | check --tests |", "|---|---|---|---|---|"]
        lines += [f"| `{k}` | {b} | {a} | {c} | {g} |" for k, b, a, c, g in mismatches[:200]]
    if flaky:
        lines += ["", "Flaky by our re-run (plain class in brackets): "
                  + ", ".join(f"`{k}` ({c})" for k, c in flaky[:50])]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if not mismatches else 1


def split_line(parts: list[float], plain_total: float) -> str:
    """A dependent the crater split into parts (``split = N``): its wall here (the parts in turn,
    each building both sides) and on N shards (its longest part), each against plain pytest of both
    sides on one machine."""
    if not parts or not plain_total:
        return "- not split: the crater ran it whole"
    here, longest = sum(parts), max(parts)
    return (f"- split in {len(parts)} parts ({', '.join(f'{s:.0f}' for s in parts)} s): here (in turn) {here:.0f} s = "
            f"**{here / plain_total:.2f}x** plain pytest of both sides; on {len(parts)} shards {longest:.0f} s "
            f"(its longest part) = **{longest / plain_total:.2f}x**")


def _module_errors_to_tests(side: dict[str, str], other: dict[str, str]) -> None:
    """A module pytest could not collect on this side: each of its tests that the other side ran
    did not pass here either (its status is the module's error), and the module's own record
    stands for nothing more."""
    for key in [k for k in side if k.startswith("::")]:
        module = key[2:]
        tests = [k for k in other if not k.startswith("::") and (k.split("::")[0] == module
                                                                  or k.split("::")[0].startswith(module + "."))]
        if tests:
            status = side.pop(key)
            for k in tests:
                side.setdefault(k, status)


def _tally(results: dict[str, str]) -> str:
    out: dict[str, int] = {}
    for v in results.values():
        out[v] = out.get(v, 0) + 1
    return ", ".join(f"{k} {v}" for k, v in sorted(out.items())) or "nothing"


def _classes(ours: dict) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in ours.values():
        out[t["class"]] = out.get(t["class"], 0) + 1
    return out


if __name__ == "__main__":
    sys.exit(main())

"""The nightly's cost (issue 47, item 4): two consecutive "nights" of a crater (night 1 the candidate
jax==0.4.33, night 2 jax==0.4.34, one baseline jax==0.4.31, one state folder), side by side with
and without the baseline side's re-use (``--no-cache`` on night 2). The real crater over fake
dependents (tests/fake_crater.py: this interpreter, no network), each test sleeping so that a side's
suite, not the harness, is most of a night, as for a real dependent (15-40 min a side).

    python benchmarks/nightly_cost.py [--tests 60] [--sleep 0.25]

Prints each night's wall time and night 2 / night 1; a measurement, never an assertion.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.test_crater_nightly import night, tree  # noqa: E402


def timed(tmp: Path, candidate: str, *args: str) -> tuple[float, dict]:
    t0 = time.perf_counter()
    proc, ran, _ = night(tmp, candidate, *args, reports=f"reports-{candidate}")
    if proc.returncode not in (0, 1):
        raise SystemExit(proc.stdout + proc.stderr)
    return round(time.perf_counter() - t0, 1), ran


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tests", type=int, default=60, help="passing tests per dependent")
    ap.add_argument("--sleep", type=float, default=0.25, help="seconds each test takes")
    args = ap.parse_args()
    out = {}
    for mode, extra in (("re-use", ()), ("no re-use", ("--no-cache",))):
        with tempfile.TemporaryDirectory() as d:
            tmp = tree(Path(d), args.tests, args.sleep)
            one, ran1 = timed(tmp, "jax==0.4.33")
            two, ran2 = timed(tmp, "jax==0.4.34", *extra)
            out[mode] = {"night 1 s": one, "night 2 s": two, "ratio": round(two / one, 2),
                         "tests run night 1": ran1, "tests run night 2": ran2}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()

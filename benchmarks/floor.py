"""The floor of one cell: start Python, import the packages, run every case body once.

Run with a cell's interpreter: ``<env>/bin/python benchmarks/floor.py cases/`` — no pytest
session, no plugin, no reports; skips and failures are caught and counted (the floor is a time,
not a verdict). Prints one JSON line: {"import_s", "cases_s", "total_s", "cases": n}.
"""

import importlib.util
import json
import sys
import time
from pathlib import Path

T0 = time.perf_counter()


def main(cases_dir: str) -> None:
    for mod in ("jax", "equinox", "diffrax", "optimistix", "lineax", "chex"):
        try:
            __import__(mod)
        except Exception:  # noqa: BLE001 - absent or broken: the cell's own problem
            pass
    t_import = time.perf_counter()
    ran = 0
    for path in sorted(Path(cases_dir).glob("test_*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except BaseException:  # noqa: BLE001
            continue
        for name in sorted(n for n in vars(module) if n.startswith("test_")):
            fn = getattr(module, name)
            if getattr(fn, "pytestmark", None) and any(
                    m.name in ("gpu", "tpu") for m in fn.pytestmark):
                continue  # not run on CPU cells either
            try:
                fn()
            except BaseException:  # noqa: BLE001 - skips and expected failures included
                pass
            ran += 1
    t_end = time.perf_counter()
    print(json.dumps({"import_s": round(t_import - T0, 3), "cases_s": round(t_end - t_import, 3),
                      "total_s": round(t_end - T0, 3), "cases": ran}))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "cases")

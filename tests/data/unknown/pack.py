"""Pack a recorded run into tests/data/unknown/<rule>.json (see tests/test_unknown_failure.py).

    python tests/data/unknown/pack.py RULE_ID REPORTS_DIR

REPORTS_DIR holds the `check.json` of a combination the rule covers (checked --without-rule) and
the `bisect/region-*.json` that `bisect --from` wrote. Messages and tracebacks of the bisection
steps are clipped (the signature needs the first line and the last frame); the check is kept whole.
Every site folder is already scrubbed by the reports (`<env>`); the case root is made `<root>`.
"""

import json
import re
import sys
from pathlib import Path

rule, reports = sys.argv[1], Path(sys.argv[2])
check = json.loads((reports / "check.json").read_text())
regions = sorted((reports / "bisect").glob("region-*.json"), key=lambda p: p.stat().st_mtime)
region = json.loads(regions[-1].read_text())


def clip(rec: dict) -> dict:
    for r in rec.get("results", []):
        r["message"] = r.get("message", "")[:600]
        r["traceback"] = r.get("traceback", "")[-600:]
    return rec


for b in region["bisections"]:
    b["observations"] = [clip(o) for o in b["observations"]]
for c in region["corners"]:
    c["observation"] = clip(c["observation"])
dates = {b["package"]: b["dates"] for b in region["bounds"]}
out = {"rule": rule, "check": check, "region": region, "dates": dates}
text = json.dumps(out, indent=None, separators=(",", ":"))
text = re.sub(r'(?<=")/[^"]*?/(?=cases/)', "<root>/", text)  # no machine paths in the repository
text = re.sub(r'/[^"\s]*?/(?:lib/python3\.\d+/)?site-packages/', "<env>/lib/site-packages/", text)
path = Path(__file__).parent / f"{rule}.json"
path.write_text(text + "\n")
print(f"{path}: {len(text) // 1024} KiB")

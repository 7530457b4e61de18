"""JSON Lines: one JSON object per line, one per test result (a dependent's test as both sides saw
it, with its class), for tools that stream or ``grep`` a crater run."""

from __future__ import annotations

import json

from jaxcompat.report import outputs

suffix = ".jsonl"


def crater_lines(r: outputs.CraterReport) -> str:
    rows = [{"dependent": d["name"], "version": d.get("version", ""), **t}
            for d in r.said.get("dependents", []) for t in d.get("tests", [])]
    return "".join(json.dumps(row, sort_keys=False) + "\n" for row in rows)


RENDER = {outputs.CraterReport: crater_lines}

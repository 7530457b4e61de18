"""JSON Lines: one JSON object per line, one per test result (a dependent's test as both sides saw
it, with its class), then one per dependent (``dependent``, ``version``, ``verdict``, ``cause``, the
tests that ``ran`` on each side) and last the run's (``run``: its verdict word, ``exit``, the
dependents' ``verdicts`` counted) as crater.json says them, for tools that stream or ``grep`` a crater run."""

from __future__ import annotations

import json

from jaxcompat.model.vocab import Verdict
from jaxcompat.report import outputs

suffix = ".jsonl"


def crater_lines(r: outputs.CraterReport) -> str:
    rows = [{"dependent": d["name"], "version": d.get("version", ""), **t}
            for d in r.said.get("dependents", []) for t in d.get("tests", [])]
    rows += [{"dependent": d["name"], "version": d.get("version", ""), "verdict": d.get("verdict", ""),
              "cause": d.get("cause", ""), "ran": d.get("ran", {})} for d in r.said.get("dependents", [])]
    code = r.said.get("exit")
    rows.append({"run": Verdict.of(code).value if isinstance(code, int) else Verdict.NOT_JUDGED.value,
                 "exit": code, "verdicts": r.said.get("verdicts", {})})
    return "".join(json.dumps(row, sort_keys=False) + "\n" for row in rows)


RENDER = {outputs.CraterReport: crater_lines}

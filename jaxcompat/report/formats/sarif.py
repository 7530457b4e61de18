"""SARIF 2.1.0 (the static-analysis results format code hosts show beside a change): the crater's
broken tests, one result per broken test of each group, its ``ruleId`` the rule that explains the
group (or the rule drafted for it, or its error signature), level ``error``, located at the test's
file under the dependent's checkout (``uriBaseId``: the dependent's name)."""

from __future__ import annotations

import json

from jaxcompat.report import outputs

suffix = ".sarif"
VERSION = "2.1.0"
SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _rule_id(group: dict) -> str:
    return group.get("explained_by") or group.get("draft") or group["signature"]


def _rule(group: dict) -> dict:
    why = (f"fix: {group['fix']}" if group.get("fix") else
           f"jax's API history: {group['api']}" if group.get("api") else
           "no rule explains it: drafted in draft-rules.toml" if group.get("draft") else "no rule explains it")
    links = [u for u in group.get("upstream", []) if u.startswith(("https://", "http://"))]
    return {"id": _rule_id(group), "shortDescription": {"text": group["signature"]}, "fullDescription": {"text": why},
            **({"helpUri": links[0]} if links else {})}


def _result(group: dict, dependent: str, test: str) -> dict:
    path, _, name = test.partition("::")
    explained = (f"explained by {group['explained_by']}" if group.get("explained_by") else
                 f"jax's API history: {group['api']}" if group.get("api") else "no rule explains it")
    out = {"ruleId": _rule_id(group), "level": "error",
           "message": {"text": f"{dependent}: {test} broke with the candidate: {group['signature']} ({explained})"}}
    if name and path.endswith(".py"):
        out["locations"] = [{"physicalLocation": {"artifactLocation": {"uri": path, "uriBaseId": dependent}},
                             "logicalLocations": [{"fullyQualifiedName": test, "kind": "function"}]}]
    return out


def crater_sarif(r: outputs.CraterReport) -> str:
    groups = r.said.get("groups", [])
    rules = list({_rule_id(g): _rule(g) for g in groups}.values())
    results = [_result(g, dep, t) for g in groups for dep, tests in sorted(g.get("tests", {}).items()) for t in tests]
    run = {"tool": {"driver": {"name": "jax-compat crater", "rules": rules}}, "results": results}
    return json.dumps({"$schema": SCHEMA, "version": VERSION, "runs": [run]}, indent=1) + "\n"


RENDER = {outputs.CraterReport: crater_sarif}

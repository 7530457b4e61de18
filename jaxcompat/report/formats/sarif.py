"""SARIF 2.1.0 (the static-analysis results format code hosts show beside a change): the crater's
broken tests, one result per broken test of each group, its ``ruleId`` the rule that explains the
group (or the rule drafted for it, or its error signature), level ``error``, located at the test's
file under the dependent's checkout (``uriBaseId``: the dependent's name); then one ``error`` result
for each dependent whose verdict is not ``safe`` and that has no broken test above (none ran in the
candidate, no source, crashed, not judged …: its verdict and cause), and the run's exit status as its
invocation (``executionSuccessful`` only for exit 0), so a run that is not safe never shows clean."""

from __future__ import annotations

import json

from jaxcompat.model.vocab import DependentVerdict
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


def _verdict_rule(verdict: str) -> dict:
    meaning = {v.value: v.meaning for v in DependentVerdict}.get(verdict, verdict)
    return {"id": f"dependent-{verdict}", "shortDescription": {"text": f"dependent {verdict}"},
            "fullDescription": {"text": meaning}}


def _unsafe(said: dict, groups: list) -> list[dict]:
    """The dependents not safe that no broken test's result names: what the verdict alone says."""
    shown = {dep for g in groups for dep in g.get("tests", {})}
    return [d for d in said.get("dependents", [])
            if d.get("verdict") != DependentVerdict.SAFE and d["name"] not in shown]


def _dependent_result(d: dict) -> dict:
    why = d.get("cause") or {v.value: v.meaning for v in DependentVerdict}.get(d.get("verdict"), "")
    return {"ruleId": f"dependent-{d.get('verdict')}", "level": "error",
            "message": {"text": f"{d['name']}: {d.get('verdict')}" + (f" ({why})" if why else "")}}


def crater_sarif(r: outputs.CraterReport) -> str:
    groups = r.said.get("groups", [])
    unsafe = _unsafe(r.said, groups)
    rules = list({_rule_id(g): _rule(g) for g in groups}.values())
    rules += list({f"dependent-{d.get('verdict')}": _verdict_rule(str(d.get("verdict"))) for d in unsafe}.values())
    results = [_result(g, dep, t) for g in groups for dep, tests in sorted(g.get("tests", {}).items()) for t in tests]
    results += [_dependent_result(d) for d in unsafe]
    code = r.said.get("exit")
    invocation = {"executionSuccessful": code == 0, **({"exitCode": code} if isinstance(code, int) else {})}
    run = {"tool": {"driver": {"name": "jax-compat crater", "rules": rules}}, "invocations": [invocation],
           "results": results}
    return json.dumps({"$schema": SCHEMA, "version": VERSION, "runs": [run]}, indent=1) + "\n"


RENDER = {outputs.CraterReport: crater_sarif}

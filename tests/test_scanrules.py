"""scan's rules, one module each: the registry holds every module's rule under its own code, the
output shows what the registry says (SARIF's rules, each finding's level), and docs/scan.md's
table is the registry's."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from jaxcompat.apihistory.apitimeline import Timeline
from jaxcompat.apihistory.scanrules import ERROR_CODES, RULES
from jaxcompat.model.scan import Report, Target
from jaxcompat.model.vocab import FindingLevel
from jaxcompat.report.scan import sarif, table

ROOT = Path(__file__).resolve().parents[1]
RULE_FILES = sorted((ROOT / "jaxcompat/apihistory/scanrules").glob("jxc*.py"))


def test_every_rule_module_is_in_the_registry_under_its_own_code():
    assert [p.stem.upper() for p in RULE_FILES] == list(RULES) == [f"JXC00{i}" for i in range(1, 9)]
    for p in RULE_FILES:
        module = importlib.import_module(f"jaxcompat.apihistory.scanrules.{p.stem}")
        rule = module.RULE
        assert rule is RULES[p.stem.upper()]
        assert rule.level in (FindingLevel.ERROR, FindingLevel.WARNING) and rule.name and rule.doc.endswith(".")
        assert module.__doc__.startswith(f"{rule.code} {rule.name}:"), p  # the module says which rule it keeps


def test_the_errors_are_the_rules_of_error_level():
    assert ERROR_CODES == {"JXC001", "JXC003", "JXC007"}


def test_sarif_shows_the_registry():
    log = sarif(Report([], 0, []), Target("0.6.0"), Timeline.load())
    assert log["runs"][0]["tool"]["driver"]["rules"] == [
        {"id": r.code, "name": r.name, "shortDescription": {"text": r.doc}, "defaultConfiguration": {"level": r.level}}
        for r in RULES.values()]


def test_the_docs_table_is_the_registrys():
    text = (ROOT / "docs/scan.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- rules: generated from jaxcompat\.report\.scan\.table\(\) -->\n(.*?)<!-- /rules -->",
                  text, re.S)
    assert m, "docs/scan.md has lost its table of the rules"
    assert m.group(1) == table(), "docs/scan.md's rule table differs from the registry: paste report.scan.table()"

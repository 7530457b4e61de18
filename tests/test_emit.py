"""Outputs are data: ``report.emit`` writes a record in the formats asked (report/formats/, one module
each), ``--format`` picks them on the command line, and a bad name is refused naming the option and
the choices. The crater's SARIF and JSON Lines are read back: SARIF held to the 2.1.0 schema's
structure (the fields it defines, no network), JSON Lines one test result a line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jaxcompat.report import outputs
from jaxcompat.report.emit import emit, formats_of
from jaxcompat.report.formats import FORMATS

ROOT = Path(__file__).resolve().parents[1]
STORED = ROOT / "reports" / "crater" / "seed-jax-0.4.32"  # a recorded crater run: 4 dependents, broken groups


def _report_only(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp_path / "reports" / "crater" / "seed"
    shutil.copytree(STORED / "dependents", out / "dependents")
    proc = subprocess.run([sys.executable, "-m", "jaxcompat", "crater", "--report-only", "--name", "seed",
                           "--reports", str(tmp_path / "reports"), "--state", str(tmp_path / "state"), *args],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    return proc, out


def test_every_format_is_a_module_with_a_suffix_and_the_records_it_renders():
    for name, fmt in FORMATS.items():
        assert fmt.suffix.startswith("."), name
        assert fmt.RENDER and all(issubclass(k, outputs.Output) for k in fmt.RENDER), name
    kinds = [k for k in vars(outputs).values() if isinstance(k, type) and issubclass(k, outputs.Output)
             and k is not outputs.Output]
    for kind in kinds:  # what a command writes by default, every one of them a format the record has
        assert set(kind.DEFAULT) <= set(formats_of([kind])), kind
    assert formats_of([outputs.CraterReport]) == ["json", "md", "html", "junit", "rules", "sarif", "jsonl"]


def test_emit_writes_the_asked_formats_the_record_has_and_removes_a_stale_draft(tmp_path):
    said = outputs.CraterReport("crater", said={"kind": "crater", "groups": [], "dependents": []},
                                text="crater: x", results=[], warned=[], rules=[])
    (tmp_path / "draft-rules.toml").write_text("# from an earlier run\n")
    written = emit(said, tmp_path, ("json", "rules", "sarif"))
    assert written == [tmp_path / "crater.json", tmp_path / "crater.sarif"]  # no rule drafted: no file
    assert not (tmp_path / "draft-rules.toml").exists()
    found = outputs.BisectReport("bisect-jax-x", data={"url": "https://user:token@host/simple"})
    assert emit(found, tmp_path, ("md", "json")) == [tmp_path / "bisect-jax-x.json"]  # it has no md
    assert "token" not in (tmp_path / "bisect-jax-x.json").read_text()  # every text is scrubbed once


def test_format_default_writes_what_the_crater_always_wrote(tmp_path):
    proc, out = _report_only(tmp_path)
    assert proc.returncode == 1, proc.stderr
    names = {p.name for p in out.iterdir()} - {"dependents", ".lock"}
    assert names == {"crater.json", "crater.md", "crater.html", "crater.xml", "draft-rules.toml"}
    assert f"reports: {out / 'crater.json'}, crater.md, crater.html, crater.xml, draft-rules.toml" in proc.stdout


def test_a_format_subset_leaves_no_earlier_file_of_the_record_behind(tmp_path):
    """A --format subset after a run of every format: the earlier run's crater.json/.html/.xml/.sarif/
    .jsonl/draft-rules.toml go (they would contradict this run: nightly history and bisect read them)."""
    proc, out = _report_only(tmp_path, "--format", "json,md,html,junit,rules,sarif,jsonl")
    assert proc.returncode == 1, proc.stderr
    assert len({p.name for p in out.iterdir()} - {"dependents", ".lock"}) == 7
    proc = subprocess.run([sys.executable, "-m", "jaxcompat", "crater", "--report-only", "--name", "seed",
                           "--reports", str(tmp_path / "reports"), "--state", str(tmp_path / "state"), "--format",
                           "md"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 1, proc.stderr
    assert {p.name for p in out.iterdir()} - {"dependents", ".lock"} == {"crater.md"}
    assert f"reports: {out / 'crater.md'}" in proc.stdout and "crater.json" not in proc.stdout


def test_a_bad_format_is_refused_naming_the_option_and_the_choices(tmp_path):
    proc, out = _report_only(tmp_path, "--format", "json,pdf")
    assert proc.returncode == 2
    assert "--format" in proc.stderr and "'pdf'" in proc.stderr
    assert "json, md, html, junit, rules, sarif, jsonl" in proc.stderr
    assert not (out / "crater.json").exists()


SARIF_LEVELS = {"none", "note", "warning", "error"}
# The SARIF 2.1.0 schema's properties of the objects written (sarif-schema-2.1.0.json, OASIS): a key
# outside them is a typo the schema refuses (its objects are additionalProperties: false).
SARIF_KEYS = {
    "log": {"$schema", "version", "runs", "inlineExternalProperties", "properties"},
    "run": {"tool", "invocations", "conversion", "language", "versionControlProvenance", "originalUriBaseIds",
            "artifacts", "logicalLocations", "graphs", "results", "automationDetails", "runAggregates",
            "baselineGuid", "redactionTokens", "defaultEncoding", "defaultSourceLanguage", "newlineSequences",
            "columnKind", "externalPropertyFileReferences", "threadFlowLocations", "taxonomies", "addresses",
            "translations", "policies", "webRequests", "webResponses", "specialLocations", "properties"},
    "driver": {"name", "guid", "product", "productSuite", "shortDescription", "fullDescription", "fullName",
               "version", "semanticVersion", "dottedQuadFileVersion", "releaseDateUtc", "downloadUri",
               "informationUri", "globalMessageStrings", "notifications", "rules", "taxa", "locations", "language",
               "contents", "isComprehensive", "localizedDataSemanticVersion",
               "minimumRequiredLocalizedDataSemanticVersion", "associatedComponent", "translationMetadata",
               "supportedTaxonomies", "properties", "organization"},
    "rule": {"id", "deprecatedIds", "guid", "deprecatedGuids", "name", "deprecatedNames", "shortDescription",
             "fullDescription", "messageStrings", "defaultConfiguration", "helpUri", "help", "relationships",
             "properties"},
    "result": {"ruleId", "ruleIndex", "rule", "kind", "level", "message", "analysisTarget", "locations", "guid",
               "correlationGuid", "occurrenceCount", "partialFingerprints", "fingerprints", "stacks", "codeFlows",
               "graphs", "graphTraversals", "relatedLocations", "suppressions", "baselineState", "rank",
               "attachments", "hostedViewerUri", "workItemUris", "provenance", "fixes", "taxa", "webRequest",
               "webResponse", "properties"},
    "location": {"id", "physicalLocation", "logicalLocations", "message", "annotations", "relationships",
                 "properties"},
    "artifactLocation": {"uri", "uriBaseId", "index", "description", "properties"},
}


def _sarif_holds(log: dict) -> None:
    """The structure SARIF 2.1.0 requires of what the crater writes."""
    assert set(log) <= SARIF_KEYS["log"] and log["version"] == "2.1.0" and isinstance(log["runs"], list)
    for run in log["runs"]:
        assert set(run) <= SARIF_KEYS["run"] and "tool" in run and set(run["tool"]) <= {"driver", "extensions",
                                                                                        "properties"}
        driver = run["tool"]["driver"]
        assert set(driver) <= SARIF_KEYS["driver"] and isinstance(driver["name"], str) and driver["name"]
        ids = [r["id"] for r in driver.get("rules", [])]
        assert len(ids) == len(set(ids))
        for rule in driver.get("rules", []):
            assert set(rule) <= SARIF_KEYS["rule"] and isinstance(rule["id"], str)
            for key in ("shortDescription", "fullDescription"):
                assert set(rule.get(key, {"text": ""})) <= {"text", "markdown", "properties"}
        for res in run["results"]:
            assert set(res) <= SARIF_KEYS["result"] and res["level"] in SARIF_LEVELS
            assert isinstance(res["message"]["text"], str) and res["message"]["text"]
            assert res["ruleId"] in ids
            for loc in res.get("locations", []):
                assert set(loc) <= SARIF_KEYS["location"] and set(loc["physicalLocation"]) <= {
                    "address", "artifactLocation", "region", "contextRegion", "properties"}
                art = loc["physicalLocation"]["artifactLocation"]
                assert set(art) <= SARIF_KEYS["artifactLocation"] and not art["uri"].startswith("/")
                assert all(set(x) <= {"name", "index", "fullyQualifiedName", "decoratedName", "parentIndex",
                                      "kind", "properties"} for x in loc.get("logicalLocations", []))


def test_the_crater_writes_sarif_and_json_lines_when_asked(tmp_path):
    proc, out = _report_only(tmp_path, "--format", "sarif,jsonl")
    assert proc.returncode == 1, proc.stderr
    assert {p.name for p in out.iterdir()} - {"dependents", ".lock"} == {"crater.sarif", "crater.jsonl"}
    assert f"reports: {out / 'crater.sarif'}, crater.jsonl" in proc.stdout
    log = json.loads((out / "crater.sarif").read_text())
    _sarif_holds(log)
    said = json.loads((STORED / "crater.json").read_text())
    results = log["runs"][0]["results"]
    assert len(results) == sum(g["count"] for g in said["groups"]) > 0  # one per broken test of each group
    explained = {g["explained_by"] for g in said["groups"] if g["explained_by"]}
    assert explained and explained <= {r["ruleId"] for r in results}  # the rule id where a rule explains it
    first = results[0]
    assert first["level"] == "error" and first["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] \
        .endswith(".py")
    assert log["runs"][0]["invocations"] == [{"executionSuccessful": False, "exitCode": said["exit"]}]
    lines = (out / "crater.jsonl").read_text().splitlines()
    tests = sum(len(d["tests"]) for d in said["dependents"])
    assert len(lines) == tests + len(said["dependents"]) + 1  # each test, each dependent, the run
    rows = [json.loads(x) for x in lines]
    assert {r["dependent"] for r in rows[:tests]} == {d["name"] for d in said["dependents"]}
    assert all({"test", "class", "baseline", "candidate"} <= set(r) for r in rows[:tests])
    assert [(r["dependent"], r["verdict"]) for r in rows[tests:-1]] == [(d["name"], d["verdict"])
                                                                        for d in said["dependents"]]
    assert rows[-1] == {"run": "not-safe", "exit": said["exit"], "verdicts": said["verdicts"]}


def test_sarif_and_json_lines_of_a_run_not_safe_without_a_broken_test_say_so(tmp_path):
    """A dependent none of whose tests ran in the candidate (exit 1) and one with no source: SARIF
    holds a result for each and a failed invocation, JSON Lines a line for each and the run's exit,
    as crater.json says them (a code host never shows the run clean)."""
    deps = [{"name": "alpha", "version": "1.0", "verdict": "none-ran", "cause": "every test skipped",
             "ran": {"candidate": 0, "baseline": 2}, "tests": []},
            {"name": "gamma", "version": "1.0", "verdict": "no-source", "cause": "not on the index", "tests": []},
            {"name": "delta", "version": "2.0", "verdict": "safe", "cause": "", "tests": []}]
    said = {"kind": "crater", "exit": 1, "verdicts": {"none-ran": 1, "no-source": 1, "safe": 1},
            "groups": [], "dependents": deps}
    emit(outputs.CraterReport("crater", said=said), tmp_path, ("json", "sarif", "jsonl"))
    log = json.loads((tmp_path / "crater.sarif").read_text())
    _sarif_holds(log)
    run = log["runs"][0]
    assert run["invocations"] == [{"executionSuccessful": False, "exitCode": 1}]
    assert [(r["level"], r["message"]["text"]) for r in run["results"]] == [
        ("error", "alpha: none-ran (every test skipped)"), ("error", "gamma: no-source (not on the index)")]
    rows = [json.loads(x) for x in (tmp_path / "crater.jsonl").read_text().splitlines()]
    assert [(r["dependent"], r["verdict"]) for r in rows[:-1]] == [(d["name"], d["verdict"]) for d in deps]
    assert rows[-1] == {"run": "not-safe", "exit": 1, "verdicts": said["verdicts"]}
    assert json.loads((tmp_path / "crater.json").read_text())["exit"] == rows[-1]["exit"]


@pytest.mark.parametrize("command", ["check", "survey", "latest", "bisect", "compat"])
def test_every_command_that_writes_reports_takes_format(command):
    proc = subprocess.run([sys.executable, "-m", "jaxcompat", command, "--help"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert proc.returncode == 0 and "--format FMT[,FMT…]" in proc.stdout


@pytest.mark.parametrize("fmt, drafts", [(None, True), (["json", "junit"], True), (["junit"], False)])
def test_check_drafts_and_points_bisect_at_check_json_only_when_it_wrote_it(fmt, drafts, tmp_path, monkeypatch,
                                                                           capsys):
    """`check --format junit` writes no check.json: it drafts no rule and names no
    `bisect --from …/check.json` (docs/check.md); with json (or the default) it does both."""
    from types import SimpleNamespace

    from jaxcompat.commands import check as command
    from jaxcompat.operations import check

    (tmp_path / "check.json").write_text("{}\n")  # an earlier run's
    request = SimpleNamespace(matrix=None)
    monkeypatch.setattr(command, "_request", lambda args: request)
    monkeypatch.setattr(check, "prepare", lambda req, say: check.CheckSetup(req))
    monkeypatch.setattr(check, "judge", lambda setup, say: check.CheckVerdict(
        result=None, text="verdict", output=outputs.BisectReport("check", data={"x": 1}), items=[],
        drafts="check"))
    called = []
    monkeypatch.setattr(command, "after_run", lambda *a: called.append(a) or f"drafted 1 rule(s): --from {a[-1]}")
    command.run(SimpleNamespace(reports=str(tmp_path), format=fmt))
    out = capsys.readouterr().out
    assert (tmp_path / "check.json").exists() is drafts  # not written now: the earlier one goes too
    assert bool(called) is drafts and ("check.json" in out) is drafts and ("drafted" in out) is drafts


def test_a_plain_check_leaves_no_file_of_an_earlier_check_with_tests(tmp_path):
    """`check --tests` writes check.json, check.md, check.html, check-tests.xml; a plain `check` into the same
    folder writes check.json: none of the earlier run's files stays beside it as if current (a green
    check.html of another candidate); another command's files stay."""
    from tests.helpers import make_tree

    make_tree(tmp_path)
    (tmp_path / "user").mkdir()
    (tmp_path / "user" / "test_user.py").write_text("def test_ok():\n    pass\n")
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "crater.md").write_text("another command's\n")

    def check(*args: str) -> set[str]:
        proc = subprocess.run([sys.executable, str(ROOT / "tests" / "fake_matrix.py"), "check", "--matrix",
                               str(tmp_path / "matrix.toml"), "--reports", str(reports), "--state",
                               str(tmp_path / "state"), "--no-verify-escapes", *args, "jax==0.4.33"],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode in (0, 1, 2) and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
        return {p.name for p in reports.iterdir()} - {".lock"}

    assert check("--tests", str(tmp_path / "user")) == {"check.json", "check.md", "check.html", "check-tests.xml",
                                                        "crater.md"}
    assert check() == {"check.json", "crater.md"}


def test_a_check_with_tests_leaves_no_file_of_an_earlier_plain_check(tmp_path):
    """The other way: a plain check's check.xml (`--format json,junit`) goes when check --tests writes check.*."""
    (tmp_path / "check.xml").write_text("<testsuites/>\n")
    (tmp_path / "check.md").write_text("an earlier check --tests\n")
    (tmp_path / "crater.xml").write_text("another command's\n")
    emit(outputs.UserTestsReport("check"), tmp_path, ())  # no format asked: nothing of check.* stays
    assert {p.name for p in tmp_path.iterdir()} == {"crater.xml"}

"""The composite GitHub Action (action.yml): valid against the published schema (offline), and
its shell steps, run here in order with a stand-in for the installed jax-compat, pass the inputs
through as arguments, put the verdict in the job summary and fail exactly when the check fails."""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

from tests.helpers import check_jsonschema

REPO = Path(__file__).resolve().parent.parent
ACTION = REPO / "action.yml"


def test_action_passes_the_github_action_schema():
    check_jsonschema("vendor.github-actions", ACTION)


def _action() -> dict:
    try:
        from ruamel.yaml import YAML  # check-jsonschema's YAML parser
    except ImportError:
        pytest.fail("ruamel.yaml is not installed (nox -s tests installs check-jsonschema, which brings it)")
    return YAML(typ="safe").load(ACTION.read_text(encoding="utf-8"))


_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _simulate(tmp_path: Path, inputs: dict[str, str], exit_code: int, check_md: str | None = None):
    """Run the action's `run:` steps as the runner would (bash -eo pipefail, step outputs, the
    `if:` conditions this action uses); the install step is replaced by a stand-in jax-compat
    that records its arguments, prints a verdict and exits with ``exit_code``."""
    action = _action()
    values = {k: str(v.get("default", "")) for k, v in action["inputs"].items()} | inputs
    temp, workspace = tmp_path / "runner-temp", tmp_path / "workspace"
    (temp / "jax-compat" / "bin").mkdir(parents=True)
    workspace.mkdir()
    (workspace / "pyproject.toml").write_text("")  # an unquoted * would glob to it
    fake = temp / "jax-compat" / "bin" / "jax-compat"
    md = f"printf '%s\\n' {check_md!r} > \"$3/check.md\"\n" if check_md else ""
    fake.write_text(f'#!/bin/bash\nprintf "%s\\n" "$@" > "{tmp_path}/argv"\n{md}'
                    f'echo "Candidate check-1: verdict text"\nexit {exit_code}\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    summary, outputs = tmp_path / "summary.md", {}
    failed, ran = False, []
    for step in action["runs"]["steps"]:
        if "run" not in step or step.get("id") == "install":
            continue
        cond = step.get("if", "success()")
        if cond == "always() && steps.check.outputs.exit-code != ''":
            if not outputs.get("exit-code"):
                continue
        elif cond != "success()":
            pytest.fail(f"the simulation does not know the condition {cond!r}")
        elif failed:
            continue

        def expr(m: re.Match) -> str:
            e = m.group(1)
            if e.startswith("inputs."):
                return values[e.removeprefix("inputs.")]
            if e == "steps.check.outputs.exit-code":
                return outputs.get("exit-code", "")
            raise AssertionError(f"the simulation does not know the expression {e!r}")

        assert not _EXPR.search(step["run"]), "inputs reach run: scripts through env:, never inline"
        env = {**os.environ, "RUNNER_TEMP": str(temp), "GITHUB_STEP_SUMMARY": str(summary),
               "GITHUB_OUTPUT": str(tmp_path / "output"), "GITHUB_ACTION_PATH": str(REPO),
               **{k: _EXPR.sub(expr, str(v)) for k, v in step.get("env", {}).items()}}
        (tmp_path / "output").write_text("")
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                              cwd=workspace, env=env, capture_output=True, text=True, timeout=60)
        for line in (tmp_path / "output").read_text().splitlines():
            key, _, value = line.partition("=")
            outputs[key] = value
        ran.append((step["name"], proc.returncode))
        failed = failed or proc.returncode != 0
    argv = (tmp_path / "argv").read_text().splitlines()
    return argv, summary.read_text() if summary.exists() else "", ran


def test_the_inputs_become_the_check_command(tmp_path):
    argv, _, _ = _simulate(
        tmp_path,
        {
            "candidate": "jax==0.4.35\n equinox==0.11.6 *",
            "python": "3.11",
            "rules": "ci/rules.toml\n\nci/more rules.toml\n",
            "baseline": "jax==0.4.33 equinox==0.11.7",
            "tests": "tests",
            "args": "--no-verify-escapes",
        },
        exit_code=0,
    )
    assert argv == ["check", "--reports", "reports", "jax==0.4.35", "equinox==0.11.6", "*",
                    "--baseline", "jax==0.4.33", "--baseline", "equinox==0.11.7", "--tests", "tests",
                    "--rules", "ci/rules.toml", "--rules", "ci/more rules.toml",
                    "--python", "3.11", "--no-verify-escapes"]


def test_optional_inputs_left_empty_are_not_passed(tmp_path):
    argv, _, _ = _simulate(tmp_path, {"candidate": "-r requirements.txt"}, exit_code=0)
    assert argv == ["check", "--reports", "reports", "-r", "requirements.txt"]


@pytest.mark.parametrize("code", [0, 1, 2])
def test_the_step_fails_exactly_when_the_check_fails_and_the_summary_always_has_the_verdict(tmp_path, code):
    _, summary, ran = _simulate(tmp_path, {"candidate": "jax==0.4.35"}, exit_code=code)
    assert ran[0] == ("jax-compat check", 0)  # the check step records the status, the last step fails
    assert ran[-1] == ("Fail when the check failed", code)
    assert "Candidate check-1: verdict text" in summary
    assert ("## jax-compat check: safe" in summary) == (code == 0)


def test_the_summary_prefers_check_md(tmp_path):
    _, summary, _ = _simulate(tmp_path, {"candidate": "jax==0.4.35"}, exit_code=1, check_md="# the markdown verdict")
    assert "# the markdown verdict" in summary and "Candidate check-1" not in summary


def test_the_index_inputs_become_index_options(tmp_path):
    """Nightly indexes, a folder of release candidates and --pre reach `check`, one option each."""
    argv, _, _ = _simulate(tmp_path, {"candidate": "jax==0.6.2 equinox @ git+https://github.com/patrick-kidger/equinox@main",
                                      "index-url": "https://example.org/simple",
                                      "extra-index-url": "https://a.example/simple\nhttps://b.example/simple",
                                      "find-links": "wheels\nmore wheels\n", "pre": "true"}, exit_code=0)
    assert argv == ["check", "--reports", "reports", "jax==0.6.2", "equinox", "@",
                    "git+https://github.com/patrick-kidger/equinox@main",
                    "--index-url", "https://example.org/simple", "--extra-index-url", "https://a.example/simple",
                    "--extra-index-url", "https://b.example/simple", "--find-links", "wheels",
                    "--find-links", "more wheels", "--pre"]
    argv, _, _ = _simulate(tmp_path / "2", {"candidate": "jax==0.6.2", "pre": "false"}, exit_code=0)
    assert argv == ["check", "--reports", "reports", "jax==0.6.2"]

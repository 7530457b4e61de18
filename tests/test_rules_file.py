"""``--rules FILE``: [[failure]] tables added to the matrix's, checked by the same code with the
same errors (file, key, fix) as in matrix.toml; an id taken twice is an error."""

from __future__ import annotations

import textwrap

import pytest

from jaxcompat._util.exits import EXIT_CONFIG
from jaxcompat.commands import main
from jaxcompat.knowledge.config import load
from jaxcompat.knowledge.outcomes import classify
from jaxcompat.model.matrix import ConfigError
from jaxcompat.model.outcomes import RawResult
from tests.helpers import MINIMAL, failure_toml, make_tree

# A second rule on the tree's case file (make_tree's cases/test_demo.py).
RULE = failure_toml("demo-control", "cases/test_demo.py::test_control_ok", '{ jax = ">=0.4.30" }')


def _rules(tmp_path, text: str, name: str = "rules.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def _error(fn, *args, **kwargs) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        fn(*args, **kwargs)
    return info.value


def test_rules_are_merged_and_classify_like_the_matrix_rules(tmp_path):
    matrix = load(make_tree(tmp_path), rules=[_rules(tmp_path, RULE)])
    assert [f.id for f in matrix.failures] == ["demo-bug", "demo-control"]
    assert matrix.rules == (tmp_path / "rules.toml",)
    assert matrix.failure("demo-control").source == str(tmp_path / "rules.toml")
    raw = RawResult(case="cases/test_demo.py::test_control_ok", status="failed",
                    error_types=["TypeError", "Exception"], message="TypeError: weak_type differs")
    r = classify(raw, matrix.failures, {"jax": "0.4.33"}, "cpu")
    assert (r.outcome, r.failure) == ("reproduced", "demo-control")


def test_several_rules_files_are_merged_in_order(tmp_path):
    second = RULE.replace('id = "demo-control"', 'id = "demo-control-2"')
    matrix = load(make_tree(tmp_path), rules=[_rules(tmp_path, RULE), _rules(tmp_path, second, "more.toml")])
    assert [f.id for f in matrix.failures] == ["demo-bug", "demo-control", "demo-control-2"]


@pytest.mark.parametrize("damage", [
    pytest.param(lambda t: t + "\n[[failure]\n", id="malformed-toml"),
    pytest.param(lambda t: t.replace("affects =", "afects ="), id="bad-key"),
    pytest.param(lambda t: t.replace('">=0.4.30"', '"=>0.4.30"'), id="bad-specifier"),
    pytest.param(lambda t: t.replace("test_control_ok", "test_nope"), id="unknown-case"),
    pytest.param(lambda t: t + t, id="duplicate-id-in-the-file"),
])
def test_a_bad_rules_file_gets_the_error_matrix_toml_gets(tmp_path, damage):
    """The same [[failure]] text, broken the same way: in matrix.toml and in a rules file the
    error is word for word the same, but for the file it names. (The text opens both files, so
    TOML line numbers and table indices are the same.)"""
    bad = damage(RULE)
    (tmp_path / "m").mkdir()
    (tmp_path / "r").mkdir()
    in_matrix = _error(load, make_tree(tmp_path / "m", bad + MINIMAL))
    rules_path = _rules(tmp_path, bad)
    in_rules = _error(load, make_tree(tmp_path / "r"), rules=[rules_path])
    assert in_rules.path == str(rules_path)
    assert (in_rules.key, in_rules.problem, in_rules.fix) == (in_matrix.key, in_matrix.problem, in_matrix.fix)
    assert str(in_rules) == str(in_matrix).replace(in_matrix.path, str(rules_path), 1)


def test_a_misspelt_key_gets_the_right_one_suggested(tmp_path):
    e = _error(load, make_tree(tmp_path), rules=[_rules(tmp_path, RULE.replace("affects =", "afects ="))])
    assert e.key == "failure[0].afects" and e.fix.startswith("did you mean 'affects'?")


def test_an_id_the_matrix_already_has_is_an_error_naming_both_files(tmp_path):
    tree = make_tree(tmp_path)
    rules_path = _rules(tmp_path, RULE.replace('"demo-control"', '"demo-bug"'))
    e = _error(load, tree, rules=[rules_path])
    assert e.path == str(rules_path) and e.key == "failure[demo-bug].id"
    assert e.problem == f"duplicate id 'demo-bug': {tree} already defines it"
    assert "new id" in e.fix


def test_an_id_an_earlier_rules_file_has_is_an_error(tmp_path):
    first, second = _rules(tmp_path, RULE), _rules(tmp_path, RULE, "again.toml")
    e = _error(load, make_tree(tmp_path), rules=[first, second])
    assert e.path == str(second) and f"{first} already defines it" in e.problem


def test_a_rules_file_holds_only_failures(tmp_path):
    e = _error(load, make_tree(tmp_path), rules=[_rules(tmp_path, '[[cell]]\nid = "x"\npins = { jax = "0.4.33" }\n')])
    assert e.key == "cell" and e.problem == "unknown key" and "allowed keys here: failure" in e.fix
    e = _error(load, make_tree(tmp_path), rules=[_rules(tmp_path, "# nothing yet\n")])
    assert (e.key, e.problem) == ("failure", "missing")


def test_a_missing_rules_file_is_a_config_error(tmp_path):
    e = _error(load, make_tree(tmp_path), rules=[tmp_path / "nope.toml"])
    assert e.key == "(file)" and "rules file" in e.fix


def test_the_cli_reports_a_bad_rules_file_before_anything_runs(tmp_path, capsys):
    tree = make_tree(tmp_path)
    rules_path = _rules(tmp_path, RULE + "\n[[failure]\n")
    for command in (["cells"], ["check", "jax==0.4.35"], ["matrix"], ["latest"],
                    ["bisect", "demo-bug", "--package", "equinox"]):
        code = main([*command, "--matrix", str(tree), "--rules", str(rules_path),
                     "--reports", str(tmp_path / "reports"), "--state", str(tmp_path / "state")])
        err = capsys.readouterr().err
        assert code == EXIT_CONFIG, command
        assert err.startswith(f"error: {rules_path}: (syntax): invalid TOML:"), (command, err)
        assert "fix: fix the TOML syntax at that line" in err
    assert not (tmp_path / "state").exists()


def test_the_documented_example_rules_file_is_valid_and_its_error_is_the_one_shown(tmp_path):
    import re
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    readme = (repo / "docs" / "ci.md").read_text(encoding="utf-8")
    example = re.search(r"```toml\n# ci/jax-rules.toml\n(.*?)```", readme, re.S).group(1)
    matrix = load(repo / "matrix.toml", rules=[_rules(tmp_path, example)])
    assert matrix.failures[-1].id == "our-neural-ode-grad"
    shown = re.search(r"\$ jax-compat check --rules ci/jax-rules.toml .*?\n(error: .*?)\n```", readme, re.S).group(1)
    e = _error(load, repo / "matrix.toml", rules=[_rules(tmp_path, example.replace("affects =", "afects =", 1))])
    assert f"error: {e}".replace(str(tmp_path / "rules.toml"), "ci/jax-rules.toml") == shown

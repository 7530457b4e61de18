"""What a user acts on without a second look: bad input is named (exit 2) before anything runs, and
a bug of ours is exit 2 with one line — never a traceback as the answer, never exit 1 ("not safe").
Each test here failed on 084bcdf."""

from __future__ import annotations

import pytest

from jaxcompat.commands import guarded, main
from jaxcompat.env import testdeps
from jaxcompat.knowledge.dependents import load, parse
from jaxcompat.model.matrix import ConfigError


def test_a_bug_of_ours_is_exit_2_with_one_line(capsys, monkeypatch):
    """084bcdf: a traceback, exit 1 ("not safe" by our own table)."""
    def boom(args):
        raise ValueError("bad thing while merging")
    code = guarded(boom, None)
    err = capsys.readouterr().err
    assert code == 2 and "a bug of jax-compat" in err and "ValueError: bad thing while merging" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_secret_in_the_bug_line_is_redacted(capsys):
    def boom(args):
        raise RuntimeError("could not fetch https://user:s3cr3t@example.com/simple")
    assert guarded(boom, None) == 2
    assert "s3cr3t" not in capsys.readouterr().err


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-5"])
def test_budget_s_must_be_a_finite_positive_number(value):
    """084bcdf: `budget_s = nan` passed validation, then a traceback and a forked child left running."""
    with pytest.raises(ConfigError, match=r"budget_s.*expected a number of seconds > 0"):
        parse({"settings": {"budget_s": float(value)}, "dependent": [{"name": "a", "version": "latest"}]})


def test_a_dependents_file_that_is_not_utf8_is_named(tmp_path):
    """084bcdf: UnicodeDecodeError traceback."""
    path = tmp_path / "dependents.toml"
    path.write_bytes(b'[[dependent]]\nname = "caf\xe9"\nversion = "latest"\n')
    with pytest.raises(ConfigError) as e:
        load(path)
    assert "dependents.toml" in str(e.value) and "UTF-8" in str(e.value)


def test_the_crater_refuses_a_nan_budget_before_anything_runs(tmp_path, capsys):
    deps = tmp_path / "dependents.toml"
    deps.write_text('[settings]\nbudget_s = nan\n\n[[dependent]]\nname = "a"\nversion = "latest"\n')
    code = main(["crater", "jax==0.4.33", "--dependents", str(deps), "--state", str(tmp_path / "state"),
                 "--reports", str(tmp_path / "reports")])
    err = capsys.readouterr().err
    assert code == 2 and "settings.budget_s" in err and "Traceback" not in err
    assert not (tmp_path / "state").exists()


def test_a_requirements_file_including_one_outside_the_project(tmp_path):
    """084bcdf: `-r ../shared/req.txt` raised ValueError (not in the subpath)."""
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "req.txt").write_text("hypothesis>=6\n")
    root = tmp_path / "proj"
    root.mkdir()
    (root / testdeps.REQUIREMENT_FILES[0]).write_text("-r ../shared/req.txt\npytest\n")
    found = testdeps.declared(root)
    assert found.files[testdeps.REQUIREMENT_FILES[0]] == ["hypothesis>=6", "pytest"]

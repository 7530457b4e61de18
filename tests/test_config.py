"""matrix.toml loading: every malformed input fails before any install, naming key and fix."""

from __future__ import annotations

import pytest

from jaxcompat.knowledge.config import load, parse
from jaxcompat.knowledge.rules import covers
from jaxcompat.model.matrix import ConfigError
from tests.helpers import MINIMAL, make_tree


def test_minimal_file_loads(tmp_path):
    m = load(make_tree(tmp_path))
    assert [c.id for c in m.cells] == ["a"]
    cell = m.cells[0]
    # jaxlib is left to run time: the one jax's own metadata asks for (jaxcompat.env.resolution)
    assert cell.pins == {"jax": "0.4.33", "equinox": "0.11.7"}
    assert cell.requirements() == ["jax==0.4.33", "equinox==0.11.7"]
    (f,) = m.failures
    assert covers(f, "cases/test_demo.py::test_bug")
    assert not covers(f, "cases/test_demo.py::test_control_ok")


def test_the_repository_matrix_is_valid():
    from pathlib import Path

    m = load(Path(__file__).parent.parent / "matrix.toml")
    ids = {f.id for f in m.failures}
    assert {"callback-error-deferral", "inline-marker-int", "tracer-hashing",
            "weak-type-closure", "chex-max-traces"} <= ids
    assert {"equinox-import-pp-eqn-rules", "float0-tangent", "diffrax-concretearray", "make-jaxpr-consts-0427",
            "unmapped-aval-051", "hashable-jaxpr-params-070", "numpy2-import"} <= ids
    assert len({c.id for c in m.cells}) == len(m.cells)


def _error(tmp_path, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load(make_tree(tmp_path, text))
    return info.value


def test_syntax_error_names_the_line(tmp_path):
    e = _error(tmp_path, MINIMAL + "\n[[cell]\n")
    assert e.key == "(syntax)" and "line" in str(e)


def test_unknown_key_suggests_the_right_one(tmp_path):
    e = _error(tmp_path, MINIMAL.replace("pins =", "pinz ="))
    assert e.key == "cell[0].pinz"
    assert "did you mean 'pins'" in e.fix


def test_invalid_specifier_in_affects(tmp_path):
    e = _error(tmp_path, MINIMAL.replace('">=0.4.32"', '"=>0.4.32"'))
    assert e.key == "failure[demo-bug].affects.jax"
    assert "invalid version specifier" in e.problem and ">=0.4.32" in e.fix


def test_invalid_pin(tmp_path):
    e = _error(tmp_path, MINIMAL.replace('equinox = "0.11.7" }', 'equinox = "zero" }', 1))
    assert e.key == "cell[0].pins.equinox" and "exact version" in e.fix


def test_unquoted_pin_gets_a_quoting_hint(tmp_path):
    e = _error(tmp_path, MINIMAL.replace('equinox = "0.11.7" }', "equinox = 11 }", 1))
    assert 'equinox = "11"' in e.fix


def test_duplicate_cell_id(tmp_path):
    e = _error(tmp_path, MINIMAL + '\n[[cell]]\nid = "a"\npins = { jax = "0.4.31" }\n')
    assert e.key == "cell" and "duplicate id 'a'" in e.problem


def test_missing_case_file(tmp_path):
    e = _error(tmp_path, MINIMAL.replace("cases/test_demo.py::test_bug", "cases/test_nope.py::test_bug"))
    assert e.key == "failure[demo-bug].cases[0]" and "does not exist" in e.problem


def test_missing_case_function_lists_the_real_ones(tmp_path):
    e = _error(tmp_path, MINIMAL.replace("::test_bug", "::test_bugg"))
    assert "no test 'test_bugg'" in e.problem and "test_bug" in e.fix


def test_bad_regex(tmp_path):
    e = _error(tmp_path, MINIMAL.replace('match = "Unfortunately"', 'match = "Unfortunately ("'))
    assert e.key == "failure[demo-bug].match"


def test_unknown_backend(tmp_path):
    e = _error(tmp_path, MINIMAL.replace('python = "3.11"', 'python = "3.11"\nbackend = "cuda"'))
    assert e.key == "settings.backend" and "cuda12" in e.fix


def test_shell_injection_in_a_pin_is_rejected(tmp_path):
    e = _error(tmp_path, MINIMAL.replace('equinox = "0.11.7" }', 'equinox = "0.11.7; rm -rf ~" }', 1))
    assert e.key == "cell[0].pins.equinox"


def test_shell_injection_in_a_constraint_is_rejected(tmp_path):
    e = _error(tmp_path, MINIMAL.replace('pins = {', 'constraints = ["numpy<2; rm -rf ~"]\npins = {', 1))
    assert e.key == "cell[0].constraints[0]" and "invalid requirement" in e.problem


def test_grid_expands_with_exclusions(tmp_path):
    text = MINIMAL + '''
[[grid]]
id = "j{jax}-e{equinox}"
axes = { jax = ["0.4.31", "0.4.33"], equinox = ["0.11.6", "0.11.7"] }
pins = { diffrax = "*" }
constraints = ["numpy<2"]
exclude = [{ jax = "0.4.31", equinox = "0.11.7" }]
'''
    m = load(make_tree(tmp_path, text))
    ids = [c.id for c in m.cells]
    assert ids == ["j0.4.31-e0.11.6", "j0.4.33-e0.11.6", "j0.4.33-e0.11.7", "a"]
    c = m.cell("j0.4.33-e0.11.6")
    assert c.pins["diffrax"] == "*" and c.optional() == ["diffrax"] and c.constraints == ("numpy<2",)
    assert "jaxlib" not in c.pins


def test_grid_bad_template(tmp_path):
    text = MINIMAL + '\n[[grid]]\nid = "{jaxx}"\naxes = { jax = ["0.4.31"] }\n'
    e = _error(tmp_path, text)
    assert e.key == "grid[0].id" and "{jax}" in e.fix


def test_affects_or_clauses(tmp_path):
    text = MINIMAL.replace('affects = { jax = ">=0.4.32", equinox = "<0.11.8" }',
                           'affects = [{ jax = ">=0.4.32", equinox = "<0.11.8" }, { jax = "==0.4.27" }]')
    (f,) = load(make_tree(tmp_path, text)).failures
    assert len(f.affects) == 2


def test_not_a_table_at_top():
    with pytest.raises(ConfigError):
        parse([1, 2], "x.toml")


def test_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError) as info:
        load(tmp_path / "nope.toml")
    assert "cannot read" in str(info.value)


@pytest.mark.parametrize("day", ["2024-02-30", "2024-13-45", "2023-02-29"])
def test_a_cell_date_that_is_not_a_day_of_the_calendar_is_refused(tmp_path, day):
    e = _error(tmp_path, MINIMAL.replace('id = "a"\n', f'id = "a"\ndate = "{day}"\n'))
    assert "cell" in str(e) and "date" in str(e) and day in str(e) and "calendar" in str(e)

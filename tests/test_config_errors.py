"""Every error of matrix.toml and dependents.toml, word for word: the file, the key path, the
problem and the fix (each table is read by one walk of its declaration, knowledge/tables.py; these
hold the messages it must keep). Through the public readers and, once each, through the CLI."""

from __future__ import annotations

import pytest

from jaxcompat.commands import main
from jaxcompat.knowledge import config, dependents
from jaxcompat.model.matrix import ConfigError
from tests.helpers import MINIMAL, make_tree

# (what is replaced in MINIMAL ("": appended), by what, the error after "FILE: ")
MATRIX = [
    pytest.param('python = "3.11"',
                 'python = "3.11.2"',
                 "settings.python: invalid Python version '3.11.2'\n  fix: write a minor version as a string, e.g. "
                 'python = "3.11", or "auto"', id='settings-python'),
    pytest.param('python = "3.11"',
                 'python = "3.11"\ncase_timeout_s = 0',
                 'settings.case_timeout_s: expected a positive number, got 0\n  fix: e.g. case_timeout_s = 300',
                 id='settings-timeout'),
    pytest.param('python = "3.11"',
                 'python = "3.11"\nharness = ["pytest @ https://example.org/p.whl"]',
                 "settings.harness[0]: URL requirements are not allowed: 'pytest @ https://example.org/p.whl'\n  "
                 'fix: pin a released version from the package index', id='settings-harness-url'),
    pytest.param('python = "3.11"',
                 'python = "3.11"\ncases_dir = ""',
                 "settings.cases_dir: expected a non-empty string, got ''", id='settings-cases-dir'),
    pytest.param('[settings]\npython = "3.11"',
                 'settings = 1',
                 'settings: expected a table\n  fix: write [settings]', id='settings-not-a-table'),
    pytest.param('[settings]',
                 'cels = 1\n[settings]',
                 "cels: unknown key\n  fix: did you mean 'cell'? allowed keys here: cell, failure, grid, "
                 'requirement, settings', id='top-unknown'),
    pytest.param('\n[settings]\npython = "3.11"\n\n[[cell]]\nid = "a"\npins = { jax = "0.4.33", equinox = "0.11.7" }\n',
                 'cell = 1\n[settings]\npython = "3.11"\n',
                 'cell: expected an array of tables\n  fix: write each entry as a [[cell]] table',
                 id='cell-not-tables'),
    pytest.param('id = "a"\n',
                 '',
                 'cell[0].id: missing\n  fix: give every cell an id = "..."', id='cell-no-id'),
    pytest.param('pins = { jax = "0.4.33", equinox = "0.11.7" }',
                 '',
                 'cell[0].pins: missing\n  fix: e.g. pins = { jax = "0.4.33", equinox = "0.11.7" }', id='cell-no-pins'),
    pytest.param('id = "a"',
                 'id = "a b"',
                 "cell[0].id: invalid cell id 'a b'\n  fix: use letters, digits and . _ + - only (it becomes a "
                 'file name)', id='cell-bad-id'),
    pytest.param('id = "a"',
                 'id = "a"\npython = 3.11',
                 'cell[0].python: invalid Python version 3.11\n  fix: write a minor version as a string, e.g. '
                 'python = "3.11", or "auto"', id='cell-python'),
    pytest.param('pins = { jax = "0.4.33", equinox = "0.11.7" }',
                 'pins = "jax"',
                 'cell[0].pins: expected a table of dist = version\n  fix: e.g. pins = { jax = "0.4.33", equinox = '
                 '"0.11.7", diffrax = "*" }', id='cell-pins-not-a-table'),
    pytest.param('equinox = "0.11.7" }',
                 '"bad name!" = "1" }',
                 "cell[0].pins.bad name!: invalid distribution name 'bad name!'", id='cell-pin-name'),
    pytest.param('equinox = "0.11.7" }',
                 'equinox = "" }',
                 'cell[0].pins.equinox: empty version\n  fix: write "*" for any version', id='cell-pin-empty'),
    pytest.param('id = "a"',
                 'id = "a"\ndate = "2024-1-1"',
                 'cell[0].date: invalid date \'2024-1-1\'\n  fix: write date = "YYYY-MM-DD"', id='cell-date'),
    pytest.param('id = "a"',
                 'id = "a"\nconstraints = ["numpy", 2]',
                 "cell[0].constraints: expected a string or a list of strings, got ['numpy', 2]", id='cell-constraint'),
    pytest.param('id = "a"',
                 'id = "a"\nnote = 1',
                 'cell[0].note: expected a non-empty string, got 1', id='cell-note'),
    pytest.param('[[cell]]',
                 '[[grid]]\nid = "g"\n\n[[cell]]',
                 'grid[0].axes: expected a table of dist = [versions]\n  fix: e.g. axes = { jax = ["0.4.31", '
                 '"0.4.33"], equinox = ["0.11.6", "0.11.7"] }', id='grid-axes'),
    pytest.param('[[cell]]',
                 '[[grid]]\nid = "g{nope}"\naxes = { jax = ["0.4.33"] }\n\n[[cell]]',
                 "grid[0].id: bad id template 'g{nope}': 'nope'\n  fix: use placeholders among: {jax}",
                 id='grid-template'),
    pytest.param('[[cell]]',
                 '[[grid]]\naxes = { jax = ["0.4.33"] }\nexclude = [{ jaxx = "0.4.33" }]\n\n[[cell]]',
                 "grid[0].exclude[0].jaxx: unknown key\n  fix: did you mean 'jax'? allowed keys here: jax",
                 id='grid-exclude'),
    pytest.param('[[cell]]',
                 '[[grid]]\naxes = { jax = ["0.4.33"] }\nbackend = "tpuu"\n\n[[cell]]',
                 "grid[0][jax0.4.33].backend: unknown backend 'tpuu'\n  fix: use one of: cpu, cuda12, cuda13, rocm,"
                 ' tpu', id='grid-cell'),
    pytest.param('fix = "upgrade equinox to >=0.11.8"',
                 '',
                 'failure[0].fix: missing\n  fix: every [[failure]] needs id, affects, error, match, upstream and '
                 'fix', id='failure-missing-fix'),
    pytest.param('id = "demo-bug"',
                 'id = "demo-bug"\ntitle = ""',
                 "failure[demo-bug].title: expected a non-empty string, got ''", id='failure-title'),
    pytest.param('id = "demo-bug"',
                 'id = "demo-bug"\nstage = "run"',
                 "failure[demo-bug].stage: unknown stage 'run'\n  fix: use one of: resolve, import, case",
                 id='failure-stage'),
    pytest.param('cases = ["cases/test_demo.py::test_bug"]',
                 'cases = []',
                 'failure[demo-bug].cases: missing\n  fix: list the reproducing tests, e.g. cases = '
                 '["cases/test_x.py::test_y"]', id='failure-no-cases'),
    pytest.param('cases = ["cases/test_demo.py::test_bug"]',
                 'cases = [1]',
                 'failure[demo-bug].cases[0]: expected a node id string or a table, got 1\n  fix: e.g. '
                 '"cases/test_x.py::test_y"', id='failure-case-type'),
    pytest.param('cases = ["cases/test_demo.py::test_bug"]',
                 'cases = [{ affects = { jax = ">=0.4.32" } }]',
                 'failure[demo-bug].cases[0].case: missing\n  fix: write { case = "cases/test_x.py::test_y", '
                 'affects = {...} }', id='failure-case-table'),
    pytest.param('cases = ["cases/test_demo.py::test_bug"]',
                 'cases = ["cases/test_demo.py::test_bug", "cases/test_demo.py::test_bug"]',
                 "failure[demo-bug].cases: duplicate id 'cases/test_demo.py::test_bug'\n  fix: give each "
                 'failure[demo-bug].cases a unique id (grids generate ids from their template)',
                 id='failure-case-twice'),
    pytest.param('id = "demo-bug"',
                 'id = "demo-bug"\nbackend = ["gpuu"]',
                 "failure[demo-bug].backend[0]: unknown backend 'gpuu'\n  fix: use one of: cpu, cuda12, cuda13, "
                 'rocm, tpu', id='failure-backend'),
    pytest.param('match = "Unfortunately"',
                 'match = "Unfortunately ("',
                 'failure[demo-bug].match: invalid regular expression: missing ), unterminated subpattern at '
                 'position 14\n  fix: escape special characters, e.g. \\( \\. \\[', id='failure-match'),
    pytest.param('upstream = ["https://',
                 'upstream = ["http://',
                 'failure[demo-bug].upstream[0]: not an https URL: '
                 "'http://github.com/patrick-kidger/diffrax/issues/506'\n  fix: link the upstream issue, PR or "
                 'commit', id='failure-upstream'),
    pytest.param('affects = { jax = ">=0.4.32", equinox = "<0.11.8" }',
                 'affects = 1',
                 'failure[demo-bug].affects: expected a table of dist = specifier, or a list of them (OR-ed)\n  '
                 'fix: e.g. affects = { jax = ">=0.4.32", equinox = "<0.11.8" }', id='failure-affects'),
    pytest.param('affects = { jax = ">=0.4.32", equinox = "<0.11.8" }',
                 'affects = [{ jax = 1 }]',
                 'failure[demo-bug].affects[0].jax: expected a specifier string, got 1', id='failure-affects-value'),
    pytest.param('error = "XlaRuntimeError"',
                 'error = 1',
                 'failure[demo-bug].error: expected a string or a list of strings, got 1', id='failure-error'),
    pytest.param('id = "demo-bug"',
                 'id = "demo-bug"\nadvisory = "yes"',
                 "failure[demo-bug].advisory: expected true or false, got 'yes'", id='failure-advisory'),
    pytest.param('id = "demo-bug"',
                 'id = "demo-bug"\ncollateral = ["cases/test_nope.py"]',
                 "failure[demo-bug].collateral[0]: case file 'cases/test_nope.py' does not exist\n  fix: name a "
                 'file under cases/, e.g. "cases/test_callback_error_deferral.py::test_error_if"',
                 id='failure-collateral'),
    pytest.param('id = "demo-bug"',
                 'id = "demo-bug"\nupstreem = 1',
                 "failure[0].upstreem: unknown key\n  fix: did you mean 'upstream'? allowed keys here: advisory, "
                 'affects, backend, cases, collateral, error, fix, id, match, stage, title, upstream, workaround',
                 id='failure-unknown-before-id'),
    pytest.param('',
                 '\n[[requirement]]\npackage = "optimistix"\nrelease = "0.0.7"\nrequires = "equinox>=0.11.3"\n',
                 'requirement[0].note: missing or not a string\n  fix: e.g. package = "optimistix", release = '
                 '"0.0.7", requires = "equinox>=0.11.3", note = "reads eqx.StrictConfig, new in equinox 0.11.3"',
                 id='requirement-missing'),
    pytest.param('',
                 '\n[[requirement]]\npackage = "optimistix"\nrelease = "x.y"\nrequires = "equinox>=0.11.3"\nnote = '
                 '"n"\n',
                 'requirement[0].release: \'x.y\' is not a version\n  fix: write e.g. "0.0.7"',
                 id='requirement-release'),
    pytest.param('',
                 '\n[[requirement]]\npackage = "optimistix"\nrelease = "0.0.7"\nrequires = "equinox"\nnote = "n"\n',
                 "requirement[0].requires: 'equinox' names no range of another package\n  fix: write a package and "
                 'a range, e.g. "equinox>=0.11.3"', id='requirement-range'),
]

DEPS = '[[dependent]]\nname = "alpha"\nversion = "1.0"\n'

DEPENDENTS = [
    pytest.param('name = "alpha"', 'name = "Alpha_X"',
                 "dependent[Alpha_X].name: 'Alpha_X' is not a normalised distribution name\n  fix: write name = "
                 '"alpha-x"', id='name-normalised'),
    pytest.param('name = "alpha"\n', '',
                 'dependent[0].name: expected a non-empty string, got None', id='name-missing'),
    pytest.param('version = "1.0"', 'version = "1.0"\ndepends_on = ["equinoxx"]',
                 "dependent[alpha].depends_on: 'equinoxx' is not a package of the ecosystem\n  fix: did you mean "
                 "'equinox'? use some of: jax, jaxlib, equinox, diffrax, optimistix, lineax, chex", id='depends-on'),
    pytest.param('version = "1.0"', 'version = "1.0"\nnote = 1',
                 'dependent[alpha].note: expected a string, got 1', id='note'),
    pytest.param('version = "1.0"', 'version = "1.0"\nextras = [1]',
                 'dependent[alpha].extras: expected a string or a list of strings, got [1]', id='extras'),
    pytest.param('[[dependent]]\nname = "alpha"\nversion = "1.0"\n', '[settings]\nbudget_s = 60\n',
                 'dependent: no [[dependent]] table\n  fix: add one per project whose tests to run', id='no-dependent'),
    pytest.param('[[dependent]]', 'settings = 1\n[[dependent]]',
                 'settings: expected a table\n  fix: write [settings] with budget_s = SECONDS',
                 id='settings-not-a-table'),
    pytest.param('[[dependent]]', '[settings]\nbudget = 60\n\n[[dependent]]',
                 "settings.budget: unknown key\n  fix: did you mean 'budget_s'? allowed keys here: budget_s, "
                 'test_timeout_s', id='settings-unknown'),
    pytest.param('[[dependent]]', '[settings]\nbudget_s = 0\n\n[[dependent]]',
                 'settings.budget_s: expected a number of seconds > 0, got 0\n  fix: write budget_s = 1800',
                 id='settings-budget'),
    pytest.param('[[dependent]]', '[settings]\ntest_timeout_s = -1\n\n[[dependent]]',
                 'settings.test_timeout_s: expected a number of seconds > 0, got -1\n  fix: write test_timeout_s = '
                 '900', id='settings-test-timeout'),
    pytest.param('version = "1.0"', 'version = "1.0"\ntest = ["tests"]',
                 "dependent[alpha].test: unknown key\n  fix: did you mean 'test_timeout_s'? allowed keys here: "
                 'budget_s, cpu_devices, depends_on, env, extras, git, groups, name, note, path, ref, split, '
                 'test_timeout_s, tests, version, with', id='unknown-key'),
    pytest.param('[[dependent]]\nname = "alpha"\nversion = "1.0"\n', 'dependent = 1\n',
                 'dependent: expected an array of tables\n  fix: write each entry as a [[dependent]] table',
                 id='dependent-not-tables'),
]



@pytest.mark.parametrize("old, new, said", MATRIX)
def test_a_bad_matrix_file_is_refused_naming_the_key_and_the_fix(tmp_path, old, new, said):
    assert old in MINIMAL
    path = make_tree(tmp_path, MINIMAL.replace(old, new, 1) if old else MINIMAL + new)
    with pytest.raises(ConfigError) as info:
        config.load(path)
    assert str(info.value) == f"{path}: {said}"


@pytest.mark.parametrize("old, new, said", DEPENDENTS)
def test_a_bad_dependents_file_is_refused_naming_the_key_and_the_fix(tmp_path, old, new, said):
    assert old in DEPS
    path = tmp_path / "dependents.toml"
    path.write_text(DEPS.replace(old, new, 1))
    with pytest.raises(ConfigError) as info:
        dependents.load(path)
    assert str(info.value) == f"{path}: {said}"


def test_a_rules_file_is_validated_as_the_matrix_is(tmp_path):
    """``--rules FILE``: only [[failure]] tables, each read by the matrix's own declaration."""
    matrix = config.load(make_tree(tmp_path))
    rules = tmp_path / "rules.toml"
    rule = ('[[failure]]\nid = "x"\ncases = ["cases/test_demo.py::test_bug"]\naffects = { jax = ">=0.4" }\n'
            'error = "E"\nmatch = "m"\nupstream = ["https://x"]\nfix = "f"\n')
    for text, said in [
        ("[settings]\n", "settings: unknown key\n  fix: allowed keys here: failure"),
        ("", "failure: missing\n  fix: a rules file holds [[failure]] tables (id, affects, error, match, upstream, "
             "fix)"),
        (rule + "advisory = 1\n", "failure[x].advisory: expected true or false, got 1"),
        (rule.replace('"x"', '"demo-bug"'), f"failure[demo-bug].id: duplicate id 'demo-bug': {matrix.path} already "
                                             "defines it\n  fix: give the rule a new id (ids are shared by the matrix "
                                             "file and every --rules file)"),
    ]:
        rules.write_text(text)
        with pytest.raises(ConfigError) as info:
            config.merge_rules(matrix, rules)
        assert str(info.value) == f"{rules}: {said}"


def test_check_refuses_a_bad_matrix_before_anything_runs(tmp_path, capsys):
    path = make_tree(tmp_path, MINIMAL.replace('python = "3.11"', 'python = "3.9.1"'))
    rc = main(["check", "--matrix", str(path), "--reports", str(tmp_path / "reports"),
               "--state", str(tmp_path / "state"), "jax==0.4.33"])
    err = capsys.readouterr().err
    assert rc == 2 and err == (f"error: {path}: settings.python: invalid Python version '3.9.1'\n"
                               '  fix: write a minor version as a string, e.g. python = "3.11", or "auto"\n')
    assert not (tmp_path / "reports").exists() and not (tmp_path / "state").exists()


def test_crater_refuses_a_bad_dependents_file_before_anything_runs(tmp_path, capsys):
    matrix = make_tree(tmp_path)
    deps = tmp_path / "dependents.toml"
    deps.write_text(DEPS + 'depends_on = ["equinoxx"]\n')
    rc = main(["crater", "--matrix", str(matrix), "--dependents", str(deps), "--reports", str(tmp_path / "reports"),
               "--state", str(tmp_path / "state"), "jax==0.4.33"])
    err = capsys.readouterr().err
    assert rc == 2 and err == (f"error: {deps}: dependent[alpha].depends_on: 'equinoxx' is not a package of the "
                               "ecosystem\n  fix: did you mean 'equinox'? use some of: jax, jaxlib, equinox, diffrax, "
                               "optimistix, lineax, chex\n"), err
    assert not (tmp_path / "reports").exists()


@pytest.mark.parametrize("given, said", [
    ('id = 1', "grid[0].id: expected a string, got 1\n  fix: e.g. id = \"jax{jax}-eqx{equinox}\""),
    ('pins = "jax"', "grid[0].pins: expected a table of dist = version\n"
                     '  fix: e.g. pins = { jax = "0.4.33", equinox = "0.11.7", diffrax = "*" }'),
])
def test_a_grid_whose_id_or_pins_is_of_the_wrong_kind_is_refused(tmp_path, given, said):
    """Regression: a grid's ``id = 1`` or ``pins = "jax"`` raised AttributeError/TypeError (a traceback)."""
    grid = f'[[grid]]\naxes = {{ jax = ["0.4.33"] }}\n{given}\n\n[[cell]]'
    path = make_tree(tmp_path, MINIMAL.replace("[[cell]]", grid))
    with pytest.raises(ConfigError) as info:
        config.load(path)
    assert str(info.value) == f"{path}: {said}"

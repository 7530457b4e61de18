"""Root causes across dependents (issue 39, part 5): a broken test is attributed to the package its
failure lies in (its traceback's deepest frame outside its own dependent and the harness), and the
dependents failing through one package are one root cause. No jax: records with real-looking
tracebacks, as the plugin and pytest write them."""

from __future__ import annotations

import json

from jaxcompat.knowledge import roots
from jaxcompat.model.crater import DependentResult, Plan
from jaxcompat.model.roots import Attribution, RootCause
from jaxcompat.model.usertests import UserTest
from jaxcompat.model.vocab import DependentVerdict, UserTestStatus
from jaxcompat.operations import crater
from jaxcompat.report import roots as shown_roots
from tests.helpers import write_crater

SITE = "/home/ci/.jaxcompat/envs/check-b69d1363/lib/python3.12/site-packages"
STDLIB = "/usr/lib/python3.12"
CLOSURE = "ValueError: Closure-converted function called with different dynamic arguments"


def _tb(*frames: tuple[str, int, str]) -> str:
    """A traceback as ``traceback.format_list`` writes it (the plugin's short traceback)."""
    return "".join(f'  File "{p}", line {n}, in {f}\n    pass\n' for p, n, f in frames)


PYTEST_TOP = ((f"{SITE}/_pytest/python.py", 159, "pytest_pyfunc_call"),
              (f"{SITE}/pluggy/_callers.py", 103, "_multicall"))
# diffrax's own test calls diffeqsolve, jax carries it, equinox raises
DIFFRAX_THROUGH_EQUINOX = _tb(*PYTEST_TOP, ("test/test_adjoint.py", 88, "test_backsolve"),
                              (f"{SITE}/diffrax/_integrate.py", 1245, "diffeqsolve"),
                              (f"{SITE}/jax/_src/api.py", 655, "grad_f"),
                              (f"{SITE}/equinox/internal/_loop/checkpointed.py", 1018, "_to_linearize"))
# the real record of the jax 0.4.33 replay (reports/crater/replay-jax-0.4.33/dependents/dynamiqs.json)
DYNAMIQS_REAL = ('  File "tests/mesolve/test_adaptive.py", line 20, in test_gradient\n'
                 "    self._test_gradient(system, Tsit5(), gradient)\n"
                 '  File "tests/integrator_tester.py", line 72, in _test_gradient\n'
                 "    grads_ysave = jax.grad(loss_ysave)(system.params_default)\n"
                 '  File "<root>/.jaxcompat/envs/check-b69d1363-tests-9579a2/lib/python3.10/site-packages/equinox/'
                 'internal/_loop/checkpointed.py", line 1018, in _to_linearize\n    _out = _body_fun(_val)\n')


# -------------------------------------------------------------------- one traceback


def test_an_error_raised_in_a_companions_code_is_that_companions_through_the_packages_between():
    where = roots.attribute(DIFFRAX_THROUGH_EQUINOX, "optimistix")
    assert where == Attribution("equinox", ("diffrax",))  # pytest and pluggy are the harness; jax carries
    assert where.chain("optimistix") == "optimistix → diffrax → equinox"
    # the dependent is diffrax itself: its own frames are not a package it fails through
    assert roots.attribute(DIFFRAX_THROUGH_EQUINOX, "diffrax") == Attribution("equinox")


def test_the_real_weak_type_record_is_rooted_at_equinox():
    assert roots.attribute(DYNAMIQS_REAL, "dynamiqs") == Attribution("equinox")


def test_an_error_raised_in_jax_itself_is_jaxs():
    tb = _tb(*PYTEST_TOP, ("tests/test_flows.py", 40, "test_sample"),
             (f"{SITE}/equinox/_jit.py", 206, "__call__"),
             (f"{SITE}/jax/_src/core.py", 1510, "concrete_aval"))
    assert roots.attribute(tb, "flowjax") == Attribution("jax", ("equinox",))


def test_only_its_own_frames_and_the_harness_is_the_dependents_own_code():
    tb = _tb(*PYTEST_TOP, ("tests/test_x.py", 12, "test_shape"), (f"{SITE}/evermore/parameter.py", 80, "value"),
             (f"{STDLIB}/functools.py", 981, "__get__"), ("<frozen importlib._bootstrap>", 241, "_call"))
    assert roots.attribute(tb, "evermore") == Attribution("evermore")  # its installed package is its own
    # pytest.raises that did not raise: raised in _pytest, the test's own failure
    raises = _tb(("tests/test_x.py", 30, "test_raises"), (f"{SITE}/_pytest/python_api.py", 1020, "raises"))
    assert roots.attribute(raises, "evermore") == Attribution("evermore")
    assert roots.attribute("", "evermore") == Attribution("evermore")


def test_pytests_own_frame_format_is_read_too():
    tb = ("tests/test_solve.py:88: in test_solve\n    x = lx.linear_solve(op, b)\n"
          f"{SITE}/lineax/_solve.py:812: in linear_solve\n    return _linear_solve(op)\n"
          f"{SITE}/jaxlib/xla_client.py:91: in execute\n    raise XlaRuntimeError\n")
    assert roots.attribute(tb, "optimistix") == Attribution("jaxlib", ("lineax",))


def test_paths_map_to_distributions():
    known = roots.known_names({"typing-extensions": "4.12", "ml-dtypes": "0.5.0", "scikit-learn": "1.5"}, ["dynamiqs"])
    at = roots.package_of
    assert at(f"{SITE}/jax/_src/interpreters/ad.py", "dynamiqs", known) == "jax"
    assert at(f"{SITE}/ml_dtypes/_finfo.py", "dynamiqs", known) == "ml-dtypes"
    assert at(f"{SITE}/typing_extensions.py", "dynamiqs", known) == "typing-extensions"
    assert at(f"{SITE}/sklearn/base.py", "dynamiqs", known) == "scikit-learn"
    assert at(f"{SITE}/someplugin/x.py", "dynamiqs", known) == "someplugin"  # unknown: the module's name
    assert at("/usr/local/lib/python3.12/dist-packages/equinox/_jit.py", "dynamiqs", known) == "equinox"
    assert at(f"{SITE}/foo-1.0-py3.12.egg/foo/bar.py", "dynamiqs", known) == "foo"
    # an editable install of equinox; the dependent's own checkout (named by its commit)
    assert at("/home/me/src/equinox/equinox/_module.py", "dynamiqs", known) == "equinox"
    assert at("/srv/state/crater/src/dynamiqs-0a1b2c3/tests/test_x.py", "dynamiqs", known) == "dynamiqs"
    assert at("/srv/state/crater/src/dynamiqs-0a1b2c3/dynamiqs/solver.py", "dynamiqs", known) == "dynamiqs"
    assert at("C:\\venv\\Lib\\site-packages\\equinox\\_jit.py", "dynamiqs", known) == "equinox"
    for harness in (f"{SITE}/_pytest/runner.py", f"{SITE}/pluggy/_hooks.py", f"{STDLIB}/contextlib.py",
                    f"{SITE}/jaxcompat/plugin/pytest_plugin.py", "<string>"):
        assert at(harness, "dynamiqs", known) == "", harness


# -------------------------------------------------------------------- across dependents


def _result(name: str, *broken: tuple[str, str, str]) -> DependentResult:
    """A broken dependent: (test, message, traceback) per broken test, one test that passes."""
    tests = [UserTest(t, "failed", "passed", UserTestStatus.BROKEN, message=m, traceback=tb)
             for t, m, tb in broken]
    tests.append(UserTest("tests/test_x.py::test_fine", "passed", "passed", UserTestStatus.PASS))
    return DependentResult(name, DependentVerdict.BROKEN, version="1.0", tests=tests,
                                  ran={"candidate": len(tests), "baseline": len(tests)},
                                  versions={"candidate": {"jax": "0.4.33", "equinox": "0.11.6"},
                                            "baseline": {"jax": "0.4.31", "equinox": "0.11.6"}})


def _through_equinox(test_file: str, func: str, *between: str) -> str:
    return _tb(*PYTEST_TOP, (test_file, 10, func), *((f"{SITE}/{p}/_x.py", 5, "f") for p in between),
               (f"{SITE}/equinox/internal/_loop/checkpointed.py", 1018, "_to_linearize"))


def _shared_root_results() -> list[DependentResult]:
    return [
        _result("diffrax", ("test/test_a.py::test_one", CLOSURE, _through_equinox("test/test_a.py", "test_one")),
                ("test/test_a.py::test_two", CLOSURE, _through_equinox("test/test_a.py", "test_two"))),
        _result("dynamiqs", ("tests/test_b.py::test_grad", CLOSURE,
                             _through_equinox("tests/test_b.py", "test_grad", "diffrax"))),
        _result("flowjax", ("tests/test_c.py::test_bij", "TypeError: unhashable type: 'DynamicJaxprTracer'",
                            _tb(("tests/test_c.py", 3, "test_bij"), (f"{SITE}/equinox/_jit.py", 206, "__call__")))),
        _result("evermore", ("tests/test_d.py::test_own", "AssertionError: 1.0 != 2.0",
                             _tb(("tests/test_d.py", 9, "test_own")))),
    ]


def test_dependents_failing_through_one_companion_are_one_root_with_every_group():
    groups = crater.group(_shared_root_results())
    closure = next(g for g in groups if g.signature.error == "ValueError")
    assert closure.root == "equinox" and closure.through == []  # most of its tests call equinox directly
    causes = crater.root_causes(groups, {"jax", "jaxlib"})
    assert [c.package for c in causes] == ["equinox", "evermore"]
    eqx = causes[0]
    assert eqx.dependents == {"diffrax": 2, "dynamiqs": 1, "flowjax": 1} and eqx.own_tests == 0
    assert len(eqx.groups) == 2 and closure.signature.key in eqx.groups  # two groups, one root
    assert eqx.through["dynamiqs"] == ["dynamiqs → diffrax → equinox"]
    assert not eqx.candidate and causes[1].own_tests == 1 and causes[1].dependents == {}


def test_a_dependent_of_the_crater_that_broke_itself_is_the_root_of_those_failing_through_it():
    """equinox's own suite (its package installed from its checkout) and diffrax's, failing in equinox's code."""
    results = [_result("equinox", ("tests/test_loop.py::test_checkpointed", CLOSURE,
                                   _tb(("tests/test_loop.py", 40, "test_checkpointed"),
                                       (f"{SITE}/equinox/internal/_loop/checkpointed.py", 1018, "_to_linearize")))),
               _result("diffrax", ("test/test_a.py::test_one", CLOSURE,
                                   _through_equinox("test/test_a.py", "test_one")))]
    causes = crater.root_causes(crater.group(results))
    assert len(causes) == 1
    eqx = causes[0]
    assert (eqx.package, eqx.dependents, eqx.own_tests, eqx.tests) == ("equinox", {"diffrax": 1}, 1, 2)
    said = shown_roots.sentence(eqx)
    assert said.startswith("equinox broke: 1 test of 1 dependent fail through it (diffrax 1); "
                           "its own suite broke too (1 test) — group: ValueError: ")


def test_a_root_in_the_candidate_is_named_the_candidate():
    tb = _tb(("tests/test_x.py", 3, "test_x"), (f"{SITE}/jax/_src/core.py", 1510, "concrete_aval"))
    causes = crater.root_causes(crater.group([_result("chex", ("tests/test_x.py::test_x", "TypeError: bad", tb))]),
                                {"jax", "jaxlib"})
    assert causes[0].candidate and shown_roots.sentence(causes[0]).startswith("jax (the candidate) broke: 1 test")


def test_a_moved_package_is_what_the_candidate_changes_not_what_both_sides_pin():
    plan = Plan(("jax==0.4.33", "equinox==0.11.6"), ("jax==0.4.31", "equinox==0.11.6"))
    assert crater.moved(plan, _shared_root_results()) == {"jax"}


def test_the_reports_show_the_tree_ahead_of_the_groups(tmp_path):
    plan = Plan(("jax==0.4.33",), ("jax==0.4.31",))
    results = _shared_root_results()
    text, code = write_crater(tmp_path, results, {"candidate": list(plan.candidate), "baseline": list(plan.baseline)},
                              1.0, 1, plan)
    assert code == 1
    data = json.loads((tmp_path / "crater.json").read_text())
    tree = data["root_causes"]
    assert [t["package"] for t in tree] == ["equinox", "evermore"]
    assert tree[0]["dependents"] == {"diffrax": 2, "dynamiqs": 1, "flowjax": 1} and tree[0]["tests"] == 4
    keys = {g["signature"]: g for g in data["groups"]}
    assert set(tree[0]["groups"]) <= set(keys) and all(keys[k]["root"] == "equinox" for k in tree[0]["groups"])
    assert RootCause.from_dict(tree[0]).to_dict() == tree[0]
    line = "equinox broke: 4 tests of 3 dependents fail through it (diffrax 2, dynamiqs 1, flowjax 1) — 2 groups: "
    for name in ("crater.md", "crater.html"):
        page = (tmp_path / name).read_text()
        assert line in page and "through: dynamiqs → diffrax → equinox" in page, name
        assert page.index(line) < page.index("broken test(s) in"), name  # ahead of the groups
    assert "evermore broke: 1 test of its own suite fail in its own code" in text


# -------------------------------------------------------------------- what the plugin records


def test_the_plugin_keeps_where_the_call_enters_each_package_so_the_chain_is_known(tmp_path, monkeypatch):
    """A user's project calls ``outer``, which calls ``inner``, which raises: the recorded traceback
    keeps the project's frame, the first frame in ``outer`` and ``inner``'s raising frame (not every
    frame: ``outer._helper`` is left out), and the root and its chain read back from it."""
    import importlib
    import sys

    from jaxcompat.plugin import pytest_plugin

    site = tmp_path / "venv" / "lib" / "python3.12" / "site-packages"
    outer = "def call(f):\n    return _helper(f)\n\n\ndef _helper(f):\n    return f()\n"
    inner = "def boom():\n    return _deep()\n\n\ndef _deep():\n    raise ValueError('x')\n"
    for name, code in (("rootsouter", outer), ("rootsinner", inner)):
        (site / name).mkdir(parents=True)
        (site / name / "__init__.py").write_text(code)
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "test_roots_x.py").write_text("import rootsinner\nimport rootsouter\n\n\n"
                                          "def test_x():\n    rootsouter.call(rootsinner.boom)\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(proj))
    monkeypatch.setenv("JAXCOMPAT_OWN_FRAMES", str(proj))
    try:
        module = importlib.import_module("test_roots_x")
        try:
            module.test_x()
        except ValueError as e:
            tb = pytest_plugin._short_traceback(e)
    finally:
        for name in ("test_roots_x", "rootsouter", "rootsinner"):
            sys.modules.pop(name, None)
    funcs = [ln.rsplit(" in ", 1)[-1] for ln in tb.splitlines() if ln.lstrip().startswith("File ")]
    assert funcs == ["test_x", "call", "boom", "_deep"], tb
    assert roots.attribute(tb, "proj") == Attribution("rootsinner", ("rootsouter",))


def test_the_recorded_jax_0_4_33_replay_roots_its_one_group_at_equinox():
    """The stored result of the replay (dynamiqs 0.2.0 on jax 0.4.33, reports/crater/replay-jax-0.4.33):
    its weak-type group fails in equinox's checkpointed loop inside dynamiqs' tests."""
    from pathlib import Path

    stored = Path(__file__).resolve().parents[1] / "reports/crater/replay-jax-0.4.33/dependents/dynamiqs.json"
    res = DependentResult.from_dict(json.loads(stored.read_text(encoding="utf-8")))
    plan = Plan(("jax==0.4.33", "equinox==0.11.6"), ("jax==0.4.31", "equinox==0.11.6"))
    groups = crater.group([res])
    causes = crater.root_causes(groups, crater.moved(plan, [res]))
    assert [(g.root, len(g.attributions)) for g in groups] == [("equinox", 10)]
    assert [(c.package, c.dependents, c.candidate) for c in causes] == [("equinox", {"dynamiqs": 10}, False)]
    assert "jax" in crater.moved(plan, [res]) and "equinox" not in crater.moved(plan, [res])


def test_a_rules_package_roots_a_failure_whose_frames_the_traceback_hides():
    """Seen replaying jax 0.4.32 on the core (reports/crater/seed-jax-0.4.32-asof): optimistix's 20
    weak-type tests were "lineax broke", because jax's traceback filtering hides equinox's own frames
    and the deepest frame kept is lineax's operator. The rule explaining them (its ranges name
    equinox besides jax) says where the failure lies; the frames say the way there."""
    from pathlib import Path

    from jaxcompat.knowledge.config import load

    failures = load(Path(__file__).resolve().parent.parent / "matrix.toml").failures
    hidden = _tb(*PYTEST_TOP, ("tests/test_fixed_point.py", 85, "test_fixed_point_jvp"),
                 ("optimistix/_ad.py", 109, "_implicit_impl_jvp"),
                 (f"{SITE}/lineax/_solve.py", 781, "linear_solve"), (f"{SITE}/lineax/_operator.py", 476, "__call__"))
    res = _result("optimistix", ("tests/test_fixed_point.py::test_fixed_point_jvp", f"{CLOSURE}.", hidden))
    res.tests[0].explained_by = "weak-type-closure"
    [by_frames] = crater.group([res])
    assert by_frames.root == "lineax"  # the frames alone
    [g] = crater.group([res], failures, {"jax", "jaxlib"})
    assert g.root == "equinox" and g.through == ["lineax"]
    [cause] = crater.root_causes([g], {"jax", "jaxlib"})
    assert cause.package == "equinox"
    # a rule over the candidate's own package leaves the frames to say it (equinox 0.12.0 as candidate)
    assert roots.rule_package(next(f for f in failures if f.id == "weak-type-closure"), {"equinox"}) == ""


def test_a_group_has_one_root_the_rules_package_even_in_that_packages_own_suite():
    """Seen replaying jax 0.4.32 on the core: one group (the rule weak-type-closure, whose ranges
    name equinox) said "equinox broke: 88 tests ... in its own code" and "jax (the candidate) broke:
    2 tests ... through it" — equinox's own tests whose frames end in jax's. A group has exactly one
    root; a rule's ranges say which."""
    from pathlib import Path

    from jaxcompat.knowledge.config import load

    failures = load(Path(__file__).resolve().parent.parent / "matrix.toml").failures
    own = _tb(*PYTEST_TOP, ("tests/test_while_loop.py", 40, "test_backward_checkpointed"),
              ("equinox/internal/_loop/checkpointed.py", 1018, "_to_linearize"))
    in_jax = _tb(*PYTEST_TOP, ("tests/test_while_loop.py", 40, "test_backward_checkpointed"),
                 (f"{SITE}/jax/_src/interpreters/ad.py", 511, "linearize"))
    res = _result("equinox", *[(f"tests/test_while_loop.py::test_own{i}", f"{CLOSURE}.", own) for i in range(3)],
                  *[(f"tests/test_while_loop.py::test_jax{i}", f"{CLOSURE}.", in_jax) for i in range(2)])
    for t in res.broken():
        t.explained_by = "weak-type-closure"
    diffrax = _result("diffrax", ("test/test_a.py::test_one", f"{CLOSURE}.", _through_equinox("test/test_a.py",
                                                                                              "test_one")))
    diffrax.tests[0].explained_by = "weak-type-closure"
    moved = {"jax", "jaxlib"}
    [g] = crater.group([res, diffrax], failures, moved)
    assert g.root == "equinox" and {where.root for _, where in g.attributions} == {"equinox"}
    causes = crater.root_causes([g], moved)
    assert [(c.package, c.own_tests, c.dependents) for c in causes] == [("equinox", 5, {"diffrax": 1})]
    assert not any(c.candidate for c in causes)
    # without the rule the frames say it, and still one root per group (the most of its tests')
    for t in res.broken():
        t.explained_by = None
    groups = crater.group([res], (), moved)
    for g in groups:
        assert len({where.root for _, where in g.attributions}) == 1, g.signature.key


def test_two_dependents_own_failing_asserts_in_one_group_are_each_their_own_not_one_through_the_other():
    """Red team: flowjax's 5 and evermore's 2 tests fail on their own `assert jnp.allclose(...)` with
    the same message, so one group (a test file's frame names no package); laying the group's one
    root over every test said "flowjax broke: 2 tests of 1 dependent fail through it (evermore 2)" —
    flowjax is not even installed beside evermore. Only a rule's group has one root laid over it."""
    message = "AssertionError: assert Array(False, dtype=bool)"

    def dep(name: str, n: int) -> DependentResult:
        return _result(name, *[(f"tests/test_x.py::test_{i}", message,
                                _tb(*PYTEST_TOP, ("tests/test_x.py", 10, f"test_{i}"))) for i in range(n)])

    moved = {"jax", "jaxlib"}
    [g] = crater.group([dep("flowjax", 5), dep("evermore", 2)], (), moved)
    assert sorted((d, w.root, w.through) for d, w in set(g.attributions)) == [
        ("evermore", "evermore", ()), ("flowjax", "flowjax", ())]
    causes = crater.root_causes([g], moved)
    assert sorted((c.package, c.own_tests, c.dependents) for c in causes) == [("evermore", 2, {}), ("flowjax", 5, {})]

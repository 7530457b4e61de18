"""An import-stage rule explains a user's failing test only where the failure passes through the
package the rule is about (operations/usertests.explain, ``_through``). Found by red team 8: without
that check a project's OWN code using an API jax/jaxlib removed fails with the very message an import
rule documents for equinox, and the test was said to be "equinox-import-…" with the fix "upgrade
equinox", its traceback hidden and jax's API history not asked. Plain pytest: the test fails in the
project's own file; upgrading equinox does not fix it."""

from __future__ import annotations

from pathlib import Path

from jaxcompat.knowledge.config import load
from jaxcompat.model.outcomes import RawResult
from jaxcompat.model.usertests import Observed
from jaxcompat.operations import usertests

REPO = Path(__file__).resolve().parents[1]
VERSIONS = {"jax": "0.6.1", "jaxlib": "0.6.1", "equinox": "0.12.1", "pytest": "8.3.0"}
NAME = "tests/test_own.py::test_device_class_from_jaxlib"
OWN_TB = ('  File "tests/test_own.py", line 3, in test_device_class_from_jaxlib\n'
          '    from jaxlib.xla_extension import Device\n')


def _classify(message: str, error_types: list[str], phase: str = "call"):
    matrix = load(REPO / "matrix.toml")  # the project's real rules
    before = Observed(results={NAME: RawResult(case=NAME, status="passed")},
                      versions={**VERSIONS, "jax": "0.6.0", "jaxlib": "0.6.0"})
    after = Observed(results={NAME: RawResult(case=NAME, status="failed", error_types=error_types, phase=phase,
                                              message=message, traceback=OWN_TB)}, versions=VERSIONS)
    [t] = usertests.classify(after, before, matrix, "cpu")
    return t


def test_own_code_importing_a_removed_jaxlib_module_is_not_blamed_on_equinox():
    t = _classify("ModuleNotFoundError: No module named 'jaxlib.xla_extension'",
                  ["ModuleNotFoundError", "ImportError", "Exception"])
    assert t.cls == "broken"  # right, and unchanged by the diff
    assert t.explained_by is None, (t.explained_by, t.fix)  # now: equinox-import-xla-extension, "upgrade equinox"


def test_own_code_using_a_removed_jax_core_name_is_not_blamed_on_equinox():
    versions_note = "jax 0.7+: the generic message equinox-import-core-primitive documents"
    VERSIONS.update(jax="0.7.0", jaxlib="0.7.0", equinox="0.11.10")
    try:
        t = _classify("AttributeError: module 'jax.core' has no attribute 'Primitive'",
                      ["AttributeError", "Exception"])
    finally:
        VERSIONS.update(jax="0.6.1", jaxlib="0.6.1", equinox="0.12.1")
    assert t.explained_by is None, (versions_note, t.explained_by, t.fix)


def test_crater_does_not_make_equinox_the_root_of_a_dependent_s_own_code():
    """F1 in the crater: the same own-code failure of a dependent (``mydep``, which does not import equinox in
    that test) is grouped under the equinox import rule and its root cause is said to be equinox (the rule's
    package), not the dependent's own code; and ``crater --bisect`` (unexplained, the default) no longer
    bisects it, nor is a rule drafted for it."""
    from jaxcompat.model.crater import DependentResult
    from jaxcompat.model.vocab import DependentVerdict
    from jaxcompat.operations import crater

    VERSIONS.update(jax="0.7.0", jaxlib="0.7.0", equinox="0.11.10")
    try:
        t = _classify("AttributeError: module 'jax.core' has no attribute 'Primitive'", ["AttributeError", "Exception"])
    finally:
        VERSIONS.update(jax="0.6.1", jaxlib="0.6.1", equinox="0.12.1")
    t.traceback = '  File "mydep/prims.py", line 3, in make\n    p = jax.core.Primitive("p")\n'
    res = DependentResult("mydep", DependentVerdict.BROKEN, tests=[t],
                          versions={"candidate": {"jax": "0.7.0", "equinox": "0.11.10"},
                                    "baseline": {"jax": "0.6.0", "equinox": "0.11.10"}})
    [g] = crater.group([res], load(REPO / "matrix.toml").failures, {"jax", "jaxlib"})
    assert (g.explained_by, g.root) == (None, "mydep"), (g.explained_by, g.root)  # now: the rule, "equinox"


def test_a_module_that_itself_imports_a_removed_jax_module_is_not_blamed_on_equinox():
    """The collection-phase variant (the case the new rule reading is meant for): the test module's OWN
    module-level ``from jax.experimental import host_callback`` (jax >= 0.8 removed it), equinox 0.10.2 installed
    but never imported by this module. Gating on ``phase == collect`` would not be enough: the traceback's last
    frame is the project's own file, not equinox's (``roots.rule_package`` names the package to look for)."""
    VERSIONS.update(jax="0.8.0", jaxlib="0.8.0", equinox="0.10.2")
    try:
        t = _classify("ModuleNotFoundError: No module named 'jax.experimental.host_callback'",
                      ["ModuleNotFoundError", "ImportError", "Exception"], phase="collect")
    finally:
        VERSIONS.update(jax="0.6.1", jaxlib="0.6.1", equinox="0.12.1")
    assert t.explained_by is None, (t.explained_by, t.fix)  # now: equinox-import-host-callback

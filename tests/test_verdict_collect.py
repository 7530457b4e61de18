"""The verdict where a whole test module could not be collected on one side (red team, found after
the reference model: its suites never generate a collection error). The crater's runs are scripted
by test_verdict_model's fakes; a module's collection error is laid over them here."""

from __future__ import annotations

import pytest

from jaxcompat.model.outcomes import RawResult
from jaxcompat.model.vocab import Phase
from tests import test_verdict_model as tvm
from tests.test_verdict_model import FILES, _crater, world  # noqa: F401 - world is a fixture
from tests.verdict_model import ABSENT, PASSED, SKIPPED, Facts

F0, F1 = FILES[0], FILES[1]


def _facts(name: str, after: str, before: str) -> Facts:
    return Facts(name, (after,), (before,), aa=before)


def _module_error(side: str, message: str) -> type:
    class Scripted(tvm.Script):  # F0 cannot be imported on ``side`` in its whole run
        def observe(self, cell, matrix, state_dir, target, nodeids=None):
            o = super().observe(cell, matrix, state_dir, target, nodeids)
            if tvm._side(cell) == side and not nodeids:
                o.results = {k: v for k, v in o.results.items() if not k.startswith(F0)}
                o.results[F0] = RawResult(case=F0, status="failed", phase=Phase.COLLECT, message=message)
                o.error = ""
            return o
    return Scripted


def _run(w, monkeypatch, tmp_path, suite: list[Facts], scripted: type, split: int = 1) -> tuple[int, str]:
    monkeypatch.setattr(tvm, "Script", scripted)
    run = {"deps": [("alpha", suite, split, False)], "reruns": 1, "aa": False, "shards": 2, "mishap": "none",
           "which": 0}
    code, report, _ = _crater(w, run, tmp_path)
    return code, report["dependents"][0]["verdict"]


@pytest.mark.parametrize("split", [1, 2])
def test_a_module_not_collected_in_the_baseline_never_makes_a_suite_skipped_in_the_candidate_safe(
        world, monkeypatch, tmp_path, split):  # noqa: F811 - the fixture
    """F0 did not import in the baseline and passes in the candidate; F1's tests ran in the baseline
    and all skip in the candidate: no test ran on both sides. Said "safe", exit 0 (the module's error
    counted as the baseline's run of its tests)."""
    suite = [_facts(f"{F0}::a{i}", PASSED, ABSENT) for i in range(2)]
    suite += [_facts(f"{F1}::b{i}", SKIPPED, PASSED) for i in range(3)]
    code, verdict = _run(world, monkeypatch, tmp_path, suite,
                         _module_error("baseline", "ImportError: cannot import name 'shard_map' from 'jax'"), split)
    assert (code, verdict) == (1, "none-ran")


@pytest.mark.parametrize("other", ["skipped", "new"])
def test_a_module_that_no_longer_imports_is_broken_beside_skips(world, monkeypatch, tmp_path, other):  # noqa: F811
    """F0's tests passed before and their module no longer imports in the candidate (jax removed a
    name it reads): broken, not "none-ran … all skipped or not collected"."""
    suite = [_facts(f"{F0}::a{i}", ABSENT, PASSED) for i in range(3)]
    suite += [_facts(f"{F1}::b", SKIPPED, PASSED)] if other == "skipped" else [_facts(f"{F1}::new", PASSED, ABSENT)]
    code, verdict = _run(world, monkeypatch, tmp_path, suite,
                         _module_error("candidate", "AttributeError: module 'jax' has no attribute 'tree_map'"))
    assert (code, verdict) == (1, "broken")

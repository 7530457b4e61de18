"""Take a rule out, and let the tool find it again: on recorded real observations, no network.

Each file in ``tests/data/unknown/`` is a real run, recorded: a ``check`` of a combination the rule
covers with the rule left out, and the ``bisect --from`` region that followed (every step's
observation, the releases walked along each package, their dates). Regenerate one with::

    python -m jaxcompat check --without-rule weak-type-closure jax==0.4.33 equinox==0.11.6 --reports R
    python -m jaxcompat bisect --without-rule weak-type-closure --from R/check.json --reports R
    python tests/data/unknown/pack.py weak-type-closure R

The replay asks exactly the questions the real bisection asked (a step not recorded would say
"not-run" and the region would differ). The drafted rule must give back the removed rule's bounds
at release granularity, with its error and its cases, and judging the observations with the
draft must turn the regressions into ``reproduced`` and change nothing else.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from jaxcompat.knowledge import config, drafts
from jaxcompat.knowledge.outcomes import reclassify
from jaxcompat.model.outcomes import CellResult
from jaxcompat.model.vocab import CellStatus
from jaxcompat.operations import region
from jaxcompat.operations.bisect import Observe, Target, observed_cell
from jaxcompat.report import draftrules
from tests.helpers import specs_equal

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "unknown"
RECORDED = sorted(p.stem for p in DATA.glob("*.json"))


def test_there_are_recordings():
    assert {"weak-type-closure", "find-top-trace-0110"} <= set(RECORDED)


@pytest.mark.parametrize("rule_id", RECORDED)
def test_the_tool_bounds_a_removed_rule_again(rule_id, tmp_path):
    rec = json.loads((DATA / f"{rule_id}.json").read_text())
    full = config.load(ROOT / "matrix.toml")
    rule = full.failure(rule_id)
    without = replace(full, failures=tuple(f for f in full.failures if f.id != rule_id))

    # 1. the check, judged without the rule: regressions, one signature
    check = CellResult.from_dict(rec["check"])
    judged = reclassify(check, without.failures)
    assert any(r.outcome == "regression" for r in judged.results)
    assert not any(r.outcome == "regression" for r in reclassify(check, full.failures).results)
    groups = drafts.unexplained([judged])
    assert len(groups) == 1, [s.key for s in groups]
    sig, group = next(iter(groups.items()))

    # 2. the region, replayed from the recorded steps
    recorded = rec["region"]
    observations = [o for b in recorded["bisections"] for o in b["observations"]] + [
        c["observation"] for c in recorded["corners"]]
    candidates = {b["package"]: b["candidates"] for b in recorded["bisections"]}
    seen = {a: check.versions[a] for a in recorded["seen"]}
    target = Target.of_signature(sig, sorted(group.cases), seen)
    reg = region.bound(without, target, seen, axes=list(recorded["seen"]), python="3.11", state_dir=tmp_path,
                       observe=replay(observations), candidates=candidates, dates=rec["dates"],
                       progress=lambda m: None)
    assert reg.clause == recorded["clause"] and reg.shape == recorded["shape"]
    assert reg.environments == recorded["environments"]

    # 3. the draft gives the rule back: bounds at release granularity, error, cases
    d = drafts.draft(group, [reg.clause], "a replay")
    assert len(rule.affects) == 1
    for package in ("jax", "equinox"):
        drafted, documented = d["affects"][0].get(package, ""), rule.affects[0].get(package, "")
        assert specs_equal(drafted, documented, candidates[package]), (package, drafted, str(documented))
    assert set(d["error"]) <= set(rule.errors)
    failed = {r.case for r in judged.results if r.outcome == "regression"}
    assert {e.case for e in rule.cases if e.case in failed} <= set(d["cases"]) == failed

    # 4. valid as a rules file, and verified: regressions become reproduced, nothing else moves
    path = draftrules.write(tmp_path / draftrules.FILE, [d], without)
    report = drafts.verify([check] + [observed_cell(o) for o in observations], without, path)
    assert report["other_changes"] == []
    assert report["turned_reproduced"] >= len(failed)


def replay(observations: list[dict]) -> Observe:
    """An ``Observe`` that answers from recorded observations (by the requirements asked for)."""
    seen = {tuple(sorted(o["requirements"])): o for o in observations}

    def observe(reqs: list[str], cell_id: str, cases: list[str]) -> CellResult:
        o = seen.get(tuple(sorted(reqs)))
        if o is None:
            return CellResult(id=cell_id, python="", backend="cpu", status=CellStatus.NOT_RUN,
                              message=f"not recorded: {' '.join(sorted(reqs))}")
        return observed_cell(o, cases)
    return observe

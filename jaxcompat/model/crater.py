"""The crater's record of one dependent (``DependentResult``: its verdict, its tests on both sides,
what it cost) and the one invariant over many of them (``decision``: exit 0 only when every
dependent was judged on both sides with tests run in the candidate; model/verdicts.py). Built by
operations/crater.py, rendered by report/crater.py, stored as dependents/NAME.json."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field

from jaxcompat._util.redact import redact_text
from jaxcompat._util.text import last_line
from jaxcompat.model import verdicts
from jaxcompat.model.health import Health
from jaxcompat.model.index import NO_INDEX, IndexOptions
from jaxcompat.model.matrix import AUTO
from jaxcompat.model.records import Record, RecordError, attr
from jaxcompat.model.usertests import Comparison, UserTest
from jaxcompat.model.vocab import DependentVerdict, UserTestStatus


@dataclass(frozen=True)
class Plan:
    """What one crater run compares: the candidate and the baseline (requirements), where releases
    come from, and the date the dependents are taken as of (their newest release before it)."""

    candidate: tuple[str, ...]
    baseline: tuple[str, ...]
    index: IndexOptions = NO_INDEX
    python: str = AUTO
    as_of: str | None = None
    reruns: int = 1  # what broke is run this many more times on both sides before blame
    aa: bool = False  # the baseline run twice: the tests that flip by themselves are learned
    flaky_file: str = ""  # where learned flakiness is kept ("": <state>/flaky.json)
    # a dependent's baseline side re-used from the result cache while nothing that decides it moved
    # (userrun.side_key; --no-cache: False); never part of the key: it changes no answer
    reuse_baseline: bool = field(default=True, compare=False)
    # this invocation (one shard) of the run: written with its stored plan and into each result it
    # writes, so a merge takes no result an earlier run of the same key left under the same name
    run_id: str = field(default_factory=lambda: secrets.token_hex(8), compare=False)
    # the run its shards share (operations/crater.run_of: --run, $JAXCOMPAT_RUN_ID, else the CI run; "":
    # as run_of says of the environment): a merge takes no shard of another (an earlier night's)
    run: str = field(default="", compare=False)

    @property
    def key(self) -> str:
        """Which run a stored result belongs to (a merge takes no other's): the candidate, the baseline,
        the day, the Python and where releases come from; credentials redacted."""
        return json.dumps([[redact_text(t) for t in self.candidate], [redact_text(t) for t in self.baseline],
                           self.as_of or "", self.python, self.index.to_dict()])

    @classmethod
    def from_key(cls, key: str) -> Plan:
        """The plan a key names, as far as it says (credentials stay redacted): what a merge reports."""
        said = json.loads(key)
        return cls(tuple(said[0]), tuple(said[1]), as_of=said[2] or None, python=said[3] if len(said) > 3 else AUTO,
                   index=IndexOptions.from_dict(said[4] if len(said) > 4 else {}))


@dataclass
class DependentResult(Record):
    name: str
    verdict: DependentVerdict
    version: str = ""  # the release; for a git source, the commit by its nearest tag (git describe --tags)
    commit: str = ""  # a git source: the commit its ref named (now, or as of --as-of)
    absent: list[str] = field(default_factory=list)  # files of the checkout its repository lacks
    source: str = ""
    cause: str = ""  # why it was not judged (or, broken: nothing); one line
    caps: list[str] = field(default_factory=list)  # its own requirements that exclude a side
    ran: dict[str, int] = field(default_factory=dict)  # tests that ran, per side
    classes: dict[str, int] = field(default_factory=dict)
    tests: list[UserTest] = field(default_factory=list)
    versions: dict[str, dict[str, str]] = field(default_factory=dict)  # per side: the ecosystem as installed
    test_deps: str = ""
    python: str = ""
    seconds: float = 0.0
    environments: int = 0  # environments it needed (both sides)
    plan: str = ""  # Plan.key
    cells: dict[str, str] = field(default_factory=dict)  # per side: the environment's id (under <state>/envs)
    only: list[str] = field(default_factory=list)  # the tests run (paths in the project; [] = its configuration)
    env: dict[str, str] = field(default_factory=dict)  # the environment variables its tests ran with
    cached: bool = False  # read from the result cache in this run (its seconds are the run that judged it)
    sides: dict = field(default_factory=dict)  # model/sides.Sides: what differs beyond the candidate (confounders)
    health: Health | None = None  # its baseline mostly failing: flagged, judged on the rest
    learned: dict[str, str] = field(default_factory=dict)  # --aa: its tests that flipped by themselves
    part: list[int] = field(default_factory=list)  # [k, n]: part k of its n (split = n); [] = the whole dependent
    split_files: list[str] = field(default_factory=list)  # a part: every file of its deal (``only``: this part's)
    part_seconds: list[float] = field(default_factory=list)  # merged of parts: each part's seconds
    past_day: dict[str, list[str]] = field(default_factory=dict)  # --as-of: per side, what came from after the day
    # its own source's uses of names the candidate's jax deprecates or removed (jax-compat scan at that
    # jax, as check --tests reads the user's project): Finding.to_dict, its path relative to the source
    scan: list[dict] = field(default_factory=list)
    compared: bool = False  # its tests ran on both sides to a comparison (a judged verdict says so too)
    timeout_s: float = 0.0  # one test's time limit they ran under
    run_id: str = ""  # the invocation (shard) that wrote it: its stored plan's (``Plan.run_id``)
    # its baseline's whole-suite run re-used from the result cache: when it ran ("" = it ran in this run)
    baseline_reused: str = attr(default="", omit=True)

    @classmethod
    def upgrade(cls, d: dict) -> dict:
        """A judged result (broken, safe, none-ran) is its tests: one stored without them (a damaged
        or hand-made file) cannot be read, never merged as if nothing broke."""
        judged = (DependentVerdict.BROKEN, DependentVerdict.SAFE, DependentVerdict.NONE_RAN)
        if d.get("verdict") in judged and not isinstance(d.get("tests"), list):
            raise RecordError(f"{d.get('name', '?')}: tests: a {d.get('verdict')} result without its tests "
                              "(the file is damaged: run the dependent again)")
        return d

    def broken(self) -> list[UserTest]:
        return [t for t in self.tests if t.cls == UserTestStatus.BROKEN]


def verdict_of(cmp: Comparison) -> tuple[DependentVerdict, str]:
    """A dependent's verdict (and its cause) on its tests, whole or its parts' merged: a broken test
    is broken (a module that no longer imports, beside skips, though none ran in the baseline: red
    team 10, D1); none ran in the baseline is not judged; run in the baseline and none of those in
    the candidate (all skipped, not collected: a test the candidate alone ran compares with nothing)
    is not safe, as ``check --tests`` says; then every test that ran on both sides stopped at the
    time limit on both is not judged; else safe."""
    if any(t.cls == UserTestStatus.BROKEN for t in cmp.tests):  # a module broken at import beside skips
        return DependentVerdict.BROKEN, ""
    if cmp.with_baseline and not cmp.ran.get("baseline"):
        return DependentVerdict.NOT_RUN, cmp.unjudged
    if cmp.none_ran:
        if cmp.ran.get("candidate"):  # only tests the baseline did not run ran there: nothing compared
            return DependentVerdict.NONE_RAN, (
                "none of the tests that ran in the baseline ran in the candidate (all skipped or not collected; "
                f"{cmp.ran['candidate']} that did not run in the baseline ran there, compared with nothing)")
        return DependentVerdict.NONE_RAN, ("none of its tests ran in the candidate (" + (
            cmp.candidate_cause or last_line(cmp.error) or "all skipped or not collected") + ")")
    if cmp.unjudged:
        return DependentVerdict.NOT_RUN, cmp.unjudged
    return DependentVerdict.SAFE, ""


def item(r: DependentResult) -> verdicts.Item:
    """A dependent's result as the one invariant reads it."""
    return verdicts.Item(r.name, broken=r.verdict in (DependentVerdict.BROKEN, DependentVerdict.NONE_RAN),
                         judged=r.verdict.judged,
                         ran_candidate=r.ran.get("candidate", 0), ran_baseline=r.ran.get("baseline", 0),
                         why=f"{r.verdict}: {r.cause}")


def decision(results: list[DependentResult], gaps: tuple[str, ...] = ()) -> verdicts.Decision:
    """The one invariant over every dependent's result and what a merge could not see (``gaps``: a
    plan that no shard stored or that does not read, a result that does not read)."""
    return verdicts.decide([item(r) for r in results] + [verdicts.Item(g, why=g) for g in gaps])


def exit_status(results: list[DependentResult], gaps: tuple[str, ...] = ()) -> int:
    """1 when the candidate breaks a dependent (or none of its tests run in the candidate where they
    ran in the baseline); else 0 only when every dependent was judged on both sides with tests run
    in the candidate; else 2 (``model/verdicts.decide``: capped, unreachable, not run, missing —
    never "breaks none")."""
    return decision(results, gaps).code

"""A long suite on many machines: one dependent's test files dealt into parts (``split = N`` in the
dependents file), each part a unit of work of its own that ``--shard i/n`` deals like a dependent,
and the parts' stored results merged back into one dependent.

The deal is deterministic: the test files of the dependent's source (the same release or commit on
every machine), sorted, dealt largest first to the lightest part (ties: the lower part), weighed by
their durations when every file has one, else by their size in bytes. Each part runs both sides
on its files only. Its result says which part it is and every file of the deal, so a merge can
check the parts cover the suite exactly once; a part missing, unreadable, not judged or dealt
differently keeps the merged dependent from "safe" (``model/verdicts.decide``). The merged
dependent is judged as the whole suite would be (``model/crater.verdict_of`` on every part's tests):
splitting a suite never changes its verdict.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from jaxcompat.model.crater import DependentResult, verdict_of
from jaxcompat.model.dependents import Dependent, part_name, part_of
from jaxcompat.model.sides import Sides
from jaxcompat.model.usertests import Comparison
from jaxcompat.model.vocab import DependentVerdict, UserTestStatus
from jaxcompat.operations import confirm

SKIP_DIRS = {"build", "dist", "site-packages", "node_modules", "__pycache__"}


def units(deps: list[Dependent]) -> list[Dependent]:
    """Every dependent as units of work: a split one as its parts, the others whole."""
    return [u for d in deps for u in ([d] if d.split <= 1 else [replace(d, part=k) for k in range(1, d.split + 1)])]


def suite_files(root: Path, tests: tuple[str, ...]) -> list[str]:
    """The test files (or node ids) a suite is dealt by, relative to ``root``, sorted: each path
    given (a folder: its test_*.py and *_test.py), or every such file of the source."""
    out: set[str] = set()
    for p in tests or (".",):
        where = root / p.split("::", 1)[0]
        if "::" in p or where.is_file():
            out.add(p)
        elif where.is_dir():
            out.update(f.relative_to(root).as_posix() for f in _modules(where, root))
    return sorted(out)


def _modules(folder: Path, root: Path) -> list[Path]:
    found = [f for pattern in ("test_*.py", "*_test.py") for f in folder.rglob(pattern)]
    return [f for f in found if not any(x.startswith(".") or x in SKIP_DIRS for x in f.relative_to(root).parts[:-1])]


def deal(files: list[str], n: int, weights: dict[str, float]) -> list[list[str]]:
    """``files`` into ``n`` parts of about equal weight: the heaviest first, each to the lightest
    part so far (ties: the part with fewer files, then the lower); each part sorted. The same input
    gives the same parts."""
    loads, parts = [0.0] * n, [[] for _ in range(n)]
    for f in sorted(files, key=lambda f: (-weights.get(f, 0.0), f)):
        k = min(range(n), key=lambda i: (loads[i], len(parts[i]), i))
        parts[k].append(f)
        loads[k] += weights.get(f, 0.0)
    return [sorted(p) for p in parts]


def weights_of(root: Path, files: list[str], durations: dict[str, float] | None = None) -> dict[str, float]:
    """Each file's weight: its duration in an earlier run when every file has one, else its size."""
    if durations and all(f in durations for f in files):
        return {f: float(durations[f]) for f in files}
    out = {}
    for f in files:
        path = root / f.split("::", 1)[0]
        out[f] = float(path.stat().st_size) if path.is_file() else 0.0
    return out


def part_tests(dep: Dependent, root: Path) -> tuple[list[str], list[str]]:
    """(this part's files, every file of the deal) of a dependent's part: weighed by its earlier
    stored run (``dep.weights``) when that covers every file, else by size."""
    files = suite_files(root, dep.tests)
    return deal(files, dep.split, weights_of(root, files, dict(dep.weights)))[dep.part - 1], files


WEIGHTS = "weights"  # under dependents/: each split dependent's files weighed by its last complete run


def weighed(deps: list[Dependent], out_dir: Path) -> list[Dependent]:
    """Each split dependent with its test files weighed as its last complete run (a merge of
    every part, or a whole run) left them in ``dependents/weights/NAME.json``: the distinct tests
    each file ran (per-test durations are not recorded). A run never rewrites what it reads, so
    every shard of it deals the same; a file the weights do not name leaves the deal to sizes."""
    out = []
    for d in deps:
        weights = _read_weights(out_dir / "dependents" / WEIGHTS / f"{d.name}.json") if d.split > 1 else {}
        out.append(replace(d, weights=tuple(sorted(weights.items()))) if weights else d)
    return out


def _read_weights(path: Path) -> dict[str, float]:
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict) or not all(isinstance(v, (int, float)) for v in files.values()):
        return {}
    return {str(k): float(v) for k, v in files.items()}


def store_weights(out_dir: Path, results: list) -> None:
    """For each merged split dependent judged on every part, the distinct tests each file ran: what
    the next run deals its parts by (``weighed``)."""
    import json

    from jaxcompat._util.atomic import write_text

    for r in results:
        if not r.part_seconds or not r.verdict.judged:
            continue
        counts: dict[str, float] = {}
        for test in sorted({t.test for t in r.tests}):
            f = test.split("::", 1)[0]
            counts[f] = counts.get(f, 0.0) + 1.0
        write_text(out_dir / "dependents" / WEIGHTS / f"{r.name}.json",
                   json.dumps({"dependent": r.name, "version": r.version, "commit": r.commit,
                               "by": "tests per file", "files": counts}, indent=1) + "\n")


# ---------------------------------------------------------------- merging


def merge(results: list[DependentResult]) -> list[DependentResult]:
    """The stored results with every split dependent's parts merged into one result; whole
    dependents as they are."""
    whole, parts = [], {}
    for r in results:
        said = part_of(r.name)
        if said is None:
            whole.append(r)
        else:
            parts.setdefault(said[0], []).append((said[1], said[2], r))
    return whole + [merged(name, sorted(ps, key=lambda p: (p[1], p[0]))) for name, ps in sorted(parts.items())]


def merged(name: str, parts: list) -> DependentResult:
    """One dependent of its parts ((k, n, result), sorted): tests concatenated, counts and seconds
    summed, health, sides and what came from after the day of every part. Its verdict is the one the
    whole suite gets (``model/crater.verdict_of`` on the tests of the parts run to a comparison: a part
    whose tests all skip in the candidate, or on both sides, is no verdict of the whole); a part not
    run to a comparison (missing, crashed, capped, a side not installed…) holds no test and keeps it
    from "safe", as parts that do not make the suite exactly once (``coverage``) do; a broken test of a
    part that was compared makes it broken beside them (the gap named in its cause)."""
    results = [r for _, _, r in parts]
    first = results[0]
    compared = [r for r in results if _compared(r)]
    lost = [r for r in results if not _compared(r)]
    tests = [t for r in compared for t in r.tests]  # a part not compared (a side not installed…) holds none
    gap = coverage(parts)
    out = replace(first, name=name, tests=tests, part=[],
                  part_seconds=[r.seconds for r in results], seconds=round(sum(r.seconds for r in results), 1),
                  ran=_summed(r.ran for r in results), classes=_summed(r.classes for r in compared),
                  only=sorted({f for r in results for f in r.only}), environments=sum(r.environments for r in results),
                  caps=[c for r in results for c in r.caps], absent=sorted({a for r in results for a in r.absent}),
                  learned={k: v for r in results for k, v in r.learned.items()}, cached=all(r.cached for r in results),
                  health=confirm.health(tests) if any(r.health for r in results) else None,
                  sides=Sides.merged([Sides.from_dict(r.sides) for r in results if r.sides]).to_dict()
                  if any(r.sides for r in results) else {},
                  past_day={side: sorted({x for r in results for x in r.past_day.get(side, [])})
                            for side in sorted({s for r in results for s in r.past_day})},
                  compared=not gap and not lost, timeout_s=max(r.timeout_s for r in results),
                  baseline_reused=min((r.baseline_reused for r in results if r.baseline_reused), default=""))
    causes = "; ".join(f"{r.name}: {r.cause}" for r in compared if r.cause)
    verdict, cause = verdict_of(Comparison(tests, with_baseline=True, ran=_summed(r.ran for r in compared),
                                           candidate_cause=causes, baseline_cause=causes, timeout_s=out.timeout_s))
    not_judged = "; ".join([f"{r.name}: {r.verdict}: {r.cause}" for r in lost] + ([gap] if gap else []))
    if (gap or lost) and any(t.cls == UserTestStatus.BROKEN for t in tests):  # nothing else can mend a break
        out.verdict, out.cause = DependentVerdict.BROKEN, f"and not judged: {not_judged}"
    elif gap:
        out.verdict, out.cause = DependentVerdict.NOT_RUN, gap
    elif lost:
        out.verdict, out.cause = lost[0].verdict, f"{lost[0].name}: {lost[0].cause}"
    else:
        out.verdict, out.cause = verdict, cause
    return out


def coverage(parts: list) -> str:
    """Why the parts do not make the whole suite exactly once ("" when they do): a part missing,
    parts of different splits, of different sources, or dealt differently."""
    n = {k_n[1] for k_n in parts}
    if len(n) > 1:
        return f"its stored parts come from different splits ({', '.join(str(x) for x in sorted(n))} parts)"
    total = n.pop()
    have = [k for k, _, _ in parts]
    missing = [part_name("", k, total).lstrip(".") for k in range(1, total + 1) if k not in have]
    if missing:
        return f"no result stored for {', '.join(missing)} of its {total} parts (a shard did not finish)"
    results = [r for _, _, r in parts]
    if len({(r.version, r.commit) for r in results if r.version}) > 1:  # a part never resolved has none
        return "its parts ran different releases or commits of it: " + ", ".join(f"{r.name} {r.version}"
                                                                               for r in results)
    judged = [r for r in results if _compared(r)]
    if len(judged) == len(results):
        deals = {tuple(r.split_files) for r in judged}
        got = sorted(f for r in judged for f in r.only)
        if len(deals) != 1 or got != sorted(deals.pop()):
            return ("its parts were dealt differently (the machines saw different test files or weights): the "
                    "parts do not cover its suite exactly once")
    return ""


def _compared(r: DependentResult) -> bool:
    """Whether a part's tests ran on both sides to a comparison (its verdict is one of its tests)."""
    return r.compared or r.verdict.judged


def _summed(dicts) -> dict[str, int]:
    out: dict[str, int] = {}
    for d in dicts:
        for k, v in d.items():
            out[k] = out.get(k, 0) + v
    return out


def units_seconds(results: list) -> list[tuple[str, float]]:
    """(unit name, seconds) of every unit of work behind ``results``: a merged dependent's parts."""
    out = []
    for r in results:
        if r.part_seconds:
            n = len(r.part_seconds)
            out += [(part_name(r.name, k, n), s) for k, s in enumerate(r.part_seconds, 1)]
        else:
            out.append((r.name, r.seconds))
    return out

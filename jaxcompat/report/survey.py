"""The survey's Markdown (``survey.md``, ``survey-edges.md``): the score, the wrong verdicts by cause,
what each combination showed, and the warnings before the break (``forecasts``: each jax deprecation
the ecosystem's code hit, and the surveyed jax where that API was gone). Its records are
``model/survey.Combo`` and ``knowledge/survey.Observation``; the map is report/survey_html.py."""

from __future__ import annotations

from packaging.version import Version

from jaxcompat.apihistory.apiexplain import histories
from jaxcompat.knowledge.deprecations import names as names_api
from jaxcompat.knowledge.deprecations import parse as parse_deprecations
from jaxcompat.knowledge.survey import Observation
from jaxcompat.model.vocab import CellStatus, Outcome


def render_md(summary: dict, obs: list[Observation], rows: list[dict], meta: dict) -> str:
    s = summary
    how = (f"edge search, {meta.get('scope', 'all')}" if meta.get("mode") == "edges"
           else f"seed {meta.get('seed')}, limit {meta.get('limit')}")
    lines = ["# jax-compat survey", "",
             f"{s['combinations']} combinations off the matrix ({how}), "
             f"{s['installable']} installable.", "",
             f"- case verdicts right (pass/reproduced, or a cell error a rule explains): "
             f"**{s['right']}/{s['verdicts']} = {100 * s['right_share']:.2f}%**",
             f"- combinations with no wrong verdict: **{s['clean_combinations']}/{s['combinations']} = "
             f"{100 * s['clean_share']:.1f}%**", ""]
    if meta.get("coverage_md"):
        lines += [meta["coverage_md"]]
    if s["wrong"]:
        lines += ["## Wrong verdicts, by cause", "", "| case / stage | outcome | error | combinations |",
                  "|---|---|---|---|"]
        for w in s["wrong"]:
            lines.append(f"| `{w['case']}` | {w['outcome']} | {w['error_type']} | "
                         f"{len(w['combinations'])}: {'; '.join(w['combinations'][:6])}"
                         f"{' …' if len(w['combinations']) > 6 else ''} |")
        lines.append("")
    lines += ["## What each combination showed", "", "| jax | equinox | Python | status | known failures observed |",
              "|---|---|---|---|---|"]
    for o in sorted(obs, key=lambda o: (Version(o.combo.jax), Version(o.combo.equinox))):
        lines.append(f"| {o.combo.jax} | {o.combo.equinox} | {o.cell.python} | {o.cell.status} | "
                     f"{', '.join(o.failures) or ('—' if not o.wrong else 'WRONG: ' + str(len(o.wrong)))} |")
    lines += ["", render_forecasts(obs),
              "Which releases work with which jax (verified, inferred, holes): `compat.md`, regenerated "
              "with the survey (or alone: `python -m jaxcompat compat`)."]
    return "\n".join(lines) + "\n"


def forecasts(obs: list[Observation]) -> list[dict]:
    """Each jax deprecation the ecosystem's code hit, and whether a surveyed later jax broke on it."""
    out: dict[tuple[str, str, str], dict] = {}
    history = histories([d for o in obs for d in o.cell.deprecations])
    for o in obs:
        for d in parse_deprecations(o.cell.deprecations):
            key = (d.package, o.combo.equinox if d.package == "equinox" else o.cell.versions.get(d.package, ""), d.what)
            entry = out.setdefault(key, {"package": d.package, "version": key[1], "api": d.api, "what": d.what,
                                         "removal": d.removed_in(history.get(d.api)), "where": d.where,
                                         "warned_on": [], "broke_on": []})
            entry["warned_on"].append(o.combo.jax)
    for entry in out.values():
        for o in obs:
            package = entry["package"]
            installed = o.cell.versions.get(package, o.combo.equinox if package == "equinox" else None)
            if installed != entry["version"] or o.combo.jax in entry["warned_on"]:
                continue
            failed = [o.cell.message] if o.cell.status != CellStatus.OK else []
            failed += [r.message for r in o.cell.results if r.outcome not in (Outcome.PASS, Outcome.SKIPPED)]
            if any(names_api(entry["api"], text) for text in failed):
                entry["broke_on"].append(o.combo.jax)
    return sorted(out.values(), key=lambda e: (e["package"], Version(e["version"] or "0"), e["what"]))


def render_forecasts(obs: list[Observation]) -> str:
    rows = forecasts(obs)
    if not rows:
        return "## Warnings before the break\n\nNo jax deprecation was hit by the ecosystem's code.\n"
    lines = ["## Warnings before the break", "",
             "jax deprecations hit by the ecosystem's code, and the surveyed jax where the API was gone.", "",
             "| package | uses | jax removes it in | warned on jax | broke on jax |", "|---|---|---|---|---|"]
    for e in rows:
        lines.append(
            f"| {e['package']} {e['version']} | `{e['what'].replace('|', '/')}` ({e['where']}) | "
            f"{e['removal'] or 'not announced'} | "
            f"{', '.join(sorted(set(e['warned_on']), key=Version))} | "
            f"{', '.join(sorted(set(e['broke_on']), key=Version)) or '—'} |"
        )
    return "\n".join(lines) + "\n"

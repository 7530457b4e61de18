"""``report site``: the stored reports the ecosystem's pages are built from, read as records.

- **The nights** (``--history DIR``): one folder per night, named by its ISO day
  (``DIR/2026-11-20/crater.json``; the nights are in the days' order), with the ``bisect.json`` a
  bisection left beside it (its answers join their groups by signature, as ``crater --report-only``
  joins them) and the night's ``crater.md`` when kept. The night's page (``crater.html``) is rendered
  again from its crater.json by the crater's renderer: a kept crater.html is never copied.
- **The survey** (``survey.html``, ``survey.json``'s summary, ``survey.md``'s warnings before the
  break), **the matrix** (``matrix.json``, else the committed ``baseline.json``) from ``--reports``.

Every text crosses the scrubber here, before anything is rendered: no machine path, no credential.
Bad input (no such folder, a night that is not a crater report) is a ``SiteError`` naming the file
and the fix. Returns a ``Site`` record; prints nothing."""

from __future__ import annotations

import html
import re
from datetime import date
from pathlib import Path

from jaxcompat._util.jsonfile import read_json
from jaxcompat._util.layout import layout
from jaxcompat.model.history import Commit, Group, Night, Outcome, fold
from jaxcompat.model.site import Site
from jaxcompat.report.scrub import Scrubber

NIGHT_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}$")  # a night's folder: its ISO day (a link, and the order)
# what the site keeps of a night (crater.xml, the JUnit file, is left: a link to it becomes text;
# crater.html is rendered again from crater.json, never copied)
KEPT = ("crater.json", "crater.md", "bisect.json", "draft-rules.toml")
_LOCAL_LINK = re.compile(r'<a href="(?P<href>[^"#:/?]+)"[^>]*>(?P<text>.*?)</a>', re.S)


class SiteError(Exception):
    """Bad input for the site: names the file or folder and the fix."""


def scrubbers(*folders: Path) -> tuple[Scrubber, Scrubber]:
    """The one boundary of the site's texts (data, then HTML copied as it is): the checkout, the
    given folders and the home folder out; credentials in URLs redacted (the scrubber does)."""
    paths = {str(Path.home()): "~", str(layout().root): "<root>"}
    for f in folders:
        paths[str(f.resolve())] = f"<{f.name or 'folder'}>"
    return Scrubber(paths), Scrubber({k: html.escape(v) for k, v in paths.items()})


def gather(reports: Path, history: Path | None) -> Site:
    """Everything the pages show, read from ``reports`` and the nights in ``history``."""
    data, page = scrubbers(reports, *([history] if history else []))
    site = Site()
    if history is not None:
        nights = read_nights(history, data, page, site.copies)
        site.history, site.nights_from = fold(nights), _shown(history)
    survey_html = reports / "survey.html"
    if survey_html.is_file():
        site.copies["survey.html"] = page(survey_html.read_text(encoding="utf-8"))
    survey_json = reports / "survey.json"
    if survey_json.is_file():
        survey = read_json(survey_json, SiteError, unreadable="regenerate it with nox -s survey",
                           damaged="regenerate it with nox -s survey")
        site.survey = data.tree(survey.get("summary", {})) if isinstance(survey, dict) else {}
    survey_md = reports / "survey.md"
    if survey_md.is_file():
        site.survey_forecast = data.tree(survey_forecast(survey_md.read_text(encoding="utf-8")))
    for name in ("matrix.json", "baseline.json"):
        if (reports / name).is_file():
            matrix = read_json(reports / name, SiteError, unreadable="run nox -s matrix again",
                               damaged="rebuild it with nox -s report")
            site.matrix, site.matrix_from = data.tree(matrix) if isinstance(matrix, dict) else None, name
            break
    return site


def _shown(folder: Path) -> str:
    """The folder as a page may name it: relative to the checkout when inside it, else its name."""
    try:
        return folder.resolve().relative_to(layout().root.resolve()).as_posix()
    except ValueError:
        return folder.name


def read_nights(folder: Path, data: Scrubber, page: Scrubber, copies: dict[str, str]) -> list[Night]:
    """Each night under ``folder``; what the site keeps of each goes to ``copies``."""
    if not folder.is_dir():
        raise SiteError(f"{folder}: no such folder of nights; give --history a folder holding one folder "
                        "per night, each with its crater.json (e.g. history/2026-11-20/crater.json)")
    nights = []
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and (p / "crater.json").exists()):
        if not _is_day(sub.name):
            raise SiteError(f"{sub}: a night's folder is named by its day, YYYY-MM-DD (its name becomes a link, "
                            "and the nights are shown in the days' order); rename it, e.g. 2026-11-20")
        nights.append(read_night(sub, data))
        here = [n for n in KEPT if (sub / n).is_file()]
        for name in here:
            copies[f"nights/{sub.name}/{name}"] = data((sub / name).read_text(encoding="utf-8"))
        rendered = _night_page(sub, data)
        if rendered is not None:
            copies[f"nights/{sub.name}/crater.html"] = _unlinked(rendered, here)
        nights[-1] = _with_report(nights[-1], f"nights/{sub.name}/crater.{'json' if rendered is None else 'html'}")
    if not nights:
        raise SiteError(f"{folder}: holds no night (no SUBFOLDER/crater.json); give the folder whose "
                        "subfolders are the nights, each with the crater.json of that night's run")
    return nights


def _is_day(name: str) -> bool:
    try:
        return bool(NIGHT_NAME.match(name)) and date.fromisoformat(name).isoformat() == name
    except ValueError:
        return False


def _night_page(folder: Path, data: Scrubber) -> str | None:
    """The night's crater.html, rendered from its crater.json (scrubbed) by the crater's renderer,
    which escapes every text; None when its dependents cannot be read back as records."""
    from jaxcompat.knowledge.cratergroups import Group as CraterGroup
    from jaxcompat.knowledge.signature import parse
    from jaxcompat.model.crater import DependentResult
    from jaxcompat.report.crater import html as crater_html

    d = data.tree(read_json(folder / "crater.json", SiteError, unreadable="", damaged=""))
    found = folder / "bisect.json"
    bisected = data.tree(read_json(found, SiteError, unreadable="", damaged="")) if found.is_file() else {}
    bisected = bisected if isinstance(bisected, dict) else {}
    try:
        results = [DependentResult.from_dict(x, "dependents") for x in d["dependents"]]
        groups = [CraterGroup.from_dict({**g, "signature": parse(g["signature"]), "first_bad_commit":
                                         g.get("first_bad_commit") or bisected.get(g["signature"]) or {}}, "groups")
                  for g in d.get("groups") or []]
    except (TypeError, ValueError, KeyError, AttributeError):  # a RecordError is both ValueError and KeyError
        return None
    plan = {k: d.get(k) or ([] if k != "as_of" else "") for k in ("candidate", "baseline", "as_of")}
    code = d.get("exit")
    gaps = (f"this night's crater.json says exit {code}: not judged",) if code not in (0, 1) else ()
    return crater_html(f"the night of {folder.name}: rendered again from its crater.json", results,
                       groups=groups, plan_text=plan, gaps=gaps)


def _unlinked(text: str, kept: list[str]) -> str:
    """A night's page with each link to a file beside it that the site does not keep (crater.xml)
    made text: no link in the site leads to nothing."""
    return _LOCAL_LINK.sub(lambda m: m[0] if m["href"] in kept else
                           f'<span title="not kept by the site">{m["text"]}</span>', text)


def _with_report(night: Night, report: str) -> Night:
    from dataclasses import replace

    return replace(night, report=report)


def read_night(folder: Path, scrub: Scrubber) -> Night:
    """One night: its crater.json as records, its bisect.json's answers joined to their groups."""
    path = folder / "crater.json"
    raw = read_json(path, SiteError, unreadable="give the folder of a night whose crater.json can be read",
                    damaged="take the night's crater.json again from where the nightly keeps it")
    if not (isinstance(raw, dict) and raw.get("kind") == "crater" and isinstance(raw.get("dependents"), list)):
        raise SiteError(f"{path}: not a crater report (no \"kind\": \"crater\" with its \"dependents\"); a night "
                        "holds the crater.json of that night's run")
    d = scrub.tree(raw)
    bisected = {}
    if (folder / "bisect.json").is_file():
        found = read_json(folder / "bisect.json", SiteError, unreadable="remove it or take it again",
                          damaged="remove it or take it again from the night's bisection")
        bisected = scrub.tree(found) if isinstance(found, dict) else {}
    outcomes = tuple(_outcome(x) for x in d["dependents"] if isinstance(x, dict) and x.get("name"))
    groups = tuple(_group(g, bisected) for g in d.get("groups") or [] if isinstance(g, dict))
    return Night(name=folder.name, candidate=tuple(map(str, d.get("candidate") or ())),
                 baseline=tuple(map(str, d.get("baseline") or ())), exit=int(d.get("exit", 2)),
                 outcomes=outcomes, groups=groups,
                 new_warnings=tuple(w for w in d.get("new_warnings") or [] if isinstance(w, dict)))


def _outcome(x: dict) -> Outcome:
    ran = x.get("ran") if isinstance(x.get("ran"), dict) else {}
    classes = x.get("classes") if isinstance(x.get("classes"), dict) else {}
    tests = [t for t in x.get("tests") or [] if isinstance(t, dict) and isinstance(t.get("test"), str)]
    return Outcome(name=str(x["name"]), verdict=str(x.get("verdict", "")), version=str(x.get("version") or ""),
                   ran=(int(ran.get("baseline", 0) or 0), int(ran.get("candidate", 0) or 0)),
                   broken=int(classes.get("broken", 0) or 0), cause=str(x.get("cause") or ""),
                   passed=frozenset(t["test"] for t in tests if t.get("candidate") == "passed"))


def _group(g: dict, bisected: dict) -> Group:
    sig = str(g.get("signature", ""))
    answer = g.get("first_bad_commit") or bisected.get(sig) or {}
    deps = g.get("dependents") or sorted(g.get("tests") or {})
    return Group(signature=sig, dependents=tuple(map(str, deps)), explained_by=str(g.get("explained_by") or ""),
                 draft=str(g.get("draft") or ""), fix=str(g.get("fix") or ""), commit=Commit.answer_of(answer),
                 tests=tuple((str(d), tuple(map(str, t))) for d, t in (g.get("tests") or {}).items()
                             if isinstance(t, list)) if isinstance(g.get("tests"), dict) else ())


_ROW = re.compile(r"^\| (?P<pkg>[^|]+?) \| `(?P<what>[^`]*)` \((?P<where>[^)]*)\) \| (?P<removal>[^|]+?) \| "
                  r"(?P<warned>[^|]*?) \| (?P<broke>[^|]*?) \|$")


def survey_forecast(markdown: str) -> list[dict]:
    """The rows of survey.md's "Warnings before the break" (report/survey.py writes that table: the
    survey.json beside it does not keep them)."""
    section = markdown.partition("## Warnings before the break")[2].partition("\n## ")[0]
    rows = []
    for line in section.splitlines():
        m = _ROW.match(line.strip())
        if m:
            package, _, version = m["pkg"].partition(" ")
            rows.append({"package": package, "version": version, "what": m["what"], "where": m["where"],
                         "removal": "" if m["removal"] == "not announced" else m["removal"],
                         "warned_on": m["warned"], "broke_on": "" if m["broke"] == "—" else m["broke"]})
    return rows

"""``report site``: the ecosystem's pages, built through the command line from stored reports.

The history is built from the three nights replayed in reports/nightly-replay/ (stored crater runs,
no network): it names the night each break appeared, its first bad commit and pull request, and the
night it was fixed; every link between the pages names a file of the site; no machine path, no
credential, no script; every text escaped. The fold of nights into breaks is held to what a night
can and cannot say (an absent or unjudged dependent fixes nothing)."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jaxcompat.model.history import ABSENT, NOT_JUDGED, Commit, Group, Night, Outcome, fold

REPO = Path(__file__).resolve().parents[1]
REPLAY = REPO / "reports" / "nightly-replay"
# what a clean clone holds of reports/ (matrix.json is generated, not committed)
COMMITTED = ("survey.html", "survey.json", "survey.md", "baseline.json")
HREF = re.compile(r"""(?:href|src)\s*=\s*["']?([^"'\s>]+)""", re.I)


def _site(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jaxcompat", "report", "site", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def _committed_reports(tmp_path: Path) -> Path:
    reports = tmp_path / "reports"
    reports.mkdir()
    for name in COMMITTED:
        shutil.copy(REPO / "reports" / name, reports / name)
    return reports


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("site")
    out = _site("--reports", str(_committed_reports(tmp)), "--history", str(REPLAY), "--out", str(tmp / "site"))
    assert out.returncode == 0, out.stderr
    # diffrax's break stays open: 2024-09-30 re-ran 5 of its 6 broken tests (not test_against), and
    # test_implicit still fails there (in both: fails-both); the other three ran theirs, all passed
    assert "Night of 2024-09-30: 1 break open (diffrax); the oldest appeared on the night of 2024-09-11." in out.stdout
    return tmp / "site"


def _text(page: Path) -> str:
    """What a reader sees: tags out, entities read."""
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8"))))


def _rows(page: Path) -> list[str]:
    return re.findall(r"<tr[^>]*>.*?</tr>", page.read_text(encoding="utf-8"), re.S)


def test_the_history_names_the_night_a_break_appeared_its_commit_and_the_night_it_was_fixed(built):
    page = built / "history.html"
    (lineax,) = [r for r in _rows(page) if "<td><b>lineax</b></td>" in r]
    said = html.unescape(re.sub(r"<[^>]+>", " ", lineax))
    assert "appeared on the night of 2024-09-11" in re.sub(r"\s+", " ", said)
    assert "dd6f0e2e2ed1" in said and "#23307" in said and "shipped in jax 0.4.32" in said
    assert "fixed on the night of 2024-09-30" in re.sub(r"\s+", " ", said)
    assert 'href="https://github.com/jax-ml/jax/commit/dd6f0e2e2ed13869eb7641ebff854ff5e8077e82"' in lineax
    assert 'href="https://github.com/jax-ml/jax/pull/23307"' in lineax
    # the three the rule explains broke the same night; their group was not bisected in that run
    for dep in ("equinox", "optimistix", "diffrax"):
        (row,) = [r for r in _rows(page) if f"<td><b>{dep}</b></td>" in r]
        assert "2024-09-11" in row and "not bisected" in row and "weak-type-closure" in row
    # one mark a night per dependent: safe, broken (with its count), safe
    (marks,) = [r for r in _rows(page) if "<th>equinox</th>" in r]
    assert re.findall(r'data-verdict="(\w[\w-]*)"', marks) == ["safe", "broken", "safe"]
    assert ">✗82<" in marks


def test_every_link_of_the_site_is_relative_and_names_a_file_of_the_site(built):
    pages = sorted(built.rglob("*.html"))
    assert {p.name for p in pages} >= {"index.html", "history.html", "forecast.html", "survey.html", "matrix.html"}
    missing, absolute = [], []
    for page in pages:
        for target in HREF.findall(page.read_text(encoding="utf-8")):
            if target.startswith(("https://", "http://", "#", "mailto:")):
                continue
            if target.startswith(("/", "file:")) or ":" in target.split("/")[0]:
                absolute.append(f"{page.name}: {target}")
                continue
            if not (page.parent / target.split("#", 1)[0]).resolve().is_file():
                missing.append(f"{page.relative_to(built)}: {target}")
    assert not absolute and not missing, (absolute, missing)
    # each night's mark and header link to that night's report, kept in the site
    history = (built / "history.html").read_text(encoding="utf-8")
    for night in ("2024-06-18", "2024-09-11", "2024-09-30"):
        assert f'href="nights/{night}/crater.html"' in history
        assert (built / "nights" / night / "crater.json").is_file()


def test_no_page_holds_a_machine_path_a_script_or_an_external_asset(built):
    for f in built.rglob("*"):
        if not f.is_file():
            continue
        text = f.read_text(encoding="utf-8")
        assert str(REPO) not in text, f
        assert str(Path.home()) + "/" not in text, f
        if f.suffix == ".html":
            assert "<script" not in text.lower() and "<link" not in text.lower(), f


def test_the_index_and_the_forecast_say_what_the_stored_reports_hold(built):
    index = _text(built / "index.html")
    assert "Night of 2024-09-30: 1 break open (diffrax)" in index  # its tests not all re-run, one still failing
    assert "107 combinations" in index  # reports/survey.json's summary
    assert "(baseline.json)" in index  # no matrix.json in a clean clone: the committed baseline
    forecast = _text(built / "forecast.html")
    # the nightly's new warnings (the first night's candidate, jax 0.4.30), with the nights they showed
    assert "Passing an array as a dtype argument is deprecated" in forecast
    assert "2024-06-18 – 2024-06-18" in forecast
    # the survey's warnings before the break (survey.md), the newest surveyed release first
    assert "jax.core.Primitive" in forecast and "(newest surveyed)" in forecast


def _night(folder: Path, source: str, edit=None) -> None:
    folder.mkdir(parents=True)
    data = json.loads((REPO / "reports" / "crater" / source / "crater.json").read_text(encoding="utf-8"))
    if edit:
        edit(data)
    (folder / "crater.json").write_text(json.dumps(data), encoding="utf-8")


def test_a_night_s_texts_reach_the_pages_escaped_and_scrubbed(tmp_path):
    """A name, a message and a fix holding markup, the checkout's path and a credential in an URL."""
    def hostile(d: dict) -> None:
        d["dependents"][0]["name"] = "<img src=x onerror=alert(1)>"
        g = d["groups"][0]
        g["dependents"], g["tests"] = ["<img src=x onerror=alert(1)>"], {"<img src=x onerror=alert(1)>": ["t"]}
        g["signature"] = f"ValueError: <script>alert(1)</script> in {REPO}/x.py @ {Path.home()}/y.py:f"
        g["fix"] = "pin from https://user:s3cret@example.org/simple"

    _night(tmp_path / "nights" / "2026-11-20", "seed-jax-0.4.32-bisect", hostile)
    out = _site("--reports", str(tmp_path / "none"), "--history", str(tmp_path / "nights"),
                "--out", str(tmp_path / "site"))
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "site" / "history.html").read_text(encoding="utf-8")
    assert "<img src=x" not in page and "<script>alert" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and "&lt;script&gt;" in page
    assert str(REPO) not in page and str(Path.home()) + "/" not in page and "s3cret" not in page
    assert "&lt;root&gt;/x.py" in page and "~/y.py" in page
    copied = (tmp_path / "site" / "nights" / "2026-11-20" / "crater.json").read_text(encoding="utf-8")
    assert str(REPO) not in copied and "s3cret" not in copied
    assert "dd6f0e2e2ed1" in page  # that run's own bisection, in its crater.json


@pytest.mark.parametrize("case", ["no-folder", "damaged", "not-crater", "bad-name", "unpadded-day", "no-day",
                                  "no-out"])
def test_bad_input_is_refused_with_the_file_and_the_fix(tmp_path, case):
    nights = tmp_path / "nights"
    if case == "damaged":
        (nights / "2026-11-20").mkdir(parents=True)
        (nights / "2026-11-20" / "crater.json").write_text("{not json")
    elif case == "not-crater":
        (nights / "2026-11-20").mkdir(parents=True)
        (nights / "2026-11-20" / "crater.json").write_text('{"kind": "check"}')
    elif case == "bad-name":
        _night(nights / "night of the 20th", "seed-jax-0.4.32-bisect")
    elif case in ("unpadded-day", "no-day"):  # text order is not the days' order: 2024-9-30 > 2024-10-05
        _night(nights / "2024-10-05", "seed-jax-0.4.32-bisect")
        _night(nights / {"unpadded-day": "2024-9-30", "no-day": "2024-02-30"}[case], "seed-jax-0.4.32-bisect")
    args = ["--history", str(nights), "--reports", str(tmp_path)] + ([] if case == "no-out" else
                                                                       ["--out", str(tmp_path / "site")])
    out = _site(*args)
    assert out.returncode == 2, out.stdout + out.stderr
    said = out.stderr
    assert said.startswith("error: ") and "Traceback" not in said
    assert {"no-folder": "no such folder of nights", "damaged": "2026-11-20/crater.json: not JSON",
            "not-crater": "not a crater report", "bad-name": "night of the 20th",
            "unpadded-day": "2024-9-30: a night's folder is named by its day, YYYY-MM-DD",
            "no-day": "2024-02-30: a night's folder is named by its day, YYYY-MM-DD",
            "no-out": "needs --out DIR"}[case] in said
    assert not (tmp_path / "site").exists()


def _o(name: str, verdict: str, broken: int = 0) -> Outcome:
    return Outcome(name, verdict, "1.0", (10, 10), broken)


def test_the_fold_opens_a_break_carries_it_through_nights_that_say_nothing_and_fixes_it_once():
    sig = "ValueError: boom @ eqx.py:f"
    found = Commit("jax", "a" * 40, "Change", "2026-11-19", "#1", "")
    nights = [
        Night("2026-11-20", ("jax",), ("jax",), 0, (_o("eqx", "safe"), _o("dfx", "safe")), ()),
        Night("2026-11-21", ("jax",), ("jax",), 1, (_o("eqx", "broken", 3), _o("dfx", "safe")),
              (Group(sig, ("eqx",)),)),
        Night("2026-11-22", ("jax",), ("jax",), 1, (_o("eqx", "broken", 3),),  # bisected the night after
              (Group(sig, ("eqx",), commit=found),)),
        Night("2026-11-23", ("jax",), ("jax",), 2, (_o("eqx", "over-budget"), _o("dfx", "safe")), ()),
        Night("2026-11-24", ("jax",), ("jax",), 0, (_o("eqx", "safe"), _o("dfx", "safe")), ()),
    ]
    h = fold(list(reversed(nights)))  # any order: by night
    (b,) = h.breaks
    assert (b.dependent, b.signature, b.appeared, b.fixed) == ("eqx", sig, "2026-11-21", "2026-11-24")
    assert b.commit == found and b.bisected_on == "2026-11-22" and b.nights == ["2026-11-21", "2026-11-22"]
    assert [m.verdict for m in h.marks["dfx"]] == ["safe", "safe", ABSENT, NOT_JUDGED, "safe"]  # 11-23: exit 2
    assert [m.appeared for m in h.marks["eqx"]] == [(), (sig,), (), (), ()]
    assert [m.fixed for m in h.marks["eqx"]] == [(), (), (), (), (sig,)]
    assert not h.open


@pytest.mark.parametrize("exit_, ran", [(2, (10, 10)), (0, (10, 0)), (0, (0, 0))])
def test_a_night_that_could_not_judge_a_dependent_fixes_none_of_its_breaks(exit_, ran):
    """A night whose run exited 2, or whose dependent ran no test on a side, says "safe" of nothing:
    its mark is not judged and the break stays open."""
    sig = "ValueError: boom @ eqx.py:f"
    nights = [Night("2026-11-21", ("jax",), ("jax",), 1, (_o("eqx", "broken", 3),), (Group(sig, ("eqx",)),)),
              Night("2026-11-22", ("jax",), ("jax",), exit_, (Outcome("eqx", "safe", "1.0", ran, 0),), ())]
    h = fold(nights)
    (b,) = h.open
    assert (b.appeared, b.fixed) == ("2026-11-21", "")
    mark = h.marks["eqx"][1]
    assert mark.verdict == NOT_JUDGED and mark.fixed == () and mark.cause.startswith("safe, but ")


def test_a_broken_dependent_no_group_names_is_still_a_break():
    h = fold([Night("n1", (), (), 1, (_o("eqx", "broken", 1),), ())])
    (b,) = h.open
    assert (b.dependent, b.signature, b.appeared, b.fixed) == ("eqx", "", "n1", "")


def test_the_nightly_keeps_its_nights_on_a_bounded_branch_and_publishes_the_site_with_pages_actions():
    """crater.yml: nightly only, tonight's crater.json (and bisect.json) onto crater-history holding
    the last KEEP_NIGHTS nights as one force-pushed commit; the site built by nox -s site from them;
    published by GitHub Pages' own actions, with the permissions Pages needs and no more."""
    from ruamel.yaml import YAML  # check-jsonschema's YAML reader (nox -s tests installs it)

    wf = YAML(typ="safe").load((REPO / ".github" / "workflows" / "crater.yml").read_text(encoding="utf-8"))
    jobs = wf["jobs"]
    merge_upload = next(s for s in jobs["merge"]["steps"] if "upload-artifact" in s.get("uses", ""))
    assert "reports/crater/bisect.json" in merge_upload["with"]["path"]
    history, pages = jobs["history"], jobs["pages"]
    assert "schedule" in history["if"] and history["needs"] == "merge"
    assert history["permissions"] == {"contents": "write"} and int(history["env"]["KEEP_NIGHTS"]) > 0
    runs = "\n".join(s.get("run", "") for s in history["steps"])
    assert "refs/heads/crater-history" in runs and "--force" in runs and 'head -n -"$KEEP_NIGHTS"' in runs
    assert "nox -s site -- --history history --out site" in runs
    uses = [s.get("uses", "").split("@")[0] for s in history["steps"] + pages["steps"]]
    assert uses.index("actions/configure-pages") < uses.index("actions/upload-pages-artifact") \
        < uses.index("actions/deploy-pages")
    assert next(s for s in history["steps"] if "upload-pages-artifact" in s.get("uses", ""))["with"]["path"] == "site"
    assert pages["permissions"] == {"pages": "write", "id-token": "write"}
    assert pages["environment"]["name"] == "github-pages" and pages["needs"] == "history"
    assert wf["permissions"] == {"contents": "read"}  # every other job reads only


def test_a_break_still_open_on_the_newest_night_leads_the_pages(tmp_path):
    """The replay's first two nights alone: the four breaks are open, said first on both pages."""
    nights = tmp_path / "nights"
    for night in ("2024-06-18", "2024-09-11"):
        shutil.copytree(REPLAY / night, nights / night)
    out = _site("--reports", str(tmp_path / "none"), "--history", str(nights),
                "--out", str(tmp_path / "site"))
    assert out.returncode == 0, out.stderr
    said = "Night of 2024-09-11: 4 breaks open (diffrax, equinox, lineax, optimistix); the oldest appeared on the " \
           "night of 2024-09-11."
    assert said in out.stdout
    for page in ("index.html", "history.html"):
        text = (tmp_path / "site" / page).read_text(encoding="utf-8")
        assert f'id="verdict"><div class="word">not safe</div><div class="head">{html.escape(said)}</div>' in text
        assert text.index('id="verdict"') < text.index("<main>")  # the banner first, under the site's bar
    assert _text(tmp_path / "site" / "history.html").count("still broken (last seen 2024-09-11)") == 4


def _stored_night(folder: Path, day: str, exit_: int, dependents: list[dict], groups: list[dict]) -> None:
    (folder / day).mkdir(parents=True)
    (folder / day / "crater.json").write_text(json.dumps(
        {"kind": "crater", "candidate": ["jax==0.5.0"], "baseline": ["jax==0.4.38"], "exit": exit_,
         "dependents": dependents, "groups": groups}))


def _dep(name: str, verdict: str, tests: list[tuple[str, str, str]]) -> dict:
    """A dependent of a night: ``tests`` as (test, candidate side, class)."""
    ran = sum(1 for _, c, _ in tests if c not in ("skipped", "absent"))
    return {"name": name, "verdict": verdict, "version": "1.0", "ran": {"baseline": ran, "candidate": ran},
            "classes": {k: sum(1 for *_, c in tests if c == k) for k in {c for *_, c in tests}},
            "tests": [{"test": t, "baseline": "passed", "candidate": c, "class": k} for t, c, k in tests]}


@pytest.mark.parametrize("second", ["skipped", "not-selected", "still-failing"])
def test_a_break_is_fixed_only_on_a_night_its_tests_ran_and_passed(tmp_path, second):
    """Regression (red team 6, F1: the replay said diffrax "fixed on 2024-09-30", "all fixed", where
    its test_against did not run and test_implicit still failed): a night that ran the dependent
    clear of the break without re-running its broken tests, or with one still failing, leaves it
    open, shown "not re-run, or still failing"."""
    nights = tmp_path / "h"
    grad, ok = "tests/test_a.py::test_grad", "tests/test_a.py::test_ok"
    _stored_night(nights, "2026-11-20", 1,
                  [_dep("alpha", "broken", [(grad, "failed", "broken"), (ok, "passed", "pass")])],
           [{"signature": "ValueError: boom @ alpha/core.py:f", "dependents": ["alpha"], "tests": {"alpha": [grad]}}])
    tonight = {"skipped": [(grad, "skipped", "skipped"), (ok, "passed", "pass")],
               "not-selected": [(ok, "passed", "pass")],
               "still-failing": [(grad, "failed", "fails-both"), (ok, "passed", "pass")]}[second]
    _stored_night(nights, "2026-11-21", 0, [_dep("alpha", "safe", tonight)], [])
    out = _site("--reports", str(tmp_path / "none"), "--history", str(nights), "--out", str(tmp_path / "site"))
    assert out.returncode == 0, out.stderr
    assert "Night of 2026-11-21: 1 break open (alpha)" in out.stdout, out.stdout
    text = _text(tmp_path / "site" / "history.html")
    assert "fixed on the night of" not in text
    assert "still broken (last seen 2026-11-20; not re-run, or still failing, on the night of 2026-11-21)" in text
    # and that night's mark says not judged, not a green "safe" beside the open break
    page = (tmp_path / "site" / "history.html").read_text()
    assert 'data-verdict="not-judged" title="2026-11-21: not-judged' in page and "a break still open" in page
    # the night it ran and passed, it is fixed
    _stored_night(nights, "2026-11-22", 0,
                  [_dep("alpha", "safe", [(grad, "passed", "pass"), (ok, "passed", "pass")])], [])
    out = _site("--reports", str(tmp_path / "none"), "--history", str(nights), "--out", str(tmp_path / "site2"))
    assert "no break open (3 nights, 1 breaks, all fixed)" in out.stdout, out.stdout
    assert "fixed on the night of 2026-11-22" in _text(tmp_path / "site2" / "history.html")


def test_a_break_whose_group_signature_moves_is_the_same_break(tmp_path):
    """Regression (red team 6, F6: the same rule's break of the same test was shown "fixed" and
    "appeared" on one night when its group's signature text moved, another dependent having joined
    the group): a break is known by its rule, else its first test, not by the signature's text."""
    nights = tmp_path / "h"
    grad = "tests/test_a.py::test_grad"
    msg = "ValueError: Closure-converted function called with different dynamic arguments"
    for day, deps, frame in (("2026-11-20", ["diffrax"], "equinox/internal/_loop/checkpointed.py:_to_linearize"),
                             ("2026-11-21", ["diffrax", "equinox"], "equinox/_ad.py:filter_closure_convert")):
        _stored_night(nights, day, 1, [_dep(d, "broken", [(grad, "failed", "broken")]) for d in deps],
               [{"signature": f"{msg} @ {frame}", "explained_by": "weak-type-closure", "dependents": deps,
                 "tests": {d: [grad] for d in deps}}])
    out = _site("--reports", str(tmp_path / "none"), "--history", str(nights), "--out", str(tmp_path / "site"))
    assert out.returncode == 0, out.stderr
    assert "2 breaks open (diffrax, equinox); the oldest appeared on the night of 2026-11-20" in out.stdout
    text = _text(tmp_path / "site" / "history.html")
    assert "fixed on the night of" not in text
    page = (tmp_path / "site" / "history.html").read_text(encoding="utf-8")
    assert 'title="2026-11-21: broken (1.0; ran 1 before, 1 after; broken 1)"' in page  # diffrax: no new break


def test_a_night_s_page_links_only_to_files_the_site_keeps(tmp_path):
    """The night's crater.html (rendered again from its crater.json) links to its crater.md,
    crater.json and crater.xml: what the site keeps stays a link; what it does not keep (crater.xml,
    and here a crater.md the night lacks) is text."""
    night = tmp_path / "nights" / "2024-09-11"
    shutil.copytree(REPLAY / "2024-09-11", night)
    (night / "crater.md").unlink()
    out = _site("--reports", str(tmp_path / "none"), "--history", str(tmp_path / "nights"),
                "--out", str(tmp_path / "site"))
    assert out.returncode == 0, out.stderr
    kept = tmp_path / "site" / "nights" / "2024-09-11"
    page = (kept / "crater.html").read_text(encoding="utf-8")
    assert (kept / "draft-rules.toml").is_file()
    assert 'href="crater.json"' in page and (kept / "crater.json").is_file()
    assert 'href="crater.md"' not in page and 'href="crater.xml"' not in page
    assert '<span title="not kept by the site">crater.md</span>' in page
    assert '<span title="not kept by the site">crater.xml</span>' in page
    assert not (kept / "crater.md").exists() and not (kept / "crater.xml").exists()


def test_a_night_s_kept_crater_html_is_not_copied_but_rendered_again_from_its_crater_json(tmp_path):
    """A tampered night's crater.html (a script, a token in a link) never reaches the site: the page is
    the crater's renderer's, from the night's crater.json."""
    night = tmp_path / "nights" / "2024-09-30"
    shutil.copytree(REPLAY / "2024-09-30", night)
    (night / "crater.html").write_text('<html><script>alert(document.cookie)</script><a href="https://ghp_ABC'
                                       'DEFtoken0123456789@github.com/x">x</a> https://x.example/?token=SECRET123')
    out = _site("--reports", str(tmp_path / "none"), "--history", str(tmp_path / "nights"),
                "--out", str(tmp_path / "site"))
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "site" / "nights" / "2024-09-30" / "crater.html").read_text(encoding="utf-8")
    assert "<script" not in page and "ghp_" not in page and "SECRET123" not in page
    assert 'id="verdict"' in page and "equinox" in page  # the night's own dependents, as its crater.json says


def test_a_site_built_again_into_its_folder_keeps_none_of_the_earlier_builds_pages(tmp_path):
    """The second build (one night, no stored reports) removes the first's matrix.html, survey.html and the
    nights it no longer shows; a file someone else put there stays; a folder holding files that no build
    wrote is refused (exit 2, the folder and the fix named) and nothing is written into it."""
    nights, night = tmp_path / "A", tmp_path / "B"
    for name in ("2024-06-18", "2024-09-11"):
        shutil.copytree(REPLAY / name, nights / name)
    shutil.copytree(REPLAY / "2024-09-30", night / "2024-09-30")
    out = tmp_path / "site"
    assert _site("--reports", str(_committed_reports(tmp_path)), "--history", str(nights), "--out",
                 str(out)).returncode == 0
    assert (out / "matrix.html").is_file() and (out / "nights" / "2024-06-18").is_dir()
    (out / "CNAME").write_text("example.org\n")
    proc = _site("--reports", str(tmp_path / "none-such"), "--history", str(night), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert files == {*json.loads((out / "site-files.json").read_text()), "site-files.json", "CNAME"}
    assert "matrix.html" not in files and "survey.html" not in files and not (out / "nights" / "2024-06-18").exists()
    assert "nights/2024-09-30/crater.json" in files
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine\n")
    proc = _site("--reports", str(tmp_path / "none-such"), "--history", str(night), "--out", str(other))
    assert proc.returncode == 2 and f"--out {other}: the folder holds files that no build" in proc.stderr
    assert f"remove {other} first" in proc.stderr and [p.name for p in other.iterdir()] == ["notes.txt"]


def test_a_break_of_a_module_that_could_not_be_collected_is_fixed_when_its_tests_pass(tmp_path):
    """Red team 7 (R5): a group held the module's own id (``tests/test_a.py``: its collection error);
    that id never shows among passed tests, so the break stayed open for ever once it was mended."""
    nights = tmp_path / "h"
    mod = "tests/test_a.py"
    _stored_night(nights, "2026-11-20", 1, [_dep("alpha", "broken", [(mod, "error", "broken")])],
                  [{"signature": "ImportError: x @ alpha/a.py:f", "dependents": ["alpha"], "tests": {"alpha": [mod]}}])
    _stored_night(nights, "2026-11-21", 0, [_dep("alpha", "safe", [(mod + "::test_grad", "passed", "pass"),
                                                                    (mod + "::test_ok", "passed", "pass")])], [])
    out = _site("--reports", str(tmp_path / "none"), "--history", str(nights), "--out", str(tmp_path / "site"))
    assert "no break open (2 nights, 1 breaks, all fixed)" in out.stdout, out.stdout

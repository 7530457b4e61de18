"""Every generated page, opened by a real browser (headless Chromium, driven over the Chrome DevTools
Protocol on a pipe: the standard library only, no browser download, no network).

The pages: the crater report of every stored run (``reports/crater/*/``, re-rendered into a temporary
folder with ``crater --report-only`` on a copy), check.html rendered from stored records (a crater
dependent's tests read as the user's own suite: one broken, one safe, one not judged), and the static
pages (``STATIC_PAGES``: the survey), and every page of the site (``report site``) built from the
three replayed nights (``reports/nightly-replay``) into a temporary folder (``SITE_PAGES``: index,
history, forecast, survey, matrix, and each night's crater.html). Each page is asserted to
  - log no console error and throw no exception,
  - show its verdict (``Page.verdict``) inside the first screen (a 1280x800 viewport),
  - unfold a group's ``<details>`` on a click of its summary (``Page.fold``),
  - hold no link to nothing: each in-page anchor exists, each relative file exists beside the page,
    each external link is a well-formed http(s) URL (not fetched),
and its first screen is saved as a PNG in ``$JAXCOMPAT_SCREENSHOTS`` (default: the test's tmp folder).

Without a browser the test is skipped, except in CI (``CI=true``), where a missing browser fails:
``.ci/run`` installs Debian's ``chromium``. ``JAXCOMPAT_CHROMIUM`` names another binary.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

REPO = Path(__file__).resolve().parents[1]
VIEWPORT = (1280, 800)


@dataclass(frozen=True)
class Page:
    """A page to open: its file, the element that says its verdict (inside the first screen), and
    the ``<details>`` a click must unfold (the first selector that finds one; () where the page
    folds nothing)."""

    name: str
    path: Path
    verdict: str = "#verdict"
    fold: tuple[str, ...] = (".group details", "details")


# The hook: static pages (globs under the repository) and what their first screen must show.
STATIC_PAGES: list[tuple[str, str, tuple[str, ...]]] = [
    ("reports/survey.html", "h1", ()),
    ("reports/survey-edges.html", "h1", ()),
]


# The site's pages (globs under the built site), what their first screen must show, what unfolds.
SITE_PAGES: list[tuple[str, str, tuple[str, ...]]] = [
    ("index.html", "#verdict", ()),
    ("history.html", "#verdict", ("details",)),
    ("forecast.html", "h1", ()),
    ("survey.html", "h1", ()),
    ("matrix.html", "header h1", ("td.band details", "details")),
    ("nights/*/crater.html", "#verdict", (".group details", "details")),
]


def _chromium() -> str | None:
    named = os.environ.get("JAXCOMPAT_CHROMIUM")
    if named:
        return named
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome", "chrome")) if p),
                None)


# ------------------------------------------------------------------ the browser, over a pipe


class Browser:
    """One headless Chromium; ``--remote-debugging-pipe``: commands on fd 3, answers on fd 4,
    each a JSON text ended by NUL."""

    def __init__(self, binary: str, profile: Path):
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def fds():  # in the child: the pipe's ends at 3 and 4
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
             "--remote-debugging-pipe", f"--user-data-dir={profile}", "about:blank"],
            preexec_fn=fds, pass_fds=(3, 4),  # kept open past preexec_fn (the rest is closed)
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf, self._id, self.events = b"", 0, []
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=VIEWPORT[0], height=VIEWPORT[1],
                  deviceScaleFactor=1, mobile=False)

    def _read(self, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise TimeoutError("the browser did not answer in time")
            chunk = os.read(self._from_chrome, 1 << 16)
            if not chunk:
                raise RuntimeError("the browser closed its pipe")
            self._buf += chunk
        text, self._buf = self._buf.split(b"\0", 1)
        return json.loads(text)

    def call(self, method: str, session: bool = False, **params):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, event: str, timeout: float = 30) -> None:
        seen = len(self.events)
        while not any(e.get("method") == event for e in self.events[seen:]):
            self.events.append(self._read(timeout))

    def js(self, expression: str):
        out = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True,
                        awaitPromise=True)
        if "exceptionDetails" in out:
            raise RuntimeError(f"{expression}: {out['exceptionDetails']}")
        return out["result"].get("value")

    def open(self, url: str) -> None:
        self.events.clear()
        self.call("Page.navigate", session=True, url=url)
        self.wait_for("Page.loadEventFired")

    def errors(self) -> list[str]:
        """What the page said was wrong: console errors, exceptions, failed loads."""
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append(f"exception: {p['exceptionDetails'].get('text')}")
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console: " + " ".join(str(a.get("value", a.get("description"))) for a in p["args"]))
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
        return out

    def click(self, x: float, y: float) -> None:
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", session=True, type=kind, x=x, y=y, button="left", clickCount=1)

    def screenshot(self, path: Path) -> None:
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", session=True, format="png")["data"]))

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (RuntimeError, OSError, TimeoutError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_chrome)
        os.close(self._from_chrome)


# ------------------------------------------------------------------ the pages


# The stored crater runs opened here: one of each kind (broken with a first bad commit, safe with new
# warnings, not judged, split into parts, stored before plans were kept); in CI (or with
# JAXCOMPAT_BROWSER_ALL=1) every stored run (about 2 s each to merge).
CRATER_RUNS = ("seed-jax-0.4.32-asof", "seed-jax-0.4.30", "latest-jax-0.12.0.1", "split-lineax",
               "replay-jax-0.4.33-bisect")


def _crater_pages(out: Path) -> list[Page]:
    """The stored crater runs re-rendered by the tool's own ``--report-only``, on a copy."""
    from jaxcompat.commands import main

    every = os.environ.get("CI") == "true" or os.environ.get("JAXCOMPAT_BROWSER_ALL") == "1"
    pages = []
    for run in sorted(p for p in (REPO / "reports" / "crater").iterdir() if (p / "dependents").is_dir()
                      and (every or p.name in CRATER_RUNS)):
        shutil.copytree(run, out / "crater" / run.name)
        _plan_of_old_run(out / "crater" / run.name / "dependents")
        code = main(["crater", "--report-only", "--name", run.name, "--reports", str(out), "--state",
                     str(out / "state"), "--dependents", str(REPO / "reports" / "crater" / "seeds" / "core.toml")])
        assert code in (0, 1, 2), (run.name, code)
        pages.append(Page(f"crater-{run.name}", out / "crater" / run.name / "crater.html"))
    assert every or len(pages) == len(CRATER_RUNS), "a stored run CRATER_RUNS names is gone: name another"
    return pages


def _plan_of_old_run(results: Path) -> None:
    """A run stored before the shards kept their plan: the plan its results were run under, naming
    them all (what ``crater`` stores today), so that ``--report-only`` merges it as it was."""
    if (results / "plans").is_dir():
        return
    stored = [json.loads(p.read_text()) for p in sorted(results.glob("*.json"))]
    (results / "plans").mkdir()
    (results / "plans" / "all.json").write_text(json.dumps(
        {"plan": stored[0]["plan"], "dependents": sorted(d["name"] for d in stored)}))


def _check_pages(out: Path) -> list[Page]:
    """check.html from stored records: a stored crater dependent's tests as the user's suite (broken,
    safe), and one whose tests did not run in the baseline (not judged)."""
    from jaxcompat.model.crater import DependentResult
    from jaxcompat.model.usertests import Comparison
    from jaxcompat.report.usertests import html_page, verdict

    stored = REPO / "reports" / "crater"
    chosen = [("broken", stored / "seed-jax-0.4.32-asof" / "dependents" / "optimistix.json", 1),
              ("safe", stored / "seed-jax-0.4.30" / "dependents" / "optimistix.json", 0),
              ("not-judged", stored / "seed-jax-0.4.30" / "dependents" / "optimistix.json", 2)]
    pages = []
    for name, path, code in chosen:
        r = DependentResult.from_dict(json.loads(path.read_text()))
        ran = r.ran if code < 2 else {"candidate": r.ran.get("candidate", 0), "baseline": 0}
        cmp = Comparison(r.tests, True, ran=ran, candidate_versions=r.versions.get("candidate", {}),
                         baseline_versions=r.versions.get("baseline", {}), baseline_cause="pytest could not start")
        folder = out / "check" / name
        folder.mkdir(parents=True)
        for beside in ("check.md", "check.json", "check-tests.xml"):  # what check --tests writes beside it
            (folder / beside).write_text("")
        (folder / "check.html").write_text(html_page(f"{r.name}-{name}", verdict(cmp, r.name), r.tests, True,
                                                     cmp=cmp, code=code))
        pages.append(Page(f"check-{name}", folder / "check.html"))
    return pages


def _static_pages() -> list[Page]:
    pages = []
    for pattern, verdict, fold in STATIC_PAGES:
        for path in sorted(REPO.glob(pattern)):
            pages.append(Page(path.relative_to(REPO).with_suffix("").as_posix().replace("/", "-"), path, verdict,
                              fold))
    return pages


def _site_pages(out: Path) -> list[Page]:
    """The site as ``nox -s site`` builds it (the committed reports, the three replayed nights)."""
    from jaxcompat.commands import main

    site = out / "site"
    assert main(["report", "site", "--history", str(REPO / "reports" / "nightly-replay"), "--out", str(site)]) == 0
    pages = [Page("site-" + path.relative_to(site).with_suffix("").as_posix().replace("/", "-"), path, verdict, fold)
             for pattern, verdict, fold in SITE_PAGES for path in sorted(site.glob(pattern))]
    assert len(pages) == 8, [p.name for p in pages]  # five pages and three nights
    return pages


# ------------------------------------------------------------------ the assertions


def _links_ok(browser: Browser, page: Page) -> list[str]:
    hrefs = browser.js("[...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href'))")
    ids = set(browser.js("[...document.querySelectorAll('[id]')].map(e => e.id)"))
    bad = []
    for href in hrefs:
        parts = urlsplit(href)
        if parts.scheme in ("http", "https"):
            if not parts.netloc or " " in href:
                bad.append(f"malformed external link {href!r}")
        elif parts.scheme:
            bad.append(f"a link of scheme {parts.scheme!r}: {href!r}")
        elif not parts.path:
            if unquote(parts.fragment) not in ids:
                bad.append(f"in-page anchor to nothing: {href!r}")
        elif not (page.path.parent / unquote(parts.path)).exists():
            bad.append(f"relative link to a missing file: {href!r}")
    return bad


def _first_screen(browser: Browser, selector: str) -> dict:
    box = browser.js(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
                     " const r = e.getBoundingClientRect(); return {x: r.left, y: r.top, w: r.width, h: r.height,"
                     " text: e.innerText}; })()")
    assert box, f"no {selector} on the page"
    return box


def _unfolds(browser: Browser, selectors: tuple[str, ...]) -> str:
    """"" when a click on the summary of the first ``<details>`` found opens it; else what went wrong."""
    selector = next((s for s in selectors if browser.js(f"!!document.querySelector({json.dumps(s)})")), "")
    if not selector:
        return f"nothing to unfold ({', '.join(selectors)})"
    where = browser.js(f"(() => {{ const d = document.querySelector({json.dumps(selector)}); if (!d) return null;"
                       " const s = d.querySelector('summary'); s.scrollIntoView({block: 'center'});"
                       " const r = s.getBoundingClientRect(); return {open: d.open, x: r.left + 8,"
                       " y: r.top + r.height / 2}; })()")
    if where["open"]:
        return f"{selector} is open before the click"
    browser.click(where["x"], where["y"])
    opened = browser.js(f"document.querySelector({json.dumps(selector)}).open")
    return "" if opened else f"a click on {selector}'s summary did not unfold it"


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    binary = _chromium()
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("no Chromium found (chromium, chromium-browser, google-chrome, or $JAXCOMPAT_CHROMIUM): "
                        "CI opens every page in a browser; install Debian's chromium (apt-get install chromium)")
        pytest.skip("no Chromium here (apt-get install chromium); CI=true makes this a failure")
    b = Browser(binary, tmp_path_factory.mktemp("profile"))
    yield b
    b.close()


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> list[Page]:
    out = tmp_path_factory.mktemp("pages")
    return _crater_pages(out) + _check_pages(out) + _static_pages() + _site_pages(out)


def _problems(browser: Browser, page: Page, shots: Path) -> list[str]:
    """What is wrong with one page, opened in the browser (its first screen saved in ``shots``)."""
    browser.open(page.path.as_uri())
    browser.screenshot(shots / f"{page.name}.png")
    problems = browser.errors()
    box = _first_screen(browser, page.verdict)
    if not (box["w"] > 0 and box["h"] > 0 and box["x"] >= 0 and box["y"] >= 0
            and box["x"] + box["w"] <= VIEWPORT[0] and box["y"] + box["h"] <= VIEWPORT[1]):
        problems.append(f"{page.verdict} is not inside the first screen: {box}")
    if page.verdict == "#verdict" and not any(w in box["text"].lower() for w in ("safe", "could not judge")):
        problems.append(f"the verdict says no verdict: {box['text'][:80]!r}")
    if page.fold and (why := _unfolds(browser, page.fold)):
        problems.append(why)
    return problems + _links_ok(browser, page)


def test_every_page_opens_clean_with_its_verdict_first_a_fold_that_opens_and_no_dead_link(browser, pages,
                                                                                         tmp_path_factory):
    shots = Path(os.environ.get("JAXCOMPAT_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    shots.mkdir(parents=True, exist_ok=True)
    assert any(p.name.startswith("crater-") for p in pages) and any(p.name.startswith("check-") for p in pages)
    assert any(p.name == "site-history" for p in pages)
    problems = [f"{page.name}: {why}" for page in pages for why in _problems(browser, page, shots)]
    print(f"{len(pages)} pages opened; screenshots in {shots}", file=sys.stderr)
    assert not problems, "\n".join(problems)


def test_the_checks_see_a_broken_page_and_a_hostile_test_name_stays_text(browser, tmp_path):
    """The assertions are real: a page with a script error, its verdict below the first screen, a
    fold already open, a dead anchor and a missing file is refused on each count; a test named with
    markup is shown as its text, and runs nothing."""
    from jaxcompat.model.usertests import Comparison, UserTest
    from jaxcompat.model.vocab import UserTestSide, UserTestStatus
    from jaxcompat.report.usertests import html_page, verdict

    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html><body><div style="height:2000px"></div><div id="verdict">safe</div>'
                   '<details open><summary>x</summary>y</details><a href="#nowhere">a</a> <a href="gone.md">b</a>'
                   "<script>console.error('boom')</script></body></html>")
    said = _problems(browser, Page("bad", bad, fold=("details",)), tmp_path)
    assert any("console: boom" in p for p in said), said
    assert any("not inside the first screen" in p for p in said), said
    assert any("open before the click" in p for p in said), said
    assert any("#nowhere" in p for p in said) and any("gone.md" in p for p in said), said
    hostile = '<script>console.error("ran")</script><b>bold</b>'
    t = UserTest(f"tests/test_x.py::test_x[{hostile}]", UserTestSide.FAILED, UserTestSide.PASSED,
                 UserTestStatus.BROKEN, message=f"ValueError: {hostile}", traceback=hostile)
    cmp = Comparison([t], True, ran={"candidate": 1, "baseline": 1})
    page = tmp_path / "check.html"
    page.write_text(html_page(hostile, verdict(cmp, "x"), [t], True, cmp=cmp, code=1))
    for beside in ("check.md", "check.json", "check-tests.xml"):
        (tmp_path / beside).write_text("")
    assert _problems(browser, Page("hostile", page), tmp_path) == []
    assert browser.js("document.querySelectorAll('script').length") == 0
    assert not browser.js("[...document.querySelectorAll('b')].some(e => e.textContent === 'bold')")
    assert hostile in browser.js("document.body.innerText")


def test_the_crater_page_says_the_verdict_first_each_group_once_with_its_commit_and_pull_request(tmp_path, capsys):
    """Without a browser too: the seed replay of jax 0.4.32 merged again (--report-only on a copy)
    opens with its verdict, not the terminal's text; 114 broken tests are two groups, each once,
    their tests folded; the first bad commit and its pull request are links; no machine path."""
    from jaxcompat.commands import main

    run = REPO / "reports" / "crater" / "seed-jax-0.4.32-asof"
    shutil.copytree(run, tmp_path / "crater" / run.name)
    code = main(["crater", "--report-only", "--name", run.name, "--reports", str(tmp_path), "--state",
                 str(tmp_path / "state"), "--dependents", str(REPO / "reports" / "crater" / "seeds" / "core.toml")])
    capsys.readouterr()
    page = (tmp_path / "crater" / run.name / "crater.html").read_text()
    assert code == 1
    body = page[page.index("<body>"):]
    assert body.index('id="verdict"') < body.index("<pre>") and "NOT SAFE" in body.upper()[:400]
    assert body.count('<section class="group') == 2 and 'id="g-1"' in body and 'id="g-2"' in body
    assert "weak-type-closure" in body and "its 108 tests</summary>" in body
    assert 'href="https://github.com/jax-ml/jax/commit/dd6f0e2e2ed13869eb7641ebff854ff5e8077e82"' in body
    assert 'href="https://github.com/jax-ml/jax/pull/23307"' in body
    assert str(tmp_path) not in page and str(REPO) not in page
    assert page.count("<tr data-verdict=") == 4

"""A package's history between two of its releases, as git holds it, and one commit made ready to
install.

- **The repository.** Any git URL (``--repo``), else the package's own (``REPOSITORIES``); git's
  own configuration applies, so a runner without GitHub points the URL at a local mirror with
  ``url.<mirror>.insteadOf <url>`` (``GIT_CONFIG_COUNT``/``_KEY_0``/``_VALUE_0``). The repository
  is fetched into the one cached bare repository per URL that ``gitsource`` keeps.
- **The releases' tags**, found by the release's name: ``jax-v0.4.33``, ``v0.11.7``, ``0.11.7``.
- **The commits** from the good tag to the bad one, first parents only (``git bisect
  --first-parent``): index 0 is the good tag's commit, the last is the bad tag's. The good tag
  must lie on the bad one's first-parent history (not on a release branch of its own); else the
  error names both and the release to give instead.
- **A commit as a source.** Its tree checked out under the state folder, once per commit; for jax,
  the jaxlib release it accepts: the newest release between the commit's
  ``_minimum_jaxlib_version`` and its own ``_version`` (jax's ``setup.py`` pins
  ``jaxlib >=minimum, <=version`` and its import checks the minimum); where it cannot say over
  that one, the others in turn (``jaxlib_fallbacks``).
"""

from __future__ import annotations

import re
from pathlib import Path

from packaging.version import InvalidVersion, Version

from jaxcompat._util.redact import redact_text
from jaxcompat.env import gitsource, releases
from jaxcompat.model.commits import Commit

# The ecosystem's repositories (a package not here needs --repo).
REPOSITORIES = {
    "jax": "https://github.com/jax-ml/jax",
    "equinox": "https://github.com/patrick-kidger/equinox",
    "diffrax": "https://github.com/patrick-kidger/diffrax",
    "optimistix": "https://github.com/patrick-kidger/optimistix",
    "lineax": "https://github.com/patrick-kidger/lineax",
    "chex": "https://github.com/google-deepmind/chex",
}
# Where a commit message names its pull request: GitHub's merge, a squash's "(#123)", Copybara's.
_PR = (re.compile(r"Merge pull request #(\d+)"), re.compile(r"COPYBARA_INTEGRATE_REVIEW=\S*/pull/(\d+)"),
       re.compile(r"\(#(\d+)\)\s*$", re.M), re.compile(r"\bPR #(\d+)"))


_CITES = re.compile(r"https?://github\.com/[\w.-]+/[\w.-]+/(?:issues|pull)/\d+|PiperOrigin-RevId: \d+")


class HistoryError(ValueError):
    """The history cannot be walked: no such repository, tag or commit (said with the fix)."""


def repository(package: str, repo: str | None) -> str:
    if repo:
        return repo
    if package not in REPOSITORIES:
        raise HistoryError(f"no repository known for {package}: give one with --repo URL "
                           f"(known: {', '.join(REPOSITORIES)})")
    return REPOSITORIES[package]


def _bare(url: str, cache_dir: Path) -> Path:
    return gitsource.mirror(url, cache_dir)


def _git(url: str, cache_dir: Path, *args: str) -> str:
    return gitsource.run_git("--git-dir", str(_bare(url, cache_dir)), *args, what=url)


def tag_of(package: str, version: str, url: str, cache_dir: Path) -> str:
    """The commit of the tag that names ``version`` (``jax-v0.4.33``, ``v0.11.7``, ``0.11.7``)."""
    names = [f"{package}-v{version}", f"v{version}", version, f"{package}-{version}"]
    for name in names:
        sha = gitsource.commit_of(_bare(url, cache_dir), f"refs/tags/{name}")
        if sha:
            return sha
    raise HistoryError(f"{url} has no tag for {package} {version} (looked for {', '.join(names)}): "
                       "give --good/--bad as releases it tags, or the repository with --repo")


def fetch(url: str, cache_dir: Path) -> None:
    """The repository fetched (once per run) into its cached bare repository."""
    try:
        gitsource.resolve(url, "", cache_dir)
    except gitsource.GitError as e:
        raise HistoryError(f"{e} (without GitHub: point the URL at a mirror with git's "
                           "url.<mirror>.insteadOf, see docs/survey-bisect.md)") from None


def first_parents(url: str, good: str, bad: str, cache_dir: Path, package: str = "",
                  releases: tuple[str, str] = ("", "")) -> list[str]:
    """[good, …, bad]: the first-parent commits after ``good`` up to ``bad``, oldest first. ``good``
    must lie on ``bad``'s first-parent history: a good release tagged on a branch of its own (a
    release branch with a cherry-picked fix) is not, and a walk from it would blame the bad release's
    history for what that branch alone changed (``package``, ``releases``: the names the error says)."""
    try:
        listed = _git(url, cache_dir, "rev-list", "--first-parent", "--parents", "--reverse", f"{good}..{bad}", "--")
    except gitsource.GitError as e:
        raise HistoryError(f"{e}: the commits between the two releases' tags cannot be listed") from None
    rows = [ln.split() for ln in listed.splitlines() if ln.strip()]
    if good != bad and not (rows and rows[0][1:2] == [good] and rows[-1][0] == bad):
        parted = rows[0][1:2] if rows else []
        raise HistoryError(redact_text(_off_chain(url, good, bad, cache_dir, package, releases, parted)))
    return [good] + [r[0] for r in rows]


def _off_chain(url: str, good: str, bad: str, cache_dir: Path, package: str, releases: tuple[str, str],
               parted: list[str]) -> str:
    """Why ``good`` is no start for a walk to ``bad``, and the release to give instead."""
    g = f"{package} {releases[0]}".strip() if releases[0] else good[:12]
    b = f"{package} {releases[1]}".strip() if releases[1] else bad[:12]
    head = (f"the good release {g} ({good[:12]}) is not on the first-parent history of the bad one {b} "
            f"({bad[:12]}) in {url}")
    if not parted:  # bad is good's ancestor (or its history shares no first-parent commit with good's)
        return (f"{head}: {g} is not older than {b} along it; give as --good a release older than --bad "
                "(with --fixed too: --good is the older release, one the failure affects)")
    instead = _release_before(url, parted[0], cache_dir, package)
    return (f"{head}: it lies on a branch (a release branch with cherry-picked fixes?) that parts from that "
            f"history at {parted[0][:12]}, and a walk from it would blame {b}'s commits for what the branch "
            "alone changed; give as --good a release tagged on that history"
            + (f", e.g. --good {instead} (the newest at or before {parted[0][:12]})" if instead
               else f" (none is tagged at or before {parted[0][:12]}: bisect along releases, without --commits)"))


def _release_before(url: str, sha: str, cache_dir: Path, package: str) -> str:
    """The newest release tagged on ``sha``'s first-parent history, as --good takes it ("" if none)."""
    prefixes = [f"{package}-v", "v", "", f"{package}-"] if package else ["v", ""]
    matches = [a for p in prefixes for a in ("--match", f"{p}[0-9]*")]
    try:
        tag = _git(url, cache_dir, "describe", "--tags", "--first-parent", "--abbrev=0", *matches,
                   "--end-of-options", sha)
    except gitsource.GitError:
        return ""
    return next((tag[len(p):] for p in prefixes if tag.startswith(p) and tag[len(p):][:1].isdigit()), "")


def describe(url: str, sha: str, cache_dir: Path, files: bool = True) -> Commit:
    """A commit's title, author date, pull request and the files it touched (against its first parent)."""
    out = _git(url, cache_dir, "show", "-s", "--format=%H%x00%s%x00%aI%x00%B", "--end-of-options", sha)
    full, title, date, body = (out.split("\0") + ["", "", "", ""])[:4]
    pr = next((m.group(1) for rx in _PR for m in [rx.search(body)] if m), "")
    touched: list[str] = []
    if files:
        parents = _git(url, cache_dir, "rev-list", "--parents", "-n", "1", "--end-of-options", sha).split()
        base = parents[1] if len(parents) > 1 else "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # the empty tree
        touched = [f for f in _git(url, cache_dir, "diff", "--name-only", base, sha, "--").splitlines() if f]
    return Commit(sha=full or sha, title=title, date=date, pull_request=f"#{pr}" if pr else "", files=touched,
                  references=[m.group(0) for m in _CITES.finditer(body)])


def pull_request_of(url: str, sha: str, cache_dir: Path) -> str:
    """The pull request whose head is ``sha`` (or, for a merge, its second parent) as the remote's
    ``refs/pull/N/head`` say ("#N"; "" when none does or the remote keeps no such refs): how a
    change reviewed elsewhere and pushed as its pull request's own commit (jax's Copybara flow,
    "PiperOrigin-RevId") is found. One ``git ls-remote`` per run and repository."""
    parents = _git(url, cache_dir, "rev-list", "--parents", "-n", "1", "--end-of-options", sha).split()
    wanted = {parents[0]} | set(parents[2:3]) if parents else {sha}
    heads = _pull_heads(url, cache_dir)
    found = sorted((int(n) for n, head in heads.items() if head in wanted))
    return f"#{found[0]}" if found else ""


_PULL_HEADS: dict[Path, dict[str, str]] = {}  # per cached repository: pull request -> its head


def _pull_heads(url: str, cache_dir: Path) -> dict[str, str]:
    key = _bare(url, cache_dir)
    if key not in _PULL_HEADS:
        try:
            listed = gitsource.run_git("ls-remote", "--", url, "refs/pull/*/head", what=url)
        except gitsource.GitError:
            listed = ""
        heads = {}
        for line in listed.splitlines():
            head, _, ref = line.partition("\t")
            m = re.fullmatch(r"refs/pull/(\d+)/head", ref.strip())
            if m:
                heads[m.group(1)] = head
        _PULL_HEADS[key] = heads
    return _PULL_HEADS[key]


def shipped_in(package: str, url: str, sha: str, cache_dir: Path) -> str:
    """The first release whose tag holds ``sha`` ("" when none does yet)."""
    tags = _git(url, cache_dir, "tag", "--contains", sha).split()
    found = []
    for t in tags:
        m = re.fullmatch(rf"(?:{re.escape(package)}-)?v?(\d+(?:\.\d+)+)", t)
        if m:
            try:
                found.append(Version(m.group(1)))
            except InvalidVersion:
                continue
    return str(min(found)) if found else ""


def changelog_entry(package: str, version: str, url: str, cache_dir: Path, commit: Commit,
                    limit: int = 12) -> list[str]:
    """The lines of the release's changelog section that name the commit's pull request (else the
    section's first lines), from CHANGELOG.md (or docs/CHANGELOG.md) at the release's tag."""
    if not version:
        return []
    try:
        tag = tag_of(package, version, url, cache_dir)
    except HistoryError:
        return []
    text = ""
    for path in ("CHANGELOG.md", "docs/CHANGELOG.md"):
        try:
            text = _git(url, cache_dir, "show", f"{tag}:{path}")
            break
        except gitsource.GitError:
            continue
    section = _section(text, version)
    if commit.pull_request:
        number = commit.pull_request.lstrip("#")
        named = [ln for ln in section if re.search(rf"(?:#|/pull/){number}\b", ln)]
        if named:
            return named[:limit]
    # else the lines naming one of the title's identifiers (weak_type, ShapeDtypeStruct, jax.foo)
    words = {w for w in re.findall(r"[A-Za-z_][\w.]*", commit.title) if "_" in w or "." in w.strip(".")
             or (w[:1].isupper() and any(c.isupper() for c in w[1:]))}
    return [ln for ln in section if any(w in ln for w in words)][:limit]


def _section(text: str, version: str) -> list[str]:
    """The bullet lines under the heading that names ``version`` (up to the next such heading)."""
    lines, out, inside = text.splitlines(), [], False
    heading = re.compile(r"^#{1,4}\s")
    for ln in lines:
        if heading.match(ln):
            if inside and re.search(r"\d+\.\d+", ln):
                break
            inside = inside or re.search(rf"(?<![\d.]){re.escape(version)}(?![\d])", ln) is not None
            continue
        if inside and ln.strip():
            out.append(ln.rstrip())
    return out


def checkout(url: str, sha: str, cache_dir: Path, src_dir: Path) -> tuple[Path, list[str]]:
    """The commit's tree under ``src_dir`` (reused when already there); the files the repository
    lacks, named."""
    into = src_dir / sha
    marker = into / ".jaxcompat-absent"
    if marker.is_file():
        return into, [ln for ln in marker.read_text().splitlines() if ln]
    absent = gitsource.checkout(url, sha, cache_dir, into)
    marker.write_text("".join(f"{a}\n" for a in absent))
    return into, absent


def show(url: str, sha: str, path: str, cache_dir: Path) -> str:
    """One file's text at one commit."""
    return _git(url, cache_dir, "show", f"{sha}:{path}")


def jax_versions(url: str, sha: str, cache_dir: Path) -> tuple[str, str]:
    """(version, minimum jaxlib) as the commit's ``jax/version.py`` says."""
    text = show(url, sha, "jax/version.py", cache_dir)
    version = re.search(r'^_version\s*(?::\s*str\s*)?=\s*"([^"]+)"', text, re.M)
    minimum = re.search(r'^_minimum_jaxlib_version\s*(?::\s*str\s*)?=\s*"([^"]+)"', text, re.M)
    if not version or not minimum:
        raise HistoryError(f"{sha[:12]}: jax/version.py names no _version or _minimum_jaxlib_version")
    return version.group(1), minimum.group(1)


def jaxlib_for(version: str, minimum: str, cache_dir: Path) -> str:
    """The newest jaxlib release a jax commit accepts (``>= minimum, <= version``), "" if none."""
    lo, hi = Version(minimum), Version(version)
    fits = [v for v in releases.versions("jaxlib", cache_dir) if lo <= Version(v) <= hi]
    return fits[-1] if fits else ""


def accepts(version: str, minimum: str, jaxlib: str) -> bool:
    """Whether a jax commit (its ``_version`` and ``_minimum_jaxlib_version``) accepts that jaxlib."""
    try:
        return Version(minimum) <= Version(jaxlib) <= Version(version)
    except InvalidVersion:
        return False


def jaxlib_fallbacks(version: str, minimum: str, day: str, cache_dir: Path) -> list[str]:
    """The other jaxlib releases to try a jax commit over, in order, where it cannot say over
    ``jaxlib_for``'s: the accepted one before that, the newest accepted released on or before the
    commit's ``day`` (YYYY-MM-DD), then the newest accepted that was yanked (jax 0.4.32's release
    commit accepts jaxlib 0.4.32 alone); each once. The newest accepted is not always the one the
    commit was written against: jax 0.4.34's commits of September 2024 call
    ``jaxlib.lapack.getrf_hlo``, which jaxlib 0.4.34 no longer has and 0.4.33 does."""
    lo, hi = Version(minimum), Version(version)
    kept = [v for v in releases.versions("jaxlib", cache_dir) if lo <= Version(v) <= hi]  # not yanked
    info = releases.release_info("jaxlib", cache_dir)
    by_day = [v for v in kept if v in info and info[v]["date"] <= day[:10]]
    yanked = sorted((v for v, meta in info.items() if meta["yanked"] and _final(v) and lo <= Version(v) <= hi),
                    key=Version)
    return [v for v in dict.fromkeys(kept[::-1][1:2] + by_day[-1:] + yanked[-1:]) if v not in kept[-1:]]


def _final(version: str) -> bool:
    try:
        v = Version(version)
    except InvalidVersion:
        return False
    return not (v.is_prerelease or v.is_devrelease)

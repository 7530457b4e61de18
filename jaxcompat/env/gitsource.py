"""A dependent's git source as it is now (or as of a day): the URL fetched into one cached bare
repository per URL, the ref resolved to a commit there, and that commit checked out.

- **Fetched every run.** A branch or HEAD moves: each run fetches (incrementally) and resolves the
  ref again, so the commit — not the ref — names the source folder and the result cache's key.
- **As of a day.** The last commit before the day on the ref, following first parents (of the
  default branch when there is no ref), as ``git rev-list --first-parent --before`` walks it.
- **Any URL.** git's own configuration applies, the environment's too: a runner without GitHub
  points the URL at a mirror with ``url.<mirror>.insteadOf <url>`` (``GIT_CONFIG_COUNT``,
  ``GIT_CONFIG_KEY_0``, ``GIT_CONFIG_VALUE_0``). Nothing ever prompts (``GIT_TERMINAL_PROMPT=0``).
- **Absent blobs.** A mirror that lacks some files' contents still gives a checkout of the others;
  the absent files are named (``checkout`` returns them).
- **Nothing runs.** git is called with an argument list (never a shell), options first, then
  ``--`` (or ``--end-of-options``) before anything that came from the dependents file.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from jaxcompat._util.redact import redact_text
from jaxcompat._util.statedir import CacheDir
from jaxcompat._util.uvbin import git_bin
from jaxcompat.model.dependents import bad_ref

TIMEOUT_S = 600
HEAD_REF = "refs/jaxcompat/HEAD"  # the remote's default branch, as last fetched
_SHA = re.compile(r"[0-9a-f]{40}")


class GitError(Exception):
    """git could not give the source (the message is git's cause, ``_cause``, credentials redacted)."""


def _cause(said: str, code: int = 0) -> str:
    """Why git failed, in its own words: its last ``fatal:`` line (else its last ``error:`` line,
    else its last line) — not the advice it prints after it ("Please make sure you have the
    correct access rights / and the repository exists.")."""
    lines = [ln.strip() for ln in said.splitlines() if ln.strip()]
    for prefix in ("fatal:", "error:"):
        marked = [ln for ln in lines if ln.lower().startswith(prefix)]
        if marked:
            return marked[-1]
    return lines[-1] if lines else f"git exited with {code}"


def _git(*args: str, cwd: Path | None = None, what: str = "") -> str:
    git = git_bin()  # none on this machine: ToolMissing, the user's setup, with the fix
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "LC_ALL": "C"}
    try:
        proc = subprocess.run([git, *args], capture_output=True, text=True, timeout=TIMEOUT_S, cwd=cwd, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise GitError(redact_text(f"{what}: {e}")) from None
    if proc.returncode != 0:
        why = _cause(proc.stderr or proc.stdout, proc.returncode)
        raise GitError(redact_text(f"{what}: {why}" if what else why))
    return proc.stdout.strip()


def mirror(url: str, cache_dir: Path) -> Path:
    """The cached bare repository of ``url`` (blobs fetched as a checkout needs them)."""
    return CacheDir(cache_dir).git_mirror(url)


def _fetch(url: str, bare: Path, *refs: str) -> None:
    what = f"{url}: fetch"
    if not (bare / "HEAD").is_file():
        shutil.rmtree(bare, ignore_errors=True)
        bare.parent.mkdir(parents=True, exist_ok=True)
        # a partial clone of a remote (commits and trees: the whole history to walk, cheaply); a
        # local mirror is copied whole, whatever it lacks
        _git("clone", "--quiet", "--bare", "--filter=blob:none", "--", url, str(bare), what=f"{url}: clone")
    specs = list(refs) or ["+refs/heads/*:refs/heads/*", f"+HEAD:{HEAD_REF}"]
    _git("--git-dir", str(bare), "fetch", "--quiet", "--force", "--tags", "origin", *specs, what=what)


def _commit(bare: Path, name: str) -> str:
    try:
        return _git("--git-dir", str(bare), "rev-parse", "--verify", "--quiet", "--end-of-options",
                    f"{name}^{{commit}}")
    except GitError:
        return ""


def resolve(url: str, ref: str, cache_dir: Path, as_of: str | None = None) -> str:
    """The commit ``ref`` (a branch, a tag, a commit; "" = the default branch) names at the remote
    now, or, ``as_of`` a day (YYYY-MM-DD), the last commit before that day on it (first parents)."""
    if ref and bad_ref(ref) and not _SHA.fullmatch(ref):
        raise GitError(f"ref {ref!r}: {bad_ref(ref)}")
    bare = mirror(url, cache_dir)
    if not (_SHA.fullmatch(ref) and _commit(bare, ref)):  # a known commit never moves: no fetch
        _fetch(url, bare)
    names = [f"refs/heads/{ref}", f"refs/tags/{ref}", ref] if ref else [HEAD_REF]
    commit = next((c for c in map(lambda n: _commit(bare, n), names) if c), "")
    if not commit and ref:  # a commit no branch holds: ask for it by name
        _fetch(url, bare, ref)
        commit = _commit(bare, "FETCH_HEAD")
    if not commit:
        raise GitError(redact_text(f"{url}: no branch, tag or commit {ref or 'HEAD'}"))
    if as_of:
        before = _git("--git-dir", str(bare), "rev-list", "-n", "1", "--first-parent", f"--before={as_of}T00:00:00Z",
                      commit, "--", what=f"{url}@{ref or 'HEAD'}")
        if not before:
            raise GitError(redact_text(f"{url}@{ref or 'HEAD'}: no commit before {as_of}"))
        commit = before
    return commit


def describe(url: str, commit: str, cache_dir: Path) -> str:
    """The commit named by its nearest tag (``git describe --tags``: v0.13.1-12-g0123abcd), or its
    short hash where no tag precedes it."""
    try:
        return _git("--git-dir", str(mirror(url, cache_dir)), "describe", "--tags", "--always", "--abbrev=12",
                    "--end-of-options", commit)
    except GitError:
        return commit[:12]


def checkout(url: str, commit: str, cache_dir: Path, into: Path) -> list[str]:
    """``commit`` checked out at ``into`` (a worktree of the cached repository: blobs a partial
    clone lacks are fetched as git checks out). Returns the files whose contents the repository
    does not have (left out of the checkout, named), [] as a rule. A blob once found absent (the
    remote lacks it too) is remembered, so later checkouts do not ask the remote again (with a
    local mirror, each such ask walked the whole history: 24 s of CPU for jax). A commit the cached
    repository lacks (a state folder that never fetched ``url``: ``bisect --from crater.json`` on
    another machine) is fetched first."""
    bare = mirror(url, cache_dir)
    if not _commit(bare, commit):
        resolve(url, commit, cache_dir)
    _git("--git-dir", str(bare), "worktree", "prune", what=f"{url}: worktree prune")
    into.parent.mkdir(parents=True, exist_ok=True)
    _git("--git-dir", str(bare), "worktree", "add", "--quiet", "--force", "--no-checkout", "--detach", "--",
         str(into), commit, what=f"{url}@{commit[:12]}")
    known = _known_absent(bare)
    missing = _missing(into, commit)
    if missing and missing <= known:
        return _checkout_present(into, commit, missing)
    try:
        _git("checkout", "--quiet", "--force", "--detach", commit, "--", cwd=into, what=f"{url}@{commit[:12]}")
        return []
    except GitError as whole:
        absent = _missing(into, commit)
        if not absent:
            raise whole from None
        (bare / KNOWN_ABSENT).write_text("".join(f"{oid}\n" for oid in sorted(known | absent)))
        return _checkout_present(into, commit, absent)


KNOWN_ABSENT = "jaxcompat-absent-blobs"  # in the cached bare repository: blobs its remote lacks


def _known_absent(bare: Path) -> set[str]:
    path = bare / KNOWN_ABSENT
    return set(path.read_text().split()) if path.is_file() else set()


def _missing(into: Path, commit: str) -> set[str]:
    """The objects of ``commit``'s tree this repository does not hold (not asked of the remote)."""
    return {line[1:] for line in _git("rev-list", "--objects", "--missing=print", "--no-walk", commit,
                                      cwd=into).splitlines() if line.startswith("?")}


def _checkout_present(into: Path, commit: str, absent: set[str]) -> list[str]:
    """Every file whose blob is here; the others named (a mirror that lacks some blobs)."""
    listing = _git("ls-tree", "-r", "-z", "--full-tree", commit, cwd=into)
    present, missing = [], []
    for entry in listing.split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        (missing if meta.split()[2] in absent else present).append(path)
    git = git_bin()
    env = {**os.environ, "GIT_LITERAL_PATHSPECS": "1", "GIT_TERMINAL_PROMPT": "0"}
    proc = subprocess.run([git, "checkout", "--quiet", commit, "--pathspec-from-file=-", "--pathspec-file-nul"],
                          input="\0".join(present), capture_output=True, text=True, cwd=into, env=env,
                          timeout=TIMEOUT_S)
    if proc.returncode != 0:
        raise GitError(redact_text(_cause(proc.stderr) if proc.stderr.strip() else "checkout failed"))
    return sorted(missing)


def run_git(*args: str, what: str = "") -> str:
    """git with an argument list (never a shell), its cause as the error (for other walkers of
    the cached repositories: ``env/commits.py``)."""
    return _git(*args, what=what)


def commit_of(bare: Path, name: str) -> str:
    """The commit ``name`` names in the bare repository ``bare``, "" where it names none."""
    return _commit(bare, name)

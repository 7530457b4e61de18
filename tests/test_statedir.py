"""The state folder's layout (``jaxcompat/_util/statedir.py``): its paths are the ones users'
caches already sit at, each member says its path in its docstring, and docs/ci.md's table of the
state folder is that module's, row for row."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from jaxcompat._util.statedir import CacheDir, StateDir

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "ci.md"
BEGIN, END = "<!-- state folder: generated from jaxcompat/_util/statedir.py -->", "<!-- end of state folder -->"


def _members(cls) -> list[tuple[str, object]]:
    return [(n, v) for n, v in vars(cls).items() if not n.startswith("_") and isinstance(v, (property, type(_members)))]


def _path(cls, name: str, root: Path) -> Path:
    """The member's path from ``root``, each argument ``<its name>``."""
    member = getattr(cls(root), name)
    if callable(member):
        return member(*(f"<{p}>" for p in inspect.signature(member).parameters))
    return member


def _said(member) -> tuple[str, str]:
    """(path, what it holds) as the member's docstring says them."""
    doc = inspect.getdoc(member.fget if isinstance(member, property) else member)
    m = re.fullmatch(r"``([^`]+)``: (.+)", doc or "", re.S)
    assert m, f"{member}: the docstring must start with ``its/path``: and say what it holds"
    return m.group(1), " ".join(m.group(2).split())


def rows() -> list[str]:
    out = ["| path under the state folder | what it holds |", "|---|---|"]
    for cls in (StateDir, CacheDir):
        for _name, member in _members(cls):
            path, what = _said(member)
            out.append(f"| `{path}` | {what.replace('``', '`')} |")
    return out


def test_every_member_says_its_own_path():
    wrong = []
    for cls, root in ((StateDir, Path("/S")), (CacheDir, Path("/S/cache"))):
        for name, member in _members(cls):
            said = _said(member)[0].rstrip("/")
            real = _path(cls, name, root).relative_to("/S").as_posix()
            pattern = "".join("[^/]+" if part.startswith("<") else re.escape(part)
                              for part in re.split(r"(<[^>]+>)", said))
            if not re.fullmatch(pattern, real):
                wrong.append(f"{cls.__name__}.{name}: says {said}, is {real}")
    assert not wrong, "; ".join(wrong)


def test_the_paths_are_where_users_caches_already_are():
    """The layout must not move: these are the joins the modules made before the layout had a module."""
    s = StateDir(Path("/S"))
    c = CacheDir(s.cache)
    assert [s.cache, s.envs, s.env("cpu-a"), s.locks, s.run("cpu-a-user"), s.results, s.crater_sources,
            s.crater_result("optax"), s.crater_cached("optax", "k1"), s.commits("jax"), s.learned, s.flaky] == [
        Path(p) for p in ("/S/cache", "/S/envs", "/S/envs/cpu-a", "/S/locks", "/S/runs/cpu-a-user", "/S/results",
                          "/S/crater/src", "/S/crater/results/optax.json", "/S/crater/cache/optax-k1.json",
                          "/S/commits/jax", "/S/learned.json", "/S/flaky.json")]
    assert [c.releases("jax"), c.project("jax"), c.requires("jax", "0.4.30"), c.jaxlib_requirement("0.4.30"),
            c.import_probes, c.defines] == [
        Path(p) for p in ("/S/cache/releases-jax.json", "/S/cache/project-jax.json",
                          "/S/cache/requires-jax-0.4.30.json", "/S/cache/jax-0.4.30-jaxlib.txt",
                          "/S/cache/import-probes.json", "/S/cache/defines.json")]
    # the mirror's name: the first 16 hex digits of the URL's sha256, as it always was
    assert c.git_mirror("https://github.com/jax-ml/jax") == Path("/S/cache/git/a38d273f219db547.git")


def test_the_docs_table_is_the_modules():
    text = DOC.read_text(encoding="utf-8")
    assert BEGIN in text and END in text, f"{DOC.name}: no state folder table between {BEGIN} and {END}"
    shown = text.split(BEGIN, 1)[1].split(END, 1)[0].strip().splitlines()
    assert shown == rows(), f"{DOC.name}'s state folder table is not statedir.py's; write:\n" + "\n".join(rows())


def test_the_workflows_cache_only_paths_the_layout_names():
    """What CI keeps between runs (actions/cache paths under .jaxcompat/) is a path the layout names."""
    said = {_said(m)[0].rstrip("/") for cls in (StateDir, CacheDir) for _n, m in _members(cls)}
    said |= {p.rsplit("/", 1)[0] for p in said}  # crater/src names crater/ too
    cached = {m.group(1) for wf in (REPO / ".github" / "workflows").glob("*.yml")
              for m in re.finditer(r"\.jaxcompat/([\w/.-]+)", wf.read_text(encoding="utf-8"))}
    assert cached and not cached - said, f"cached by a workflow, not named in statedir.py: {sorted(cached - said)}"

"""Candidates that are not releases (sources.py): direct references, other indexes, --pre.

Offline and without jax: a local find-links folder holds tiny fake wheels with .dev/rc versions;
the uv command lines, the requirement parsing, the keys that must change with the index options
and the report fields read from a fake direct_url.json are checked here. A git URL cannot be
installed without network: only its parsing and plumbing are tested."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from jaxcompat._util.uvbin import uv_bin
from jaxcompat.commands import main
from jaxcompat.env import candidatekinds, envs, resolution, sources
from jaxcompat.env.candidate import CandidateError, candidate_cell, needs, parse_requirement, read_requirements
from jaxcompat.env.candidatekinds import files
from jaxcompat.model.index import NO_INDEX, IndexOptions, SourceError, index_options
from jaxcompat.model.matrix import Cell
from jaxcompat.model.outcomes import CellResult
from jaxcompat.report.candidate import verdict
from jaxcompat.report.scrub import Scrubber, scrub_pin, scrub_url
from jaxcompat.run import resultcache
from jaxcompat.run.cell import record_sources
from jaxcompat.run.runner import CellRun

GIT = "git+https://github.com/patrick-kidger/equinox@main"


def make_wheel(folder: Path, name: str, version: str, requires: tuple[str, ...] = (), mtime: str = "") -> Path:
    """A minimal valid wheel: one module, METADATA, WHEEL, RECORD."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-{version}-py3-none-any.whl"
    info = f"{name}-{version}.dist-info"
    meta = "Metadata-Version: 2.1\nName: {}\nVersion: {}\n{}".format(
        name, version, "".join(f"Requires-Dist: {r}\n" for r in requires))
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{name}/__init__.py", f"__version__ = {version!r}\n")
        z.writestr(f"{info}/METADATA", meta)
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{info}/RECORD", "")
    if mtime:
        import datetime as dt

        t = dt.datetime.fromisoformat(mtime + "T12:00:00+00:00").timestamp()
        os.utime(path, (t, t))
    return path


@pytest.fixture
def links(tmp_path):
    """A find-links folder with a .dev and an rc wheel of a fake equinox and of a fake jax."""
    folder = tmp_path / "links"
    make_wheel(folder, "equinox", "0.14.0.dev0", mtime="2026-11-20")
    make_wheel(folder, "equinox", "0.13.2rc1", mtime="2026-11-10")
    make_wheel(folder, "jax", "0.9.0.dev20261120", requires=("jaxlib<=0.9.0,>=0.8.1",), mtime="2026-11-20")
    return folder


# --- parsing -------------------------------------------------------------------------------


def test_an_unquoted_direct_reference_is_one_requirement(tmp_path):
    wheel = make_wheel(tmp_path, "equinox", "0.13.1")
    assert read_requirements(["jax==0.6.2", "equinox", "@", wheel.as_uri()]) == \
        ["jax==0.6.2", f"equinox @ {wheel.as_uri()}"]
    with pytest.raises(CandidateError, match="needs a URL"):
        read_requirements(["equinox", "@"])


def test_a_plain_path_becomes_a_direct_reference(tmp_path, monkeypatch):
    wheel = make_wheel(tmp_path / "dist", "equinox", "0.14.0.dev0")
    project = tmp_path / "eqx"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "Equinox"\nversion = "0.14.0.dev0"\n')
    monkeypatch.chdir(tmp_path)
    assert str(parse_requirement("dist/equinox-0.14.0.dev0-py3-none-any.whl")) == f"equinox @ {wheel.as_uri()}"
    assert str(parse_requirement("./eqx")) == f"equinox @ {project.as_uri()}"
    cell = candidate_cell(["jax==0.6.2", "./dist/equinox-0.14.0.dev0-py3-none-any.whl"], python="3.11")
    assert cell.pins["equinox"] == f"@ {wheel.as_uri()}"
    assert f"equinox @ {wheel.as_uri()}" in cell.requirements()
    assert "equinox" not in cell.exact_pins() and "equinox" not in cell.optional()


@pytest.mark.parametrize("text, message", [
    ("./missing/equinox-0.13.1-py3-none-any.whl", "no such file"),
    ("equinox @ file:///no/such/equinox-0.13.1-py3-none-any.whl", "no such file"),
    ("equinox @ ftp://example.org/equinox-0.13.1-py3-none-any.whl", "uv cannot install from a ftp URL"),
    ("equinox @ hg+https://example.org/equinox", "uv cannot install"),
    ("equinox @ git+https:///equinox", "needs a host"),
])
def test_bad_direct_references_are_one_clear_error(text, message):
    with pytest.raises(CandidateError, match=message):
        parse_requirement(text)


def test_a_wheel_of_another_package_is_refused(tmp_path):
    wheel = make_wheel(tmp_path, "diffrax", "0.7.0")
    with pytest.raises(CandidateError, match="that file is diffrax, not equinox"):
        parse_requirement(f"equinox @ {wheel.as_uri()}")


def test_a_git_reference_is_parsed_and_reaches_the_resolver_as_written():
    """Not installable here (no network to GitHub): the requirement and the plumbing only."""
    req = parse_requirement(f"equinox @ {GIT}")
    assert sources.direct_ref(req) == sources.DirectRef("equinox", GIT, candidatekinds.git)
    cell = candidate_cell(["jax==0.6.2", f"equinox @ {GIT}"], python="3.11")
    assert f"equinox @ {GIT}" in cell.requirements()
    assert sources.moving(cell.pins, NO_INDEX)  # a branch moves: resolved again on every run
    assert needs(["jax==0.6.2", f"equinox @ {GIT}", "./dist/x-1-py3-none-any.whl"]) == {"git"}  # git, to have it
    assert needs(["jax==0.6.2", "equinox @ https://example.org/equinox-0.13.1.tar.gz"]) == set()
    assert sources.identity(cell.pins, NO_INDEX) == {}  # its commit is in uv's lock line instead
    date, why = resolution.resolution_date(cell, Path("/nonexistent"))
    assert date == sources.day_after(files.today()) and "dated today" in why[0]


# --- index options -------------------------------------------------------------------------


def test_index_options_are_validated_and_made_absolute(tmp_path, links, monkeypatch):
    monkeypatch.chdir(tmp_path)
    opts = index_options("https://example.org/simple/", ["https://nightly.example/simple"], ["links"], pre=True)
    assert opts == IndexOptions("https://example.org/simple", ("https://nightly.example/simple",),
                                (str(links),), True)
    with pytest.raises(SourceError, match="--find-links 'nope': no such folder"):
        index_options(find_links=["nope"])
    with pytest.raises(SourceError, match="not a URL uv can read an index from"):
        index_options("ftp://example.org/simple")
    with pytest.raises(SourceError, match="no such folder"):
        index_options("file:///no/such/index")
    assert not NO_INDEX and IndexOptions(pre=True) and not IndexOptions(pre=True).other_index


def test_the_uv_command_lines_carry_the_index_options(tmp_path, links):
    opts = index_options(find_links=[str(links)], extra_index_urls=["https://nightly.example/simple"], pre=True)
    cell = candidate_cell(["equinox==0.14.0.dev0"], python="3.11", index=opts)
    argv = envs.resolve_args(cell, sys.executable, "2026-11-21", tmp_path / "r.in")
    assert argv[argv.index("--find-links") + 1] == str(links)
    assert argv[argv.index("--extra-index-url") + 1] == "https://nightly.example/simple"
    assert argv[argv.index("--prerelease") + 1] == "allow" and "--emit-index-annotation" in argv
    assert ["--exclude-newer-package", f"equinox={envs.FAR_FUTURE}"] == argv[-2:]
    assert opts.uv_args(resolving=False) == ["--extra-index-url", "https://nightly.example/simple",
                                             "--find-links", str(links)]  # what uv pip sync gets
    plain = envs.resolve_args(
        candidate_cell(["equinox==0.13.1"], python="3.11"), sys.executable, None, tmp_path / "r.in"
    )
    assert not {"--find-links", "--prerelease", "--emit-index-annotation", "--index-url"} & set(plain)


def test_the_environment_identity_changes_with_the_index_and_the_wheel(tmp_path, links):
    harness = ("pytest",)
    plain = candidate_cell(["equinox==0.14.0.dev0"], python="3.11")
    found = candidate_cell(["equinox==0.14.0.dev0"], python="3.11", index=index_options(find_links=[str(links)]))
    pre = candidate_cell(["equinox==0.14.0.dev0"], python="3.11",
                         index=index_options(find_links=[str(links)], pre=True))
    assert len({plain.id, found.id, pre.id}) == 3  # another environment folder and lock
    keys = {envs.spec_hash(c, "/py", "2026-11-21", harness) for c in (plain, found, pre)}
    assert len(keys) == 3
    # the same options, a wheel replaced under the same name in the folder: a new environment
    before = envs.spec_hash(found, "/py", "2026-11-21", harness)
    header = sources.lock_header(found.pins, found.index)
    make_wheel(links, "equinox", "0.14.0.dev0", requires=("numpy",))
    os.utime(links / "equinox-0.14.0.dev0-py3-none-any.whl", ns=(1, 1))
    assert envs.spec_hash(found, "/py", "2026-11-21", harness) != before
    assert sources.lock_header(found.pins, found.index) != header
    # ... and the result cache, keyed by the lock text the header is part of, too
    lock = "equinox==0.14.0.dev0\n"
    assert resultcache.env_key(header + lock, "/py", "cpu", None, "h") != \
        resultcache.env_key(sources.lock_header(found.pins, found.index) + lock, "/py", "cpu", None, "h")
    # a cell of PyPI releases keeps its key: nothing new in its payload or its lock
    assert sources.identity(plain.pins, plain.index) == {} and sources.lock_header(plain.pins, plain.index) == ""


def test_a_rebuilt_wheel_at_the_same_path_is_a_new_environment(tmp_path):
    wheel = make_wheel(tmp_path, "equinox", "0.13.1")
    cell = candidate_cell([f"equinox @ {wheel.as_uri()}"], python="3.11")
    before = envs.spec_hash(cell, "/py", None, ("pytest",))
    make_wheel(tmp_path, "equinox", "0.13.1", requires=("jax>=0.6",))
    assert envs.spec_hash(cell, "/py", None, ("pytest",)) != before
    assert candidate_cell([f"equinox @ {wheel.as_uri()}"], python="3.11").id == cell.id  # same folder, new lock


def test_uv_resolves_a_dev_wheel_from_the_find_links_folder_offline(tmp_path, links, monkeypatch):
    """The real resolver on the real command line, offline: the pre-release and where it came from."""
    monkeypatch.setenv("UV_OFFLINE", "1")
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    cell = candidate_cell(["equinox==0.14.0.dev0"], python="3.11", companions=False,
                          index=index_options(find_links=[str(links)]))
    req = tmp_path / "r.in"
    req.write_text("\n".join(cell.requirements()) + "\n")
    proc = subprocess.run(envs.resolve_args(cell, sys.executable, "2026-11-21", req), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    found = sources.lock_sources(proc.stdout)
    assert found["equinox"] == {"version": "0.14.0.dev0", "url": links.as_uri(), "kind": "index"}
    rec = sources.sources(["equinox"], {}, proc.stdout, None, find_links=cell.index.find_links)
    assert rec == {"equinox": {"version": "0.14.0.dev0", "url": links.as_uri(), "kind": "find-links",
                               "prerelease": True}}
    # a version the folder does not have: the resolver's own message
    req.write_text("equinox==0.15.0rc1\n")
    proc = subprocess.run([uv_bin(), *envs.resolve_args(cell, sys.executable, None, req)[1:]],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "equinox" in proc.stderr


# --- dates and jaxlib ----------------------------------------------------------------------


def _pypi_cache(cache: Path) -> None:
    """What PyPI knows (offline): jax and equinox releases, jaxlib's files."""
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "releases-jax.json").write_text(json.dumps({"0.6.2": {"date": "2025-06-17", "yanked": False}}))
    (cache / "releases-equinox.json").write_text(json.dumps({"0.13.1": {"date": "2025-09-20", "yanked": False}}))
    files = {v: [{"filename": f"jaxlib-{v}-cp311-cp311-manylinux2014_x86_64.whl", "url": "x",
                  "requires_python": ">=3.10", "yanked": False, "date": d}]
             for v, d in (("0.8.1", "2026-10-01"), ("0.8.2", "2026-11-01"), ("0.9.0", "2026-12-01"))}
    (cache / "project-jaxlib.json").write_text(json.dumps({"url": "x", "files": files}))


def test_a_wheel_is_dated_by_its_file_and_a_find_links_pre_release_by_its_own(tmp_path, links):
    cache = tmp_path / "cache"
    _pypi_cache(cache)
    wheel = make_wheel(tmp_path / "dist", "equinox", "0.13.1", mtime="2026-01-05")
    cell = candidate_cell(["jax==0.6.2", f"equinox @ {wheel.as_uri()}"], python="3.11")
    date, why = resolution.resolution_date(cell, cache)
    assert date == "2026-01-06" and "dated by its file (2026-01-05)" in why[0]
    assert "the PyPI releases alone: 2025-06-18" in why[0]
    cell = candidate_cell(["jax==0.6.2", "equinox==0.14.0.dev0"], python="3.11",
                          index=index_options(find_links=[str(links)], pre=True))
    assert resolution.off_pypi(cell, cache) == {"equinox"}
    date, why = resolution.resolution_date(cell, cache)
    assert date == "2026-11-21" and "equinox-0.14.0.dev0-py3-none-any.whl" in why[0]
    # without another index, a version PyPI lacks stays what it was: not on the index
    assert resolution.off_pypi(candidate_cell(["equinox==0.14.0.dev0"], python="3.11"), cache) == set()


def test_jaxlib_of_a_jax_not_on_pypi_is_read_from_its_own_wheel(tmp_path, links):
    cache = tmp_path / "cache"
    _pypi_cache(cache)
    (cache / "releases-jax.json").write_text(json.dumps({"0.6.2": {"date": "2025-06-17", "yanked": False}}))
    cell = candidate_cell(["jax==0.9.0.dev20261120"], python="3.11", companions=False,
                          index=index_options(find_links=[str(links)], pre=True))
    done = resolution.complete(cell, cache)
    assert done.pins["jaxlib"] == "0.8.2"  # the newest PyPI jaxlib it allows as of 2026-11-21
    assert "jaxlib<=0.9.0,>=0.8.1" in resolution.jaxlib_notes(cell, done, cache)[0]
    # a direct reference to that wheel: the same metadata, read from the file
    wheel = links / "jax-0.9.0.dev20261120-py3-none-any.whl"
    cell = candidate_cell([f"jax @ {wheel.as_uri()}"], python="3.11", companions=False)
    assert resolution.complete(cell, cache).pins["jaxlib"] == "0.8.2"
    # a git jax: its metadata is read by the resolver, not here
    cell = candidate_cell(["jax @ git+https://github.com/jax-ml/jax@main"], python="3.11", companions=False)
    done = resolution.complete(cell, cache)
    assert "jaxlib" not in done.pins
    assert resolution.jaxlib_notes(cell, done, cache) == [
        "jaxlib: what the resolver picks for jax's own metadata (jax from a git, not readable here)"]


# --- what was installed --------------------------------------------------------------------


def _dist_info(site: Path, name: str, version: str, direct_url: dict | None) -> None:
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Name: {name}\nVersion: {version}\n")
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url))


def test_sources_are_read_from_direct_url_json(tmp_path):
    site = tmp_path / "env" / "lib" / "python3.11" / "site-packages"
    _dist_info(site, "equinox", "0.13.1", {"url": "file:///home/u/dist/equinox-0.13.1-py3-none-any.whl",
                                           "archive_info": {"hashes": {"sha256": "ab" * 32}}})
    _dist_info(site, "diffrax", "0.7.1.dev0", {"url": "https://github.com/patrick-kidger/diffrax",
                                                "vcs_info": {"vcs": "git", "commit_id": "0123abc" * 5 + "01234",
                                                             "requested_revision": "main"}})
    _dist_info(site, "lineax", "0.0.9", {"url": "file:///home/u/lineax", "dir_info": {"editable": True}})
    _dist_info(site, "jax", "0.6.2", None)
    assert sources.site_packages(tmp_path / "env") == site
    found = sources.sources(["jax", "equinox", "diffrax", "lineax", "chex"],
                            {"jax": "0.6.2", "equinox": "0.13.1", "diffrax": "0.7.1.dev0", "lineax": "0.0.9"},
                            "jax==0.6.2\n", site)
    assert found == {
        "equinox": {"version": "0.13.1", "url": "file:///home/u/dist/equinox-0.13.1-py3-none-any.whl",
                    "kind": "wheel", "sha256": "ab" * 32},
        "diffrax": {"version": "0.7.1.dev0", "url": "git+https://github.com/patrick-kidger/diffrax",
                    "kind": "git", "commit": "0123abc" * 5 + "01234", "requested": "main", "prerelease": True},
        "lineax": {"version": "0.0.9", "url": "file:///home/u/lineax", "kind": "editable"},
    }  # jax, a PyPI release, needs no note; chex is not installed
    assert sources.describe("diffrax", found["diffrax"]) == (
        "diffrax 0.7.1.dev0 (pre-release) from git git+https://github.com/patrick-kidger/diffrax "
        "at commit " + "0123abc" * 5 + "01234")


def test_the_cell_reports_its_sources_scrubbed(tmp_path, links):
    """record_sources + Scrubber.cell + verdict, as run_cell chains them, on a fake environment."""
    home = tmp_path / "home"
    wheel = make_wheel(home / "dist", "equinox", "0.13.1")
    cell = candidate_cell(["jax==0.6.2", f"equinox @ {wheel.as_uri()}"], python="3.11",
                          index=index_options(find_links=[str(links)], pre=True))
    lock = sources.lock_header(cell.pins, cell.index) + f"equinox @ {wheel.as_uri()}\njax==0.6.2\n"
    env = tmp_path / "state" / "envs" / cell.id
    site = env / "lib" / "python3.11" / "site-packages"
    _dist_info(site, "equinox", "0.13.1", {"url": wheel.as_uri(), "archive_info": {}})
    (env / envs.SPEC_FILE).write_text(json.dumps({"lock": envs.hashlib.sha256(lock.encode()).hexdigest()[:16]}))
    result = CellResult(id=cell.id, python="3.11", backend="cpu", status="ok", requested=dict(cell.pins),
                        versions={"jax": "0.6.2", "equinox": "0.13.1"})
    record_sources(cell, lock, CellRun(versions={"jax": "0.6.2", "equinox": "0.13.1"}), result, tmp_path / "state")
    Scrubber({str(home): "~"}).cell(result)
    digest = sources.content_digest(sources.DirectRef("equinox", wheel.as_uri(), candidatekinds.wheel))
    assert result.sources == {"equinox": {"version": "0.13.1", "url": "file://~/dist/equinox-0.13.1-py3-none-any.whl",
                                          "kind": "wheel", "sha256": digest}}
    assert result.requested["equinox"] == "@ file://~/dist/equinox-0.13.1-py3-none-any.whl"
    assert result.index == {"index_url": "", "extra_index_urls": [], "find_links": ["<local>/links"], "pre": True}
    data = result.to_dict()
    assert data["sources"] and str(tmp_path) not in json.dumps(data)
    assert "sources" not in CellResult(id="c", python="3.11", backend="cpu", status="ok").to_dict()
    from jaxcompat.model.matrix import Matrix as M
    from jaxcompat.model.matrix import Settings

    text, _ = verdict(result, M(path=Path("m.toml"), settings=Settings(), cells=(), failures=()))
    first = text.splitlines()[:3]
    assert first[1] == "  resolved from: find-links <local>/links; pre-releases allowed (--pre)"
    assert first[2] == f"  installed: equinox 0.13.1 from wheel file://~/dist/equinox-0.13.1-py3-none-any.whl " \
                       f"(sha256 {digest[:12]}…)"


def test_the_environment_is_read_only_when_it_holds_this_lock(tmp_path):
    cell = Cell(id="c", python="3.11", backend="cpu", pins={})
    env = tmp_path / "c"
    env.mkdir()
    (env / envs.SPEC_FILE).write_text(json.dumps({"lock": "0" * 16}))
    assert envs.matching_env(cell, "jax==0.6.2\n", tmp_path) is None


# --- the command line ----------------------------------------------------------------------


@pytest.mark.parametrize("argv, message", [
    (["check", "--find-links", "/no/such/folder", "jax==0.6.2"], "--find-links '/no/such/folder': no such folder"),
    (["check", "--index-url", "ftp://x/simple", "jax==0.6.2"], "not a URL uv can read"),
    (["check", "jax==0.6.2", "equinox", "@", "file:///no/such/equinox-0.13.1-py3-none-any.whl"], "no such file"),
    (["latest", "--extra-index-url", "nightly", "--pre"], "not a URL uv can read"),
])
def test_bad_sources_stop_before_anything_installs(argv, message, capsys, tmp_path):
    code = main(argv + ["--state", str(tmp_path / "state"), "--reports", str(tmp_path / "reports")])
    assert code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "state").exists()


def test_local_paths_in_urls_keep_only_their_names():
    home = {"/home/u": "~"}
    assert scrub_url("file:///home/u/dist/x-1-py3-none-any.whl", home) == "file://~/dist/x-1-py3-none-any.whl"
    assert scrub_url("file:///srv/build/x-1-py3-none-any.whl", home) == "file://<local>/x-1-py3-none-any.whl"
    assert scrub_url("git+file:///srv/repos/equinox@v0.13.1", home) == "git+file://<local>/equinox@v0.13.1"
    assert scrub_url("/srv/wheels", home) == "<local>/wheels"
    assert scrub_url(GIT, home) == GIT and scrub_url("https://x.org/simple", home) == "https://x.org/simple"
    assert (
        scrub_pin("@ file:///srv/eqx", home) == "@ file://<local>/eqx"
        and scrub_pin("0.6.2", home) == "0.6.2"
    )


def test_a_project_folder_is_identified_by_its_files_not_its_build_output(tmp_path):
    project = tmp_path / "eqx"
    (project / "equinox").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[project]\nname = "equinox"\nversion = "0.14.0.dev0"\n')
    (project / "equinox" / "__init__.py").write_text("x = 1\n")
    ref = sources.direct_ref(parse_requirement(str(project)))
    assert ref.kind is candidatekinds.folder and ref.name == "equinox"
    before = sources.content_digest(ref)
    (project / "equinox" / "__pycache__").mkdir()
    (project / "equinox" / "__pycache__" / "m.pyc").write_bytes(b"\0")
    (project / "build").mkdir()
    (project / "build" / "junk.py").write_text("y = 2\n")
    assert sources.content_digest(ref) == before
    (project / "equinox" / "__init__.py").write_text("x = 2\n")
    assert sources.content_digest(ref) != before
    keyed = sources.content_digest(ref)  # what a build backend packs: a nested build/, a linked folder
    (project / "equinox" / "build").mkdir()
    (project / "equinox" / "build" / "__init__.py").write_text("z = 1\n")
    assert sources.content_digest(ref) != keyed
    keyed, shared = sources.content_digest(ref), tmp_path / "shared"
    shared.mkdir()
    (shared / "ops.py").write_text("w = 1\n")
    (project / "equinox" / "ops").symlink_to(shared, target_is_directory=True)
    assert sources.content_digest(ref) != keyed
    keyed = sources.content_digest(ref)
    (shared / "ops.py").write_text("w = 2\n")
    assert sources.content_digest(ref) != keyed
    date, why = resolution.resolution_date(candidate_cell([ref.name + " " + ref.pin], python="3.11"), Path("/x"))
    assert date == sources.day_after(files.today()) and "from a folder, dated today" in why[0]


def test_latest_takes_the_index_options(tmp_path, links):
    from jaxcompat.operations.latest import latest_cell

    opts = index_options(find_links=[str(links)], pre=True)
    cell = latest_cell("3.12", opts)
    assert cell.index == opts and latest_cell("3.12").index == NO_INDEX
    argv = envs.resolve_args(cell, sys.executable, None, tmp_path / "r.in")
    assert "--prerelease" in argv and str(links) in argv


def test_an_environment_is_reused_only_for_the_interpreter_it_was_built_with(tmp_path, monkeypatch):
    """uv writes the same lock for Python 3.11 and 3.12 when the resolution agrees: a 3.11
    environment must not be re-used for a cell on 3.12 (seen on a real check --tests whose
    baseline claimed Python 3.12 and ran in the 3.11 environment of an earlier check)."""
    calls = []

    def fake_run(argv, **kw):
        calls.append(argv[1])
        if argv[1] == "venv":
            (tmp_path / "c" / "bin").mkdir(parents=True, exist_ok=True)
            (tmp_path / "c" / "bin" / "python").write_text("")
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(envs, "run_tool", fake_run)
    cell = Cell(id="c", python="3.11", backend="cpu", pins={})
    assert not envs.install(cell, "/py/3.11", "jax==0.9.2\n", tmp_path).reused
    assert envs.install(cell, "/py/3.11", "jax==0.9.2\n", tmp_path).reused
    assert not envs.install(cell, "/py/3.12", "jax==0.9.2\n", tmp_path).reused
    assert calls.count("venv") == 2
    assert envs.matching_env(cell, "jax==0.9.2\n", tmp_path, "/py/3.12") == tmp_path / "c"
    assert envs.matching_env(cell, "jax==0.9.2\n", tmp_path, "/py/3.11") is None

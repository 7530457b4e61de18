"""Pre-release upgrade check of one candidate combination (``nox -s check -- jax==X ...``).

Requirements are validated as PEP 508 strings before anything runs; they become the pins of a
single cell that is resolved, installed and run exactly as a matrix cell. Its verdict, for people,
is ``report/candidate.py``'s.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from jaxcompat._util.layout import command
from jaxcompat._util.text import first_line
from jaxcompat.env import candidatekinds, sources
from jaxcompat.model import verdicts
from jaxcompat.model.index import NO_INDEX, IndexOptions, SourceError
from jaxcompat.model.matrix import ANY, Cell, Matrix
from jaxcompat.model.outcomes import CellResult
from jaxcompat.model.vocab import CellStatus, EnvironmentKind, Outcome
from jaxcompat.plugin.backends import JAX_EXTRAS
from jaxcompat.plugin.packages import COMPANIONS


class CandidateError(ValueError):
    pass


def read_requirements(args: list[str]) -> list[str]:
    """Expand ``-r FILE`` / ``--requirement FILE``; drop comments and blank lines."""
    out: list[str] = []
    it = iter(args)
    for arg in it:
        if arg in ("-r", "--requirement"):
            path = next(it, None)
            if path is None:
                raise CandidateError("-r needs a file name")
            try:
                lines = Path(path).read_text(encoding="utf-8").splitlines()
            except OSError as e:
                raise CandidateError(f"cannot read requirements file {path}: {e.strerror}") from None
            for line in lines:
                line = line.split(" #")[0].strip()
                if line and not line.startswith("#"):
                    if line.startswith("-"):
                        raise CandidateError(f"{path}: option lines are not supported: {line!r} (give "
                                             "--index-url/--extra-index-url/--find-links/--pre on the command line)")
                    out.append(line)
        elif arg.startswith("-r") and len(arg) > 2:
            out.extend(read_requirements(["-r", arg[2:]]))
        elif arg == "@" and out:  # `equinox @ file:///…` unquoted: three words, one requirement
            url = next(it, None)
            if url is None:
                raise CandidateError(f"{out[-1]} @ needs a URL after the @")
            out[-1] = f"{out[-1]} @ {url}"
        else:
            out.append(arg)
    return out


def as_requirement(text: str) -> str:
    """A plain path to a wheel, an sdist or a project folder becomes ``name @ file:///abs``."""
    try:
        return sources.path_requirement(text) if sources.looks_like_path(text) else text
    except SourceError as e:
        raise CandidateError(str(e)) from None


def parse_requirement(text: str) -> Requirement:
    """A validated PEP 508 requirement: a release specifier, or a direct reference uv can install
    (``name @ file:///abs/x.whl``, a project folder, ``name @ git+https://host/repo@ref``)."""
    try:
        req = Requirement(as_requirement(text))
    except InvalidRequirement as e:
        raise CandidateError(f"invalid requirement {text!r}: {e}. "
                             "Write PEP 508 requirements, e.g. jax==0.4.35 equinox==0.11.6, "
                             "or equinox @ file:///ABSOLUTE/PATH/equinox-0.13.1-py3-none-any.whl") from None
    if req.url:
        if req.specifier:
            raise CandidateError(f"{text!r}: a direct reference takes no version specifier")
        try:
            req.url = sources.target(sources.direct_ref(req))  # what the pin holds: as its kind says
        except SourceError as e:
            raise CandidateError(str(e)) from None
    if req.marker is not None:
        raise CandidateError(f"environment markers are not allowed in a candidate: {text!r}")
    return req


def package_of(text: str) -> str:
    """The package (its canonical name) a candidate's requirement names, whatever its form —
    ``jax==0.4.33``, ``equinox @ git+https://…``, a plain path to a wheel, an sdist or a project
    folder — the one way to it wherever a requirement string was assumed; a wheel or an sdist no
    longer there is named by its file name; "" where nothing names a package."""
    try:
        return canonicalize_name(parse_requirement(text).name)
    except CandidateError:
        name = candidatekinds.named_by_file(Path(text.strip()).name)
        return canonicalize_name(name) if name else ""


def needs(texts: list[str]) -> set[str]:
    """What having the candidates' code takes (``"git"``: the git program), by the kind of each
    direct reference among ``texts``, read before they are validated."""
    return {need for text in texts for need in candidatekinds.needs(text.partition("@")[2].strip())}


def candidate_cell(requirements: list[str], *, python: str, cell_id: str | None = None,
                   companions: bool = True, index: IndexOptions = NO_INDEX) -> Cell:
    """Turn validated requirements into one cell. Exact pins stay exact; other specifiers are
    kept; a direct reference is the pin ``"@ URL"``; diffrax/optimistix/lineax/chex not named
    resolve to what the candidate allows (from ``index`` too)."""
    if not requirements:
        raise CandidateError(f"no requirements given: e.g. {command('check')} jax==0.4.35 equinox==0.11.6")
    pins: dict[str, str] = {}
    backend = "cpu"
    for text in requirements:
        req = parse_requirement(text)
        name = canonicalize_name(req.name)
        if name in pins:
            raise CandidateError(f"{name} is given twice")
        for line in ("cuda12", "cuda13"):  # jax[cuda13], jax[cuda12], jax[cuda12_pip], jax[cuda12_local]
            if any(e == line or e.startswith(line + "_") for e in req.extras):
                backend = line
        spec = str(req.specifier)
        exact = [s.version for s in req.specifier if s.operator in ("==", "===") and "*" not in s.version]
        if req.url:
            pins[name] = sources.DIRECT + req.url
        else:
            pins[name] = exact[0] if len(req.specifier) == 1 and exact else (spec or ANY)
    _check_extra(backend, pins.get("jax", ANY))
    added = tuple(d for d in COMPANIONS if d not in pins) if companions else ()
    for dist in added:
        pins[dist] = ANY
    # The id names the environment (its folder, its lock): index options make another one.
    key = repr(sorted(pins.items())) + (repr(index.to_dict()) if index else "")
    digest = hashlib.sha256(key.encode()).hexdigest()[:8]
    return Cell(id=cell_id or f"check-{digest}", python=python, backend=backend, pins=pins, index=index,
                added=added)


def _check_extra(backend: str, jax: str) -> None:
    """jax[cuda13] on a jax that never declared it would install a CPU jax without a word."""
    from packaging.version import InvalidVersion, Version

    if backend not in JAX_EXTRAS or not jax[:1].isdigit():
        return
    extra, since = JAX_EXTRAS[backend]
    try:
        too_old = Version(jax) < Version(since)
    except InvalidVersion:
        return
    if too_old:
        raise CandidateError(f"jax {jax} does not declare the {extra} extra (jax[{extra}] exists from jax {since}): "
                             f"pin jax >= {since} for {backend}, or drop [{extra}] to check it on the CPU")


# A cell that ended so says nothing about the candidate: this machine lacks the interpreter or the
# device, our own harness failed, or it never finished.
_NOT_JUDGED = (CellStatus.PYTHON_MISSING, CellStatus.BACKEND_MISSING, CellStatus.HARNESS_ERROR, CellStatus.NOT_RUN)


def item(result: CellResult, safe: bool) -> verdicts.Item:
    """A candidate's cell (``check``, ``check --env``) as the one invariant reads it (``safe``: what
    ``report.candidate.verdict`` said): judged when its cases ran, or when the candidate itself did
    not resolve, install or import; not judged when the machine, our harness or the index (the
    network) is the cause, or only a package the suite added failed to import. Its cases run: those
    not skipped."""
    from jaxcompat.env.releases import unreachable

    if result.status == CellStatus.OK:
        ran = sum(r.outcome != Outcome.SKIPPED for r in result.results)
        return verdicts.Item(result.id, broken=not safe, judged=True, ran_candidate=ran,
                             why="every case was skipped" if not ran else "")
    why = f"{result.status}: {first_line(result.message, 200)}"
    failed = list(result.failed_imports) if result.status == CellStatus.IMPORT_ERROR else []
    added_only = bool(failed) and result.environment == EnvironmentKind.BUILT and all(m in result.added for m in failed)
    if result.status in _NOT_JUDGED or unreachable(result.message) or added_only:
        return verdicts.Item(result.id, why=why)
    return verdicts.Item(result.id, broken=True, judged=True, why=why)


def escape_pins(result: CellResult, matrix: Matrix, requirements: list[str], cache: Path) -> list[str]:
    """Resolver traps: for each known failure hit through a package the user did not pin exactly,
    the nearest release of that package outside the failure's range (newer first), as an extra pin."""
    from packaging.version import Version

    from jaxcompat.env import releases
    from jaxcompat.knowledge.rules import clause_holds, ranges

    pinned = {canonicalize_name(parse_requirement(r).name) for r in requirements
              if parse_requirement(r).url or any(s.operator == "==" for s in parse_requirement(r).specifier)}
    out: list[str] = []
    for r in result.results:
        f = matrix.failure(r.failure) if r.outcome == Outcome.REPRODUCED and r.failure else None
        if f is None or f.advisory:
            continue
        for clause in ranges(f, r.case):
            if not clause_holds(clause, result.versions):
                continue
            for dist, spec in clause.items():
                if dist in pinned or dist not in result.versions:
                    continue
                installed = Version(result.versions[dist])
                try:
                    rels = [Version(v) for v in releases.versions(dist, cache)]
                except releases.IndexError_:
                    continue
                newer = [v for v in rels if v > installed and not spec.contains(v, prereleases=True)]
                older = [v for v in rels if v < installed and not spec.contains(v, prereleases=True)]
                for pick in newer[:1] + older[-1:]:  # the nearest on each side, newer first
                    if f"{dist}=={pick}" not in out:
                        out.append(f"{dist}=={pick}")
    return out

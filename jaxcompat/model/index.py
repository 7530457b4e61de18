"""Where releases come from: the package indexes a cell resolves against (``--index-url``,
``--extra-index-url``, ``--find-links``, ``--pre``), as a typed record that travels with the cell.

A record of the model: no I/O beyond checking that a named folder exists when the options are
validated. An index URL may carry credentials (``https://user:token@host/simple``, a token in its
path or query): each URL is held as a ``Secret`` (``jaxcompat._util.redact``), whose text is the
redacted URL wherever it is shown, stored, joined or raised; ``uv_args`` (uv needs the credentials to
install) alone reveals it, and ``identity`` (a new token is a new environment; it is written into the
lock's header) holds its digest.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from jaxcompat._util.redact import REDACTED, Secret, redact_url, url_secrets
from jaxcompat.model.records import Record, attr

PYPI_SIMPLE = "https://pypi.org/simple"
INDEX_SCHEMES = ("https", "http", "file")


def local_path(url: str) -> Path | None:
    """The local path of a ``file://`` URL (or of a plain path), else None."""
    parsed = urlparse(url)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path))
    if parsed.scheme == "" and url:
        return Path(url)
    return None


def held_text(url: Secret) -> str:
    """A URL as a lock header or a key holds it: its credentials (``redact_url``) as a digest, the rest readable."""
    raw = url.reveal()
    return raw if str(url) == raw else f"{url} sha256:{hashlib.sha256(raw.encode()).hexdigest()[:16]}"


def _texts(urls: tuple[Secret, ...]) -> list[str]:
    """The URLs as reports store them: each one's text, credentials redacted."""
    return [str(u) for u in urls]


class SourceError(ValueError):
    """A direct reference or index option that cannot work; the message says why and what to write."""


@dataclass(frozen=True)
class IndexOptions(Record):
    """Where releases come from besides PyPI, and whether pre-releases may be chosen. Stored
    (``to_dict``) with credentials redacted."""

    index_url: Secret = attr(Secret(""), dump=str)  # replaces PyPI (uv --index-url)
    extra_index_urls: tuple[Secret, ...] = attr((), dump=_texts)  # searched too (uv --extra-index-url)
    find_links: tuple[Secret, ...] = attr((), dump=_texts)  # folders (absolute) or URLs of wheels (uv --find-links)
    pre: bool = False  # any package may resolve to a pre-release (uv --prerelease allow)

    def __post_init__(self) -> None:  # each URL a Secret, however the options were made
        object.__setattr__(self, "index_url", Secret(self.index_url))
        object.__setattr__(self, "extra_index_urls", tuple(Secret(u) for u in self.extra_index_urls))
        object.__setattr__(self, "find_links", tuple(Secret(u) for u in self.find_links))

    def __bool__(self) -> bool:
        return bool(self.index_url or self.extra_index_urls or self.find_links or self.pre)

    @property
    def other_index(self) -> bool:
        """Whether a release may come from somewhere PyPI's JSON API does not describe."""
        return bool(self.index_url or self.extra_index_urls or self.find_links)

    def uv_args(self, *, resolving: bool) -> list[str]:
        """The uv options (``uv pip compile`` when ``resolving``, else ``uv pip sync``)."""
        argv: list[str] = []
        if self.index_url:
            argv += ["--index-url", self.index_url.reveal()]
        for url in self.extra_index_urls:
            argv += ["--extra-index-url", url.reveal()]
        for link in self.find_links:
            argv += ["--find-links", link.reveal()]
        if resolving and self.pre:
            argv += ["--prerelease", "allow"]
        if resolving and self.other_index:
            argv += ["--emit-index-annotation"]  # "# from URL" under each package: its source
        return argv

    def hide(self, text: str) -> str:
        """``text`` (the resolver's message, a lock's ``# from`` lines) without any credential of these URLs."""
        found = {t for u in (self.index_url, *self.extra_index_urls, *self.find_links) for t in url_secrets(u.reveal())}
        for token in sorted(found, key=len, reverse=True):
            text = text.replace(token, REDACTED)
        return text

    def describe(self) -> str:
        """Where releases come from, for a person ("; from PyPI, https://****@host/simple; --pre"),
        or "" for PyPI alone."""
        if not self:
            return ""
        urls = [str(u) for u in (self.index_url or "PyPI", *self.extra_index_urls, *self.find_links)]
        return f"; from {', '.join(urls)}" + ("; --pre" if self.pre else "")


NO_INDEX = IndexOptions()  # PyPI only, final releases unless a pin names a pre-release


def index_options(index_url: str | None = None, extra_index_urls=(), find_links=(), pre: bool = False,
                  cwd: Path | None = None) -> IndexOptions:
    """Validated index options from the command line: URLs with a scheme uv reads, folders
    that exist (made absolute, so the lock does not depend on where the command ran)."""
    def url(value: str, option: str) -> str:
        value = value.strip()
        scheme = urlparse(value).scheme
        if scheme not in INDEX_SCHEMES:
            if scheme == "" and Path(value).expanduser().is_dir():
                return Path(value).expanduser().resolve().as_uri()
            raise SourceError(f"{option} {redact_url(value)!r}: not a URL uv can read an index from (write an "
                              f"http(s):// or file:// URL of a PEP 503 simple index)")
        if scheme == "file" and not (local_path(value) or Path("/nonexistent")).is_dir():
            raise SourceError(f"{option} {redact_url(value)!r}: no such folder")
        return value.rstrip("/")

    def link(value: str) -> str:
        value = value.strip()
        scheme = urlparse(value).scheme
        if scheme in ("http", "https"):
            return value
        path = local_path(value) if scheme == "file" else Path(value).expanduser()
        if path is None or scheme not in ("", "file"):
            raise SourceError(
                f"--find-links {redact_url(value)!r}: write a folder of wheels or an http(s):// page of links"
            )
        if not path.is_absolute():
            path = (cwd or Path.cwd()) / path
        if not path.exists():
            raise SourceError(f"--find-links {redact_url(value)!r}: no such folder")
        return str(path.resolve())

    return IndexOptions(index_url=url(index_url, "--index-url") if index_url else "",
                        extra_index_urls=tuple(url(u, "--extra-index-url") for u in extra_index_urls),
                        find_links=tuple(link(f) for f in find_links), pre=bool(pre))



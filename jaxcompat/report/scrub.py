"""Reports carry no machine path and no credential: the boundary every result crosses before it is
judged, clipped, written or shown.

- **Paths.** The cell's environment, the checkout and the home folder become ``<env>``, ``<root>``
  and ``~`` (longest first); any environment under the state's ``envs/`` folder is ``<env>`` too
  (a result re-used from the cache names the environment where it was first observed).
- **Before clipping.** Messages are clipped to a head and a tail (``CLIP_MARK``); a path cut there
  no longer matches its folder. ``Scrubber`` is applied to the raw results *before* they are
  judged and clipped, and a path fragment left right before a clip mark (the plugin clips inside
  the cell, before anything outside sees the text) is replaced when it is the start of a known
  folder.
- **pytest's temporary folders** (``/tmp/pytest-of-<user>/pytest-<N>``, under any temporary folder)
  become ``<pytest-tmp>``: no user name, and the same text on both sides of a comparison.
- **Credentials.** ``user:token@`` in any URL of a text is redacted (``_util.redact``), and so is
  every credential known by value (``secrets``: a dependent's environment, an URL's user and
  password), wherever it appears.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from urllib.parse import quote, unquote, urlparse

from jaxcompat._util.redact import REDACTED, redact_text
from jaxcompat.env import sources
from jaxcompat.knowledge.outcomes import CLIP_MARK
from jaxcompat.model.outcomes import CellResult, RawResult

_BEFORE_MARK = re.compile(r"(/[^\s\"'()\[\]<>]*)(?=" + re.escape(CLIP_MARK) + ")")
_MIN_FRAGMENT = 2  # "/h" of "/home/…": any start of a known folder goes
PROJECT = "<project>"  # the folder of the tests run (a user's project, a dependent's checkout)
# pytest's temporary folders (tmp_path, tmp_path_factory): <tmp>/pytest-of-<user>/pytest-<N> (or -current),
# wherever the temporary folder is; the user's name and the run's number in no report (nor between two sides)
_PYTEST_TMP = re.compile(r"~?(?:/[^\s\"'/()\[\]<>]+)*/pytest-of-[^\s\"'/()\[\]<>]+/pytest-(?:\d+|current)")


class Scrubber:
    """``scrub(text)``: the text as a report may hold it."""

    def __init__(self, replacements: dict[str, str], envs_dir: Path | None = None, secrets=()):
        self.replacements = {k: v for k, v in replacements.items() if k and k != "/"}
        # credentials known by value (a dependent's env, an URL's user and password): longest first
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)
        self.order = sorted(self.replacements.items(), key=lambda kv: -len(kv[0]))
        dirs = dict.fromkeys((envs_dir.resolve(), envs_dir)) if envs_dir is not None else {}
        self.others = [re.compile(re.escape(str(d)) + r"/[^/\s\"']+") for d in dirs]
        self.prefixes = [(k, v) for k, v in self.order] + [(str(d), "<env>") for d in dirs]

    def __call__(self, text: str) -> str:
        if not text:
            return text
        for old, new in self.order:
            text = text.replace(old, new)
        if "/pytest-of-" in text:  # after the known folders (a project under it stays <project>); under home: ~/…
            text = _PYTEST_TMP.sub("<pytest-tmp>", text)
        for rx in self.others:
            text = rx.sub("<env>", text)
        if CLIP_MARK in text:
            text = _BEFORE_MARK.sub(self._cut_path, text)
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        return redact_text(text)

    def tree(self, value):
        """Every text of a JSON-like value (a record's ``to_dict()``), keys too."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {self.tree(k): self.tree(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.tree(v) for v in value]
        return value

    def _cut_path(self, m: re.Match) -> str:
        fragment = m.group(1)
        for folder, placeholder in self.prefixes:
            if len(fragment) >= _MIN_FRAGMENT and folder.startswith(fragment):
                return placeholder + "…"
        return fragment

    def raw(self, raw: RawResult) -> RawResult:
        return replace(raw, message=self(raw.message), traceback=self(raw.traceback),
                       warnings=[replace(w, message=self(w.message)) for w in raw.warnings])

    def cell(self, result: CellResult) -> None:
        """Every text of a cell's result, in place (its pins and sources: their URLs too)."""
        result.message = self(result.message)
        result.failed_imports = {m: self(tb) for m, tb in result.failed_imports.items()}
        result.notes = [self(n) for n in result.notes]
        pins = {d: scrub_pin(v, self.replacements) for d, v in result.requested.items()}
        found = {d: scrub_source(rec, self.replacements) for d, rec in result.sources.items()}
        links = [scrub_url(f, self.replacements) for f in result.index.get("find_links", [])]
        result.requested = {d: redact_text(v) for d, v in pins.items()}
        result.sources = {d: {k: redact_text(v) if isinstance(v, str) else v for k, v in rec.items()}
                          for d, rec in found.items()}
        if result.index:
            result.index = {**result.index,
                            "index_url": redact_text(result.index.get("index_url", "")),
                            "extra_index_urls": [redact_text(u) for u in result.index.get("extra_index_urls", [])],
                            "find_links": [redact_text(f) for f in links]}
        for r in result.results:
            r.message, r.traceback = self(r.message), self(r.traceback)
        result.deprecations = [replace(d, where=self(d.where), message=self(d.message)) for d in result.deprecations]


def scrub_url(url: str, replacements: dict[str, str]) -> str:
    """A URL or path without machine paths: each known folder replaced (longest first; in a
    file:// URL a path is URL-quoted, so both spellings), and any other local file reduced to
    ``file://<local>/NAME`` (its name, not where it lies on this machine)."""
    order = sorted(((k, v) for k, v in replacements.items() if k and k != "/"), key=lambda kv: -len(kv[0]))
    for old, new in order:
        if old in url or quote(old) in url:
            return url.replace(quote(old), new).replace(old, new)
    parsed = urlparse(url)
    if parsed.scheme in ("file", "git+file") and parsed.path.startswith("/"):
        return f"{parsed.scheme}://<local>/{Path(unquote(parsed.path)).name}"  # git: NAME@REF
    if parsed.scheme == "" and url.startswith("/"):
        return f"<local>/{Path(url).name}"
    return url


def scrub_source(rec: dict, replacements: dict[str, str]) -> dict:
    """A source record (``env/sources.sources``) with its URL scrubbed (``scrub_url``)."""
    return {**rec, "url": scrub_url(rec.get("url", ""), replacements)} if "url" in rec else dict(rec)


def scrub_pin(value: str, replacements: dict[str, str]) -> str:
    """A pin (a version, or ``@ URL``: a direct reference) with its URL scrubbed (``scrub_url``)."""
    return sources.DIRECT + scrub_url(value[len(sources.DIRECT):], replacements) if sources.is_direct(value) else value

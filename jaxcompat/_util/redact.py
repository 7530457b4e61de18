"""Credentials out of everything shown or stored: ``https://user:token@host/simple`` becomes
``https://****@host/simple`` (as pip's ``redact_auth_from_url`` does, but the user name goes too:
an index's token is often passed as the user name, e.g. ``https://__token__:…@`` or
``https://<token>@``). An index URL's query values (``?token=…``) and a path segment that is a token
(``https://dl.cloudsmith.io/<token>/org/repo/python/simple/``) are ``****`` too.

The index options hold each URL as a ``Secret``: its text is the redacted URL, the real one (uv
needs it to install) is reached only by ``Secret.reveal()``. Every other text that may hold a
credential (a tool's message, a requirement, a dependent's git URL) is redacted here before a
person or a file sees it.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from jaxcompat._util.runenv import CONFIGURES

REDACTED = "****"
_NO_SECRET = {"git"}  # git+ssh://git@github.com/…: a fixed user name, not a credential

# scheme://userinfo@host — anywhere in a text (error messages, uv's output, tracebacks)
# the userinfo runs to the last @ before the host: a password may hold one
_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<userinfo>[^/\s'\"<>]+)@")


# A path segment that is a token (Cloudsmith's, Gemfury's entitlement paths: https://dl.cloudsmith.io/<token>/…):
# letters and digits only, 20 or more, or 12 or more with a digit before a letter (random, not a word and its
# number: "manylinux2014", "python311" stay; "simple", "cu121", "jax-releases", "jax_nightly_releases.html" too).
# A commit's hash (40 hexadecimal digits, or 7 to 12 abbreviated) is no secret: a user needs it to know what was tested.
_TOKEN = re.compile(r"(?!(?:[0-9a-f]{40}|[0-9a-f]{7,12})$)"
                    r"(?:[A-Za-z0-9]{20,}|(?=[A-Za-z0-9]*[0-9][A-Za-z])[A-Za-z0-9]{12,})")
# a query parameter whose value is a secret by its name, whatever the value (else: when it looks like a token)
_SECRET_KEY = re.compile(r"token|key|secret|pass|auth|sig|credential|session|access|code|entitlement", re.I)


def _secret_query(kv: str) -> bool:
    key, _, value = kv.partition("=")
    return bool(value) and (bool(_SECRET_KEY.search(key)) or bool(_TOKEN.fullmatch(value)))


def redact_url(url: str) -> str:
    """The URL without its user name and password, the value of each query parameter that is a secret
    (``?token=…``, or a value that looks like a token: ``_secret_query``) and any path segment that is a
    token (``_TOKEN``; a commit's hash is not); unchanged when it has none of them."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_text(url)
    if not parts.scheme or not parts.netloc:  # a folder (--find-links): no credential of a URL
        return url
    netloc = parts.netloc
    if "@" in netloc and netloc.rsplit("@", 1)[0] not in _NO_SECRET:
        netloc = f"{REDACTED}@{netloc.rsplit('@', 1)[1]}"
    path = "/".join(REDACTED if _TOKEN.fullmatch(seg) else seg for seg in parts.path.split("/"))
    query = "&".join(f"{kv.split('=', 1)[0]}={REDACTED}" if _secret_query(kv) else kv
                     for kv in parts.query.split("&")) if parts.query else ""
    if (netloc, path, query) == (parts.netloc, parts.path, parts.query):
        return url
    return urlunsplit(parts._replace(netloc=netloc, path=path, query=query))


def url_tokens(url: str) -> list[str]:
    """The query values and token path segments of ``url`` (``redact_url`` hides them): a tool's message
    may show one without its URL."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    if not parts.scheme or not parts.netloc:
        return []
    values = [kv.split("=", 1)[1] for kv in parts.query.split("&") if _secret_query(kv)]
    return [v for v in values if len(v) >= 4] + [seg for seg in parts.path.split("/") if _TOKEN.fullmatch(seg)]


class Secret(str):
    """A value that holds a credential (an index URL with ``user:token@``), as pip's ``HiddenText``:
    its text — what ``str``, ``repr``, ``format``, an f-string, ``json.dumps``, a join or any string
    operation sees — is the redacted form, so no writer has to remember to redact it. The raw value
    is reached only by :meth:`reveal`, where a command line needs it (``IndexOptions.uv_args``), an
    environment's identity hashes it, or a scrubber must know what to remove. Equal, and hashed, by
    the raw value (a secret equals the plain text it holds)."""

    def __new__(cls, raw: str, shown: str | None = None) -> Secret:
        raw = raw.reveal() if isinstance(raw, Secret) else str(raw)
        self = super().__new__(cls, redact_url(raw) if shown is None else shown)
        self._raw = raw
        return self

    def reveal(self) -> str:
        """The raw value, credentials and all: only for the command line of uv, a hash, a scrubber."""
        return self._raw

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, str):
            return NotImplemented
        return self._raw == (other.reveal() if isinstance(other, Secret) else str.__str__(other))

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self._raw)

    def __reduce__(self):
        return (Secret, (self._raw, str.__str__(self)))


def redact_text(text: str) -> str:
    """Every ``scheme://user:secret@`` in a free text, redacted."""
    if "@" not in text:
        return text
    return _USERINFO.sub(lambda m: m.group(0) if m.group("userinfo") in _NO_SECRET
                         else f"{m.group('scheme')}{REDACTED}@", text)


# Environment variables a dependents file may set whose values are shown as they are; any other
# value is taken for a credential: "****" where the environment is shown, and (when it is long
# enough not to be an ordinary word) replaced wherever it appears in a text.
SHOWN_ENV = CONFIGURES  # what configures a test run (_util/runenv): one list
MIN_SECRET = 6  # a shorter value ("1", "true") is redacted where the environment is shown, not in every text


def redact_env(env: dict[str, str]) -> dict[str, str]:
    """The environment as a report shows it: values of variables not known to be harmless redacted."""
    return {k: v if SHOWN_ENV.match(k) else REDACTED for k, v in env.items()}


def env_secrets(env: dict[str, str]) -> list[str]:
    """The values of ``env`` to redact wherever they appear in a text."""
    return [v for k, v in env.items() if not SHOWN_ENV.match(k) and len(v) >= MIN_SECRET]


def url_secrets(text: str) -> list[str]:
    """The user names and passwords of every ``scheme://user:secret@`` in ``text`` (as written and
    percent-decoded), and every URL's ``url_tokens``: a tool's message may show one without its URL."""
    from urllib.parse import unquote

    out: list[str] = [t for url in re.findall(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>]+", text)
                      for t in url_tokens(url)]  # and its query values and token path segments
    for m in _USERINFO.finditer(text):
        userinfo = m.group("userinfo")
        if userinfo in _NO_SECRET:
            continue
        for part in (userinfo, *userinfo.split(":", 1)):
            out += [p for p in {part, unquote(part)} if len(p) >= 4]
    return out

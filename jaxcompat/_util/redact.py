"""Credentials out of everything shown or stored: ``https://user:token@host/simple`` becomes
``https://****@host/simple`` (as pip's ``redact_auth_from_url`` does, but the user name goes too:
an index's token is often passed as the user name, e.g. ``https://__token__:…@`` or
``https://<token>@``).

The options themselves keep the real URL (uv needs it to install); everything that renders a URL,
an option, a message or a report for a person or a file goes through here first.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

REDACTED = "****"
_NO_SECRET = {"git"}  # git+ssh://git@github.com/…: a fixed user name, not a credential

# scheme://userinfo@host — anywhere in a text (error messages, uv's output, tracebacks)
_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<userinfo>[^/\s@'\"<>]+)@")


def redact_url(url: str) -> str:
    """The URL without its user name and password (unchanged when it has none)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_text(url)
    if "@" not in parts.netloc:
        return url
    userinfo, host = parts.netloc.rsplit("@", 1)
    if userinfo in _NO_SECRET:
        return url
    return urlunsplit(parts._replace(netloc=f"{REDACTED}@{host}"))


def redact_text(text: str) -> str:
    """Every ``scheme://user:secret@`` in a free text, redacted."""
    if "@" not in text:
        return text
    return _USERINFO.sub(lambda m: m.group(0) if m.group("userinfo") in _NO_SECRET
                         else f"{m.group('scheme')}{REDACTED}@", text)

"""An error signature: what a failure *is*, with what varies from run to run taken out.

A signature is the exception type, the first line of its message with its volatile parts
normalised (numbers, addresses, paths, quoted reprs), and the library frame that raised it
(``equinox/_jit.py:__call__``: the file below ``site-packages`` and the function, without the
line number, which moves between releases). Two failures with one signature ``family`` (error,
message, raising package) are taken to be one failure: that is what ``bisect`` bounds and what a
drafted rule matches. Parsed here once; every
reader (bisect, drafts, the edge survey) compares these records.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from jaxcompat._util.text import frames
from jaxcompat.model.outcomes import RawResult
from jaxcompat.model.vocab import TestStatus

# Volatile parts of a message, most specific first; each becomes a placeholder in the
# normalised text and a pattern in a drafted rule's `match`.
_VOLATILE = (
    ("<addr>", re.compile(r"0x[0-9a-fA-F]+"), r"0x[0-9a-fA-F]+"),
    ("<path>", re.compile(r"(?:[A-Za-z]:)?(?:/[\w.<>@+-]+){2,}/?"), r"\S+"),
    ("<n>", re.compile(r"(?<![A-Za-z_])\d+(?:\.\d+)*"), r"\d+(?:\.\d+)*"),
)
_PLACEHOLDER = re.compile("|".join(re.escape(p) for p, _, _ in _VOLATILE))
MESSAGE_CHARS = 160
_SITE = re.compile(r".*?(?:site-packages|dist-packages)/")
_STDLIB = re.compile(r".*?/lib/python\d\.\d+/")


@dataclass(frozen=True, order=True)
class Signature:
    error: str  # the exception's class name ("ValueError"), or "crash"/"timeout"
    message: str  # the first line of its message, normalised
    frame: str = ""  # "equinox/_jit.py:__call__": where it was raised ("" when unknown)

    @property
    def key(self) -> str:
        """One line that names it, in reports and on the command line (``parse`` reads it back)."""
        return f"{self.error}: {self.message}" + (f" @ {self.frame}" if self.frame else "")

    @property
    def package(self) -> str:
        """The top-level module of the raising frame ("equinox"), or "" for a case's own frame."""
        top = self.frame.split("/", 1)[0].split(":", 1)[0]
        return "" if not self.frame or top in ("cases", "tests", "") or top.endswith(".py") else top

    def pattern(self) -> str:
        """A regular expression for a rule's ``match``: the message with its placeholders widened."""
        out, pos = [], 0
        widen = {p: rx for p, _, rx in _VOLATILE}
        for m in _PLACEHOLDER.finditer(self.message):
            out += [re.escape(self.message[pos:m.start()]), widen[m.group()]]
            pos = m.end()
        out.append(re.escape(self.message[pos:]))
        return "".join(out).replace("\\ ", " ")

    @property
    def family(self) -> tuple[str, str, str]:
        """What makes two signatures one failure: the error, the message and the package that raised
        it (one error raised from two functions of one library, as a check re-raised in a loop, is
        one failure; the function is kept to name it)."""
        return (self.error, self.message, self.package)

    def matches(self, raw: RawResult) -> bool:
        return raw.status not in (TestStatus.PASSED, TestStatus.SKIPPED) and of(raw).family == self.family


def volatile_out(text: str) -> str:
    """``text`` with its volatile parts (addresses, paths, numbers) replaced by placeholders."""
    for placeholder, rx, _ in _VOLATILE:
        text = rx.sub(placeholder, text)
    return text


def normalise(message: str, error: str = "") -> str:
    """The first non-empty line of ``message``, without a leading ``Type:``, volatile parts replaced."""
    line = next((ln.strip() for ln in message.splitlines() if ln.strip()), "")
    for prefix in (f"{error}: ", f"{error.rsplit('.', 1)[-1]}: ") if error else ():
        if line.startswith(prefix):
            line = line[len(prefix):]
            break
    else:
        line = re.sub(r"^[\w.]+(?:Error|Exception|Warning|Failed): ", "", line)
    line = volatile_out(line)
    # "...provided:" (details follow) in one release, "...provided." in another: one message
    return line[:MESSAGE_CHARS].rstrip().rstrip(".:;,").rstrip()


def frame(traceback: str) -> str:
    """The last frame of a (short) traceback as ``path:function``, the path made portable: below
    site-packages for an installed library, from ``cases/`` for a case, below the stdlib folder."""
    found = frames(traceback)
    if not found:
        return ""
    path, func = found[-1].path, found[-1].func
    for rx in (_SITE, _STDLIB):
        m = rx.match(path)
        if m:
            path = path[m.end():]
            break
    else:
        path = path.replace("<root>/", "")
        for anchor in ("/cases/", "/tests/"):
            if anchor in path:
                path = anchor.strip("/") + "/" + path.split(anchor, 1)[1]
                break
        else:
            path = path.rsplit("/", 1)[-1]
    return f"{path}:{func}"


def of(raw: RawResult) -> Signature:
    """The signature of one failed (or crashed, or timed-out) result."""
    if raw.status in (TestStatus.CRASH, TestStatus.TIMEOUT):
        return Signature(raw.status, normalise(raw.message), frame(raw.traceback))
    error = (raw.error_types or ["Error"])[0]
    return Signature(error, normalise(raw.message, error), frame(raw.traceback))


def of_cell(status: str, message: str) -> Signature:
    """The signature of a cell that stopped before its cases (an import error's last lines)."""
    lines = [ln for ln in message.strip().splitlines() if ln.strip()]
    last = lines[-1].strip() if lines else status
    m = re.match(r"^([\w.]+(?:Error|Exception)): ?(.*)$", last)
    error, text = (m.group(1).rsplit(".", 1)[-1], m.group(2)) if m else (status, last)
    return Signature(error, normalise(text), frame(message))


def parse(text: str) -> Signature:
    """``Type: normalised message @ path:function`` (the ``key``) back into a record."""
    head, _, where = text.partition(" @ ")
    error, sep, message = head.partition(": ")
    if not sep or not re.fullmatch(r"[\w.]+", error):
        raise ValueError(f"an error signature reads `Type: message [@ path.py:function]`, not {text!r}")
    return Signature(error, message.strip(), where.strip())

"""The progress of a long run of a project's tests (``check --tests``, the crater, bisect): tests
done of those collected, how many failed, and an estimate of the time left, for the side being run.

On a terminal (``stream`` is a TTY and ``CI`` is not set) one live line, rewritten in place
(``\\r``) at most every ``LIVE_S`` seconds and cleared when the side ends. Elsewhere (a CI log, a
file) plain lines: one every ``EVERY_S`` seconds, or each time another tenth of the tests is done
(but not more often than every ``GAP_S``), and a last one when the side ends if any was said
and the count moved since. What it is told comes from the runner (``run/runner.py``), which
reads the plugin's events; it never writes a report.
"""

from __future__ import annotations

import os
import time

LIVE_S = 0.5
EVERY_S = 30.0
GAP_S = 5.0


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return f"{seconds // 60}:{seconds % 60:02d}"


def _left(done: int, total: int, elapsed_s: float) -> str:
    """About how long the tests not done yet take, at the pace so far."""
    if not done or done >= total:
        return ""
    left = elapsed_s / done * (total - done)
    return f"about {max(1, round(left / 60))} min left" if left >= 90 else f"about {max(1, round(left))} s left"


def progress_text(label: str, done: int, total: int | None, failed: int, elapsed_s: float) -> str:
    """``py3.11-jax0.4.33-cpu: 412/830 tests (49%), 3 failed, 3:05 elapsed, about 3 min left``."""
    if total is None:
        return f"{label}: collecting tests… {_clock(elapsed_s)} elapsed"
    parts = [f"{label}: {done}/{total} tests" + (f" ({100 * done // total}%)" if total else "")]
    if failed:
        parts.append(f"{failed} failed")
    parts.append(f"{_clock(elapsed_s)} elapsed")
    left = _left(done, total, elapsed_s)
    return ", ".join(parts + ([left] if left else []))


class ProgressLine:
    """Told the counts as the run goes (``update``) and when a side ends (``end``)."""

    def __init__(self, stream, live: bool | None = None, every_s: float = EVERY_S, gap_s: float = GAP_S):
        if live is None:
            live = bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("CI")
        self.stream, self.live, self.every_s, self.gap_s = stream, live, every_s, gap_s
        self._said_at: float | None = None  # when a line was last written (None: none this side)
        self._tenth = 0  # the tenths of the tests done when a plain line was last written
        self._done = -1  # the tests done when a plain line was last written

    def update(self, label: str, done: int, total: int | None, failed: int, elapsed_s: float) -> None:
        now = time.monotonic()
        text = progress_text(label, done, total, failed, elapsed_s)
        if self.live:
            if self._said_at is None or now - self._said_at >= LIVE_S:
                self.stream.write(f"\r  {text}\033[K")
                self.stream.flush()
                self._said_at = now
            return
        tenth = 10 * done // total if total else 0
        since = now - self._said_at if self._said_at is not None else elapsed_s
        if since >= self.every_s or (tenth > self._tenth and since >= self.gap_s):
            self._say(text, now, tenth, done)

    def end(self, label: str, done: int, total: int | None, failed: int, elapsed_s: float) -> None:
        """The side is over: the live line cleared; a last plain line if any was said."""
        if self.live:
            if self._said_at is not None:
                self.stream.write("\r\033[K")
                self.stream.flush()
        elif self._said_at is not None and done != self._done:
            self._say(progress_text(label, done, total, failed, elapsed_s), time.monotonic(), 0, done)
        self._said_at, self._tenth, self._done = None, 0, -1

    def _say(self, text: str, now: float, tenth: int, done: int) -> None:
        self.stream.write(f"  {text}\n")
        self.stream.flush()
        self._said_at, self._tenth, self._done = now, tenth, done

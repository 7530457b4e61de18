"""A bisection along commits as people read it: the terminal text and bisect.md (the record:
model/commits.py)."""

from __future__ import annotations

from jaxcompat.model.commits import CommitBisect
from jaxcompat.model.vocab import BisectState

PRESENT, ABSENT, UNKNOWN = BisectState.PRESENT, BisectState.ABSENT, BisectState.UNKNOWN


def render(result: CommitBisect) -> str:
    what = "stops" if result.fixed else "starts"
    lines = [f"bisect {result.target} over {result.package}'s commits, {result.good} -> {result.bad} "
             f"({result.commits} first-parent commits; where the failure {what}):"]
    for s in result.steps:
        lines.append(f"  {s.commit[:12]}  {s.state:<10} {s.signature:<36} {s.seconds:6.0f} s"
                     + (f"  jaxlib {s.jaxlib}" if s.jaxlib else "")
                     + (f" (cannot say over jaxlib {'; '.join(s.tried)})" if s.tried else "")
                     + (f" (over jaxlib {'; '.join(s.also)})" if s.also else "")
                     + (f"  skipped: {s.detail}" if s.state == UNKNOWN and s.detail else ""))
    lines.append(result.message)
    if result.first:
        c = result.first
        lines += [f"  commit {c.sha}", f"  date   {c.date}", f"  title  {c.title}",
                  f"  pull request {c.pull_request or '(none: the message names none, no pull request has it as head)'}"
                  + (f"; cites {', '.join(c.references)}" if c.references else ""),
                  f"  files  {', '.join(c.files[:12])}" + (f" (+{len(c.files) - 12})" if len(c.files) > 12 else "")]
        if result.changelog:
            lines.append(f"  changelog of {result.package} {result.shipped_in}:")
            lines += [f"    {ln}" for ln in result.changelog]
        elif result.shipped_in:
            lines.append(f"  changelog of {result.package} {result.shipped_in}: no line names it")
    lines.append(f"steps: {len(result.steps)} (log2 of {result.commits} = {max(1, result.commits.bit_length())}),"
                 f" wall {result.wall_s:.0f} s")
    return "\n".join(lines)


def markdown(result: CommitBisect) -> str:
    kind = "fix" if result.fixed else "first bad commit"
    return (f"# {result.target}: the {kind} in {result.package} {result.good} -> {result.bad}\n\n"
            f"{result.message}\n\n```text\n{render(result)}\n```\n")

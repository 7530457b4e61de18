"""The body of the issue the nightly opens when something regressed (latest-issue.md); nothing
regressed: no file."""

from __future__ import annotations

from jaxcompat.report import outputs

suffix = ".md"

RENDER = {
    outputs.LatestReport: lambda r: r.issue + "\n" if r.issue is not None else None,
}

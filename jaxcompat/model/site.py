"""The ecosystem's pages as one record: what ``report site`` read from the stored reports (every
text already scrubbed), for report/site.py to render. No I/O."""

from __future__ import annotations

from dataclasses import dataclass, field

from jaxcompat.model.history import History


@dataclass
class Site:
    history: History | None = None  # the nightly crater's nights (None: no nights folder given)
    nights_from: str = ""  # where the nights came from, as shown (a relative path or its name)
    copies: dict[str, str] = field(default_factory=dict)  # site path -> a stored page or record, scrubbed
    survey: dict = field(default_factory=dict)  # survey.json's summary ({} without a survey)
    survey_forecast: list[dict] = field(default_factory=list)  # survey.md's warnings before the break
    matrix: dict | None = None  # matrix.json, else baseline.json (None: neither)
    matrix_from: str = ""  # which of the two

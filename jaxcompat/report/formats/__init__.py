"""The report formats, by the name ``--format`` takes: one module each, with its file ``suffix``,
``RENDER`` (the record kinds of ``report/outputs.py`` it renders, each to its text; ``None``: no
file for this record; ``report/emit.py`` then removes an earlier run's file, as it does for every
format of the record not written this time). Adding a format is one module and one line here (CONTRIBUTING.md)."""

from __future__ import annotations

from jaxcompat.report.formats import html, issue, json, jsonl, junit, md, rules, sarif

FORMATS = {
    "json": json,
    "md": md,
    "html": html,
    "junit": junit,
    "rules": rules,
    "issue": issue,
    "sarif": sarif,
    "jsonl": jsonl,
}

"""The rules drafted for what no rule explains (draft-rules.toml, ready for ``--rules``); none
drafted: no file, and an earlier run's goes."""

from __future__ import annotations

from jaxcompat.report import outputs

suffix = ".toml"


def _crater(r: outputs.CraterReport) -> str | None:
    from jaxcompat.report.draftrules import render

    return render(r.rules) if r.rules else None


RENDER = {outputs.CraterReport: _crater}

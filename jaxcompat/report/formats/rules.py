"""The rules drafted for what no rule explains (draft-rules.toml, ready for ``--rules``); none
drafted: no file, and an earlier run's goes."""

from __future__ import annotations

from jaxcompat.report import draftrules, outputs

suffix = ".toml"
REMOVE_STALE = True

RENDER = {
    outputs.CraterReport: lambda r: draftrules.render(r.rules) if r.rules else None,
}

"""``draft-rules.toml``: the drafted rules as a ``--rules`` file (``render``), merged into the file
a run leaves in the reports folder and validated like any rules file before it is written
(``write``; ``read`` gives back its tables). knowledge/drafts.py drafts them; ``after_run`` drafts
what a check could not explain, writes the file and says where."""

from __future__ import annotations

import json
from pathlib import Path

from jaxcompat._util.atomic import write_text
from jaxcompat._util.layout import command
from jaxcompat._util.toml import tomllib
from jaxcompat.knowledge import config
from jaxcompat.knowledge.drafts import box, draft, unexplained
from jaxcompat.model.matrix import Matrix
from jaxcompat.model.outcomes import CellResult

FILE = "draft-rules.toml"


def _toml_value(v) -> str:
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, bool):
        return "true" if v else "false"
    raise TypeError(v)


def render(drafts: list[dict]) -> str:
    out = ["# Drafted rules: failures no rule explained, bounded where bisected.",
           "# Written by `jax-compat check`, `bisect` and `survey` (regenerate them to refresh).",
           "# Use at once with `--rules reports/draft-rules.toml`; promote one into matrix.toml by hand,",
           "# with its upstream links and a both-sided pair of cells.", ""]
    for d in drafts:
        out += [f"# {c}" for c in d.get("_comment", [])]
        out.append("[[failure]]")
        for k in ("id", "title", "stage", "cases", "error", "match", "affects", "upstream", "fix"):
            if k == "cases" and not d[k]:
                continue
            v = d[k]
            if isinstance(v, list) and len(v) > 2:  # one per line, as in matrix.toml
                out += [f"{k} = ["] + [f"  {_toml_value(x)}," for x in v] + ["]"]
            else:
                out.append(f"{k} = {_toml_value(v)}")
        out.append("")
    return "\n".join(out)


def read(path: Path) -> list[dict]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return []
    return list(data.get("failure", []))


def write(path: Path, drafts: list[dict], matrix: Matrix) -> Path:
    """Merge ``drafts`` into the draft file (same id: replaced), validate it, write it."""
    kept = {d["id"]: d for d in read(path)}
    known = {f.id for f in matrix.failures}
    for d in drafts:
        kept[d["id"]] = d
    text = render([d for i, d in kept.items() if i not in known])
    tmp = path.with_suffix(".toml.tmp")
    write_text(tmp, text)
    try:
        config.merge_rules(matrix, tmp)  # the same validation as any --rules file
    finally:
        tmp.unlink(missing_ok=True)
    write_text(path, text)
    return path


def after_run(cells: list[CellResult], matrix: Matrix, reports_dir: Path, how: str, report: str) -> str:
    """Draft what a run (a check) could not explain; the line that says where, and what next."""
    groups = [g for g in unexplained(cells).values() if g.stage == "import" or g.cases]
    if not groups:
        return ""
    path = write(reports_dir / FILE, [draft(g, box(g, cells), how) for g in groups], matrix)
    return (f"drafted {len(groups)} rule(s) for failures no rule explains: {path} "
            f"(exact combinations; bound them with: {command('bisect')} --from {report})")

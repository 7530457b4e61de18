"""The survey's map: jax releases × equinox releases, one self-contained page (no network)."""

from __future__ import annotations

from packaging.version import Version

from jaxcompat.knowledge.survey import Observation
from jaxcompat.model.survey import Space
from jaxcompat.model.vocab import CellStatus
from jaxcompat.plugin.packages import ON_EQUINOX
from jaxcompat.report.html import esc, page

PALETTE = ("#e6194b", "#f58231", "#911eb4", "#4363d8", "#f032e6", "#9a6324", "#800000", "#808000",
           "#000075", "#469990", "#dcbeff", "#aaffc3", "#ffd8b1", "#fabed4", "#bfef45", "#42d4f4")
CSS = """body{font:13px system-ui,sans-serif;margin:1.5em}table.map{border-collapse:collapse}
.map td,.map th{border:1px solid #ddd;width:14px;height:14px;padding:0;text-align:center;font-size:9px}
.map th.col{writing-mode:vertical-rl;transform:rotate(180deg);height:auto;padding:2px 0}
.map th.row{text-align:right;padding:0 4px;width:auto;white-space:nowrap}
.no{background:#bbb}.un{background:#fff}.ok{background:#3cb44b}.wrong{outline:2px solid #000;outline-offset:-2px}
.leg span{display:inline-block;width:12px;height:12px;border:1px solid #999;vertical-align:middle;margin:0 4px 0 12px}
table.compat td,table.compat th{border:1px solid #ccc;padding:2px 6px}"""


def render(sp: Space, obs: list[Observation], rows: list[dict], matrix_pairs: set, summary: dict) -> str:
    seen = {(o.combo.jax, o.combo.equinox): o for o in obs}
    ids = sorted({f for o in obs for f in o.failures})
    colour = {f: PALETTE[i % len(PALETTE)] for i, f in enumerate(ids)}
    eqx = [e for e in sp.equinox if any((j, e) in sp.pairs for j in sp.jax)]
    head = "".join(f'<th class="col">{esc(e)}</th>' for e in eqx)
    body = []
    for j in sorted(sp.jax, key=Version, reverse=True):
        tds = []
        for e in eqx:
            mark = "●" if (j, e) in matrix_pairs else ""
            o = seen.get((j, e))
            if (j, e) not in sp.pairs:
                tds.append(
                    f'<td class="no" title="jax {esc(j)} + equinox {esc(e)}: cannot be installed together">{mark}</td>'
                )
            elif o is None:
                tds.append(f'<td class="un" title="jax {esc(j)} + equinox {esc(e)}: not surveyed">{mark}</td>')
            else:
                fails = o.failures
                style = ""
                if fails:
                    stops = [colour[f] for f in fails]
                    style = (f' style="background:{stops[0]}"' if len(stops) == 1 else
                             f' style="background:linear-gradient(135deg,{",".join(stops)})"')
                elif o.cell.status in (CellStatus.UNRESOLVABLE, CellStatus.PYTHON_MISSING):
                    style = ' style="background:#bbb"'
                cls = ("ok" if not fails and o.installable else "") + (" wrong" if o.wrong else "")
                tip = (f"jax {j} + equinox {e} (Python {o.cell.python}): {o.cell.status}; "
                       + (", ".join(fails) or "no known failure")
                       + (f"; WRONG verdicts: {len(o.wrong)}" if o.wrong else ""))
                tds.append(f'<td class="{cls}"{style} title="{esc(tip)}">{mark or ("!" if o.wrong else "")}</td>')
        body.append(f'<tr><th class="row">jax {esc(j)}</th>{"".join(tds)}</tr>')
    legend = ('<p class="leg"><span class="ok"></span>no known failure<span class="no"></span>cannot be '
              'installed together<span class="un"></span>not surveyed' +
              "".join(f'<span style="background:{c}"></span>{esc(f)}' for f, c in colour.items()) +
              "<br>● a cell of matrix.toml &nbsp; ! a wrong verdict (outlined)</p>")
    compat = _compat_table(rows)
    s = summary
    return page("jax-compat survey", f"<h1>jax-compat survey</h1><p>{s['combinations']} combinations off the matrix; "
            f"case verdicts right: <b>{100 * s['right_share']:.2f}%</b>; combinations with no wrong verdict: "
            f"<b>{100 * s['clean_share']:.1f}%</b>.</p><h2>jax × equinox</h2>{legend}"
            f'<table class="map"><tr><th></th>{head}</tr>{"".join(body)}</table>'
            f"<h2>Which equinox for which jax</h2>{''.join(compat)}", CSS)


def _compat_table(rows) -> list[str]:
    """Which equinox (and diffrax, optimistix, lineax) for which jax, as HTML rows."""
    compat = ["<table class=compat><tr><th>jax</th><th>jaxlib</th><th>oldest equinox</th><th>newest equinox</th>"
              "<th>diffrax</th><th>optimistix</th><th>lineax</th></tr>"]
    for r in rows:
        if not r["installable"]:
            compat.append(
                f"<tr><td>{esc(r['jax'])}</td><td colspan=3>cannot be installed from the index on CPU</td></tr>"
            )
        elif not r["equinox"]:
            compat.append(
                f"<tr><td>{esc(r['jax'])}</td><td>{esc(r['jaxlib'])}</td>"
                "<td colspan=2>none without a known failure</td></tr>"
            )
        else:
            lo, hi = r["equinox"]
            comp = "".join(f"<td>{esc('–'.join(dict.fromkeys(r.get(d) or [])) or 'none')}</td>"
                           for d in ON_EQUINOX)
            compat.append(
                f"<tr><td>{esc(r['jax'])}</td><td>{esc(r['jaxlib'])}</td><td>{esc(lo)} ({esc(r['observed'][lo])})</td>"
                f"<td>{esc(hi)} ({esc(r['observed'][hi])})</td>{comp}</tr>"
            )
    compat.append("</table>")
    return compat

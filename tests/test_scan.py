"""jax's API history: the timeline read from two releases' worth of structure, `scan` against it,
`--fix`, the output formats, and failing tests explained by it. No jax, no network: the two
releases are tiny archives built here that mimic jax 0.4.30 (an sdist) and 0.6.0 (a wheel) in the
shapes the real ones use (``_deprecations`` tables served by ``deprecation_getattr``, ``*``
imports from ``jax._src``, a module that warns on import, a module with its own ``__getattr__``,
``TYPE_CHECKING`` imports, ``__main__`` blocks). The committed timeline is checked for the facts
the real releases hold."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from jaxcompat.apihistory import apitimeline
from jaxcompat.apihistory.apiexplain import explain_removed, where
from jaxcompat.apihistory.apitimeline import Timeline, regenerate
from jaxcompat.apihistory.scan import scan
from jaxcompat.model import target as targets
from jaxcompat.model.outcomes import RawResult
from jaxcompat.model.scan import Target
from jaxcompat.model.usertests import Comparison, Observed
from jaxcompat.operations import usertests
from jaxcompat.report import usertests as user_report
from jaxcompat.report.scan import render, render_scans

TABLE_TAIL = '''
import typing as _typing
if _typing.TYPE_CHECKING:
  from jax._src.tree_util import tree_map as tree_map
else:
  from jax._src.deprecations import deprecation_getattr as _deprecation_getattr
  __getattr__ = _deprecation_getattr(__name__, _deprecations)
  del _deprecation_getattr
del _typing
'''

OLD = {  # mimics jax 0.4.30
    "jax/__init__.py": """
from jax._src.api import jit as jit
from jax import numpy as numpy
from jax import tree as tree
from jax._src.config import config as config
from jax._src.tree_util import tree_map as _deprecated_tree_map
import jax.lib
_deprecations = {
  # Added Feb 28, 2024
  "tree_map": (
    "jax.tree_map is deprecated: use jax.tree.map (jax v0.4.25 or newer) "
    "or jax.tree_util.tree_map (any JAX version).",
    _deprecated_tree_map
  ),
}
"""
    + TABLE_TAIL,
    "jax/config.py": "from jax._src.config import config as config\n",
    "jax/tree.py": "from jax._src.tree import map as map\n",
    "jax/numpy/__init__.py": "from jax._src.numpy.lax_numpy import *\nfrom jax._src.numpy.lax_numpy import round_ as round_\n",
    "jax/_src/numpy/lax_numpy.py": "import numpy as np\n__all__ = ['round', 'round_']\ndef round(x): pass\ndef round_(x): pass\ndef _private(): pass\n",
    "jax/lib/__init__.py": "from jax.lib import xla_bridge as xla_bridge\n",
    "jax/lib/xla_bridge.py": "def get_backend(): pass\n",
    "jax/util.py": "def safe_map(f, *xs): pass\n",
    "jax/sharding.py": "from functools import partial\nfrom numpy import dtype as dtype\nclass PmapSharding: pass\n",
    "jax/experimental/magic.py": "def __getattr__(name): pass\ndef a(): pass\n",
    "jax/tools/script.py": "def main(): pass\nif __name__ == '__main__':\n  app = main()\n",
}

NEW = {  # mimics jax 0.6.0
    "jax/__init__.py": """
from jax._src.api import jit as jit
from jax import numpy as numpy
from jax import tree as tree
from jax._src.config import config as config
_deprecations = {
  # Finalized; remove after 3 months
  "tree_map": (
    "jax.tree_map was removed in JAX v0.6.0: use jax.tree.map (jax v0.4.25 or newer) "
    "or jax.tree_util.tree_map (any JAX version).",
    None
  ),
}
"""
    + TABLE_TAIL,
    "jax/tree.py": "from jax._src.tree import map as map\n",
    "jax/numpy/__init__.py": "from jax._src.numpy.lax_numpy import *\n",
    "jax/_src/numpy/lax_numpy.py": "import numpy as np\n__all__ = ['round']\ndef round(x): pass\n",
    "jax/lib/__init__.py": "",
    "jax/util.py": """
import warnings as _warnings
_warnings.warn("jax.util is deprecated and will be removed.", DeprecationWarning, stacklevel=2)
_msg = "safe_map was deprecated in JAX v0.6.0 and removed in JAX v0.7.0."
_deprecations = {"safe_map": (_msg, None)}
from jax._src.deprecations import deprecation_getattr as _dg
__getattr__ = _dg(__name__, _deprecations)
""",
    "jax/sharding.py": """
from jax._src.sharding import PmapSharding as _PmapSharding
_deprecations = {"PmapSharding": ("jax.sharding.PmapSharding is deprecated; use jax.sharding.NamedSharding instead.", _PmapSharding)}
from jax._src.deprecations import deprecation_getattr as _dg
__getattr__ = _dg(__name__, _deprecations)
""",
    "jax/experimental/magic.py": "def __getattr__(name): pass\ndef b(): pass\n",
    "jax/tools/script.py": "def main(): pass\nif __name__ == '__main__':\n  app = main()\n",
}


def _sdist(path: Path, version: str, files: dict[str, str]) -> None:
    with tarfile.open(path, "w:gz") as t:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"jax-{version}/{name}")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))


def _wheel(path: Path, files: dict[str, str]) -> None:
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)


@pytest.fixture(scope="module")
def timeline_file(tmp_path_factory) -> Path:
    cache = tmp_path_factory.mktemp("jaxapi")
    (cache / "wheels").mkdir()
    _sdist(cache / "wheels" / "jax-0.4.30.tar.gz", "0.4.30", OLD)
    _wheel(cache / "wheels" / "jax-0.6.0-py3-none-any.whl", NEW)
    out = cache / "timeline.json"
    regenerate(cache, out, ["0.4.30", "0.6.0"], progress=lambda *_: None)
    return out


@pytest.fixture(scope="module")
def tl(timeline_file) -> Timeline:
    return Timeline(json.loads(timeline_file.read_text()))


def test_the_timeline_says_what_changed_between_two_releases(tl):
    tree_map = tl.names["jax"]["tree_map"]
    assert tree_map["events"] == [["0.4.30", "D"], ["0.6.0", "R"]]
    assert tree_map["replacement"] == "jax.tree.map"
    assert tree_map["removed_msg"].startswith("jax.tree_map was removed in JAX v0.6.0")
    assert tl.modules["jax.lib.xla_bridge"]["events"] == [["0.4.30", "+"], ["0.6.0", "-"]]
    assert tl.names["jax.lib"]["xla_bridge"]["events"] == [["0.4.30", "+"], ["0.6.0", "-"]]
    assert tl.modules["jax.util"]["deprecated"] == ["0.6.0", "jax.util is deprecated and will be removed."]
    assert tl.names["jax.util"]["safe_map"]["events"] == [["0.4.30", "+"], ["0.6.0", "R"]]
    assert tl.names["jax.sharding"]["PmapSharding"]["events"] == [["0.4.30", "+"], ["0.6.0", "D"]]
    # a name reached through a resolved `*` import that went: gone; one that stayed: no record
    assert tl.names["jax.numpy"]["round_"]["events"] == [["0.4.30", "+"], ["0.6.0", "-"]]
    assert "round" not in tl.names.get("jax.numpy", {})
    # the module jax.config went, the attribute jax.config stayed (its record is kept to say so)
    assert tl.modules["jax.config"]["events"] == [["0.4.30", "+"], ["0.6.0", "-"]]
    assert tl.names["jax"]["config"]["events"] == [["0.4.30", "+"]]


def test_the_timeline_never_calls_reachable_names_removed(tl):
    assert "a" not in tl.names.get("jax.experimental.magic", {})  # its own __getattr__: cannot tell
    assert "app" not in json.dumps(tl.names.get("jax.tools.script", {}))  # only under __main__
    assert "_private" not in json.dumps(tl.names) and "np" not in tl.names.get("jax.numpy", {})
    # a tool imported from outside jax is not API; a re-export (`X as X`) is
    assert "partial" not in tl.names["jax.sharding"] and tl.names["jax.sharding"]["dtype"]["events"][-1] == [
        "0.6.0",
        "-",
    ]
    assert tl.name("jax", "jit", "0.6.0").state == ""  # never changed: no record, never "removed"


def test_regeneration_is_incremental(tmp_path, timeline_file):
    cache = timeline_file.parent
    assert sorted(p.name for p in (cache / "columns").iterdir()) == [
        f"0.4.30-f{apitimeline.FORMAT}.json", f"0.6.0-f{apitimeline.FORMAT}.json"]
    moved = tmp_path / "wheels-elsewhere"
    (cache / "wheels").rename(moved)  # each release was read once: the columns suffice
    try:
        out = tmp_path / "again.json"
        regenerate(cache, out, ["0.4.30", "0.6.0"], progress=lambda *_: None)
        assert out.read_text() == timeline_file.read_text()
    finally:
        moved.rename(cache / "wheels")


def test_release_specs(tl):
    assert tl.release("0.6.0") == tl.release("jax==0.6.0") == tl.release("latest") == "0.6.0"
    assert tl.release("<0.5") == "0.4.30"
    with pytest.raises(ValueError, match="newer than the timeline's newest release 0.6.0"):
        tl.release("0.7.0")
    with pytest.raises(ValueError, match="not a jax version"):
        tl.release("banana!")


USER = '''import jax
import jax.numpy as jnp
from jax import tree_map
from jax.lib import xla_bridge
import jax.config
from jax import config, jit


def f(x):
    y = jax.tree_map(lambda a: a, x)
    b = xla_bridge.get_backend()
    jax.config.update("jax_enable_x64", True)
    return jnp.round_(y), tree_map(abs, [1])


try:
    u = jax.util.safe_map
except AttributeError:
    u = None
if hasattr(jax, "tree_map"):
    g = jax.tree_map(abs, [jax.util.safe_map])
else:
    g = jax.tree.map
s = jax.sharding.PmapSharding
'''


def _findings(report):
    return [(f.line, f.code, f.name) for f in report.findings]


def test_scan_resolves_imports_and_chains(tmp_path, tl):
    (tmp_path / "m.py").write_text(USER)
    (tmp_path / "other.py").write_text("import numpy as np\nnp.round_(1)\n")
    report = scan([str(tmp_path)], Target("0.6.0"), tl)
    assert _findings(report) == [
        (3, "JXC001", "jax.tree_map"), (4, "JXC001", "jax.lib.xla_bridge"), (5, "JXC001", "jax.config"),
        (10, "JXC001", "jax.tree_map"), (13, "JXC001", "jax.numpy.round_"),
        (21, "JXC001", "jax.util.safe_map"),  # inside `if hasattr(jax, "tree_map")`, not the tested name
        (24, "JXC002", "jax.sharding.PmapSharding")]
    # guarded: jax.util.safe_map under try/except AttributeError, jax.tree_map under hasattr(jax, "tree_map")
    assert report.guarded == 2
    by_line = {f.line: f for f in report.findings}
    assert by_line[10].message == "jax.tree_map was removed in jax 0.6.0 (deprecated in 0.4.30): use jax.tree.map"
    assert by_line[10].col == 9 and by_line[10].fixable
    assert by_line[4].message == "module jax.lib.xla_bridge was removed in jax 0.6.0"
    assert by_line[24].message.startswith("jax.sharding.PmapSharding is deprecated since jax 0.6.0")
    assert "use jax.sharding.NamedSharding" in by_line[24].message
    old = scan([str(tmp_path)], Target("0.4.30"), tl)
    assert _findings(old) == [(3, "JXC002", "jax.tree_map"), (10, "JXC002", "jax.tree_map")] and not old.errors


def test_version_checks_guard_the_branch_not_taken(tmp_path, tl):
    (tmp_path / "v.py").write_text(
        "import jax\nif jax.__version_info__ >= (0, 5, 0):\n    a = jax.tree.map\nelse:\n    a = jax.tree_map\n"
        "if jax.__version_info__ < (0, 5):\n    b = jax.tree.map\nelse:\n    b = jax.lib.xla_bridge\n")
    report = scan([str(tmp_path)], Target("0.6.0"), tl)
    assert _findings(report) == [(9, "JXC001", "jax.lib.xla_bridge")]


def test_fix_rewrites_plain_renames_and_diff_writes_nothing(tmp_path, tl):
    path = tmp_path / "m.py"
    path.write_text(USER)
    shown = scan([str(tmp_path)], Target("0.6.0"), tl, diff=True)
    assert path.read_text() == USER
    assert "-from jax import tree_map\n+from jax.tree import map as tree_map\n" in shown.diffs[0]
    fixed = scan([str(tmp_path)], Target("0.6.0"), tl, fix=True)
    text = path.read_text()
    assert "from jax.tree import map as tree_map\n" in text
    assert "    y = jax.tree.map(lambda a: a, x)\n" in text
    assert {f.name for f in fixed.fixed} == {"jax.tree_map"} and len(fixed.fixed) == 2
    again = scan([str(tmp_path)], Target("0.6.0"), tl)
    assert "jax.tree_map" not in {f.name for f in again.findings}
    compile(text, "m.py", "exec")


def test_fix_moves_one_name_out_of_a_shared_import(tmp_path, tl):
    path = tmp_path / "m.py"
    path.write_text("from jax import jit, tree_map as tm\nprint(jit, tm)\n")
    scan([str(tmp_path)], Target("0.6.0"), tl, fix=True)
    assert path.read_text() == "from jax import jit\nfrom jax.tree import map as tm\nprint(jit, tm)\n"


def test_output_formats(tmp_path, tl):
    (tmp_path / "m.py").write_text(USER)
    report = scan([str(tmp_path)], Target("0.6.0"), tl)
    target = Target("0.6.0")
    text = render(report, "text", target, tl)
    assert f"{tmp_path}/m.py:10:9: JXC001 jax.tree_map was removed in jax 0.6.0" in text
    assert text.rstrip().endswith("fixable with --fix")
    data = json.loads(render(report, "json", target, tl))
    assert data["jax"] == "0.6.0" and data["findings"][0]["level"] == "error" and data["guarded"] == 2
    sarif = json.loads(render(report, "sarif", target, tl))
    assert sarif["version"] == "2.1.0" and {r["id"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]} == {
        f"JXC00{i}" for i in range(1, 9)}
    loc = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert loc["region"]["startLine"] == 3 and loc["artifactLocation"]["uri"].endswith("m.py")
    gh = render(report, "github", target, tl).splitlines()
    assert (
        gh[0].startswith(f"::error file={tmp_path}/m.py,line=3,col=17,endLine=3,endColumn=25,")
        and "title=JXC001::" in gh[0]
    )
    assert gh[-1].startswith("::warning ")


def test_several_scans_print_as_one(tmp_path, tl):
    """jax's scan and equinox's: text one after the other, one JSON object of scans, one SARIF log
    with one run per package."""
    (tmp_path / "m.py").write_text(USER)
    eqx = Timeline.load(apitimeline.PACKAGES["equinox"][1])
    scans = [(scan([str(tmp_path)], Target("0.6.0"), tl), Target("0.6.0"), tl),
             (scan([str(tmp_path)], Target(eqx.newest), eqx), Target(eqx.newest), eqx)]
    assert render_scans(scans, "text") == "".join(render(r, "text", t, t_l) for r, t, t_l in scans)
    assert [s["package"] for s in json.loads(render_scans(scans, "json"))["scans"]] == ["jax", "equinox"]
    log = json.loads(render_scans(scans, "sarif"))
    assert [run["tool"]["driver"]["properties"]["timeline"].split()[0] for run in log["runs"]] == ["jax", "equinox"]
    report, target, _ = scans[0]
    assert log["runs"][0] == json.loads(render(report, "sarif", target, tl))["runs"][0]
    assert render_scans(scans[:1], "json") == render(report, "json", target, tl)


@pytest.mark.integration
def test_the_command_line_exit_status(tmp_path, timeline_file):
    (tmp_path / "m.py").write_text(USER)
    def run(*a):
        return subprocess.run([sys.executable, "-m", "jaxcompat", "scan", "--timeline", str(timeline_file), *a],
                              capture_output=True, text=True, cwd=Path(__file__).resolve().parent.parent)
    assert run(str(tmp_path), "--jax", "0.6.0").returncode == 1
    assert run(str(tmp_path), "--jax", "0.4.30").returncode == 0  # deprecations are warnings
    upgrade = run(str(tmp_path), "--from", "0.4.30", "--to", "0.6.0")
    assert upgrade.returncode == 1 and "(from 0.4.30)" in upgrade.stdout
    bad = run(str(tmp_path), "--jax", "9.9.9")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --jax 9.9.9: newer than")
    assert run(str(tmp_path / "nope")).returncode == 2


TB = '''  File "/home/u/proj/tests/test_a.py", line 7, in test_a
    f()
  File "/venv/lib/python3.11/site-packages/chex/_src/fake.py", line 72, in f
    cpu_backend = (jax.lib.xla_bridge._backends or {})
  File "/venv/lib/python3.11/site-packages/jax/_src/deprecations.py", line 57, in getattr
    raise AttributeError(f"module {module!r} has no attribute {name!r}")
'''


@pytest.mark.parametrize(
    "error_type, message, name",
    [
        ("AttributeError", "module 'jax' has no attribute 'tree_map'", "jax.tree_map"),
        (
            "AttributeError",
            "[setup] AttributeError: module 'jax.lib' has no attribute 'xla_bridge'",
            "jax.lib.xla_bridge",
        ),
        ("ModuleNotFoundError", "No module named 'jax.lib.xla_bridge'", "jax.lib.xla_bridge"),
        (
            "ImportError",
            "cannot import name 'safe_map' from 'jax.util' (/venv/site-packages/jax/util.py)",
            "jax.util.safe_map",
        ),
        (
            "AttributeError",
            "AttributeError: jax.tree_map was removed in JAX v0.6.0: use jax.tree.map (jax v0.4.25 or newer) "
            "or jax.tree_util.tree_map (any JAX version).",
            "jax.tree_map",
        ),
    ],
)
def test_failures_explained_by_the_timeline(tl, error_type, message, name):
    got = explain_removed(error_type, message, TB, "0.6.0", tl)
    assert got is not None and got.name == name and got.removed_in == "0.6.0"
    assert got.where == "chex/_src/fake.py:72"
    assert got.text().endswith(", used at chex/_src/fake.py:72")


def test_what_the_timeline_does_not_explain(tl):
    assert explain_removed("AttributeError", "'Dataclass' object has no attribute 'a'", TB, "0.6.0", tl) is None
    assert explain_removed("AttributeError", "module 'jax' has no attribute 'tree_map'", TB, "0.4.30", tl) is None
    assert explain_removed("ValueError", "module 'jax' has no attribute 'tree_map'", TB, "0.6.0", tl) is None
    assert explain_removed("AttributeError", "module 'jax' has no attribute 'jit'", TB, "0.6.0", tl) is None
    assert where('  File "/venv/site-packages/jax/_src/x.py", line 3, in g\n') == ""


# ---------------------------------------------------------------- the committed timeline


def test_the_committed_timeline_holds_the_real_facts():
    path = apitimeline.DATA
    assert path.stat().st_size < 1_000_000
    t = Timeline.load()
    assert t.releases[0] == "0.4.13" and len(t.releases) >= 40
    st = t.name("jax", "tree_map", "0.10.0")
    assert st.broken and st.removed_in == "0.6.0" and st.deprecated_in == "0.4.26" and st.replacement == "jax.tree.map"
    assert t.module("jax.lib.xla_bridge", "0.9.0").state == "-" and t.module("jax.lib.xla_bridge", "0.8.3").state == "+"
    assert t.module("jax.util", "0.8.0").state == "-"
    assert t.name("jax", "device_put_replicated", "0.10.0").removed_in == "0.10.0"


def test_a_users_failing_test_is_explained_by_jax_api_history(tmp_path):
    from jaxcompat.knowledge.config import load
    from tests.helpers import MINIMAL, make_tree

    matrix = load(make_tree(tmp_path, MINIMAL))
    raw = RawResult(case="t.py::test_a", status="failed", error_types=["AttributeError", "Exception"],
                    message="AttributeError: module 'jax' has no attribute 'tree_map'", traceback=TB)
    after = Observed(results={"t.py::test_a": raw}, versions={"jax": "0.10.2"})
    before = Observed(results={"t.py::test_a": RawResult(case="t.py::test_a", status="passed")},
                                versions={"jax": "0.5.3"})
    [t] = usertests.classify(after, before, matrix, "cpu")
    assert t.cls == "broken" and t.explained_by is None
    assert t.explained_by_api == ("jax.tree_map was removed in jax 0.6.0 (deprecated in 0.4.26): use jax.tree.map, "
                                  "used at chex/_src/fake.py:72")
    from jaxcompat.apihistory.apiexplain import project_scan
    from jaxcompat.report.apiexplain import verdict_lines

    cmp = Comparison([t], with_baseline=True, ran={"candidate": 1, "baseline": 1})
    text = user_report.verdict(cmp, targets.Target(tmp_path, project=False).describe())
    assert "jax's API history: jax.tree_map was removed in jax 0.6.0" in text
    (tmp_path / "m.py").write_text("import jax\njax.tree_map(abs, 1)\n")
    lines = verdict_lines([t], tmp_path, "0.10.2", project_scan(tmp_path, "0.10.2"))
    assert "1 failing test(s): 0 explained by a known failure, 1 by jax's API history" in lines
    assert "m.py:2: JXC001 jax.tree_map was removed in jax 0.6.0" in lines


def test_fix_when_every_name_of_an_import_moves(tmp_path, tl):
    path = tmp_path / "m.py"
    path.write_text("from jax import tree_map, tree_map as tm2\nprint(tree_map, tm2)\n")
    scan([str(tmp_path)], Target("0.6.0"), tl, fix=True)
    assert path.read_text() == ("from jax.tree import map as tree_map\nfrom jax.tree import map as tm2\n"
                                "print(tree_map, tm2)\n")


READ_AHEAD = '''"""A docstring: jax.tree_map(f, x) here is text, not code.
>>> from jax import tree_map
"""
import functools
from jax import (
    numpy as jnp,
    tree_map,  # a comment
)
import jax.lib as jl


class A:
    @functools.partial(jax.tree_map, lambda x: x)
    @jl.xla_bridge.get_backend
    def f(self):
        return jnp.round_(1)  # jax.tree_map in a comment


def g(x):
    return x.round_ + tree_map.y
'''


def test_reading_ahead_of_the_parser_finds_exactly_what_the_parser_finds(tmp_path, tl):
    """The text pre-pass (which files and lines can hold a finding) never loses one: decorators
    (a def's lineno is below them), parenthesized multi-line imports, chains from aliases."""
    (tmp_path / "m.py").write_text(READ_AHEAD.replace("import functools", "import functools\nimport jax"))
    (tmp_path / "plain.py").write_text("import jax\nx = jax.numpy.ones(3).round_\n")  # not a jax name
    (tmp_path / "text.py").write_text("# jax.tree_map and jax.lib.xla_bridge, only in text\nimport jax\n")
    for release in ("0.4.30", "0.6.0"):
        fast = scan([str(tmp_path)], Target(release), tl)
        slow = scan([str(tmp_path)], Target(release), tl, exhaustive=True)
        assert [(f.path, f.line, f.col, f.code) for f in fast.findings] == [
            (f.path, f.line, f.col, f.code) for f in slow.findings]
    found = {(Path(f.path).name, f.line, f.name) for f in scan([str(tmp_path)], Target("0.6.0"), tl).findings}
    assert found == {("m.py", 8, "jax.tree_map"), ("m.py", 14, "jax.tree_map"),
                     ("m.py", 15, "jax.lib.xla_bridge"), ("m.py", 17, "jax.numpy.round_")}


def test_the_candidates_ecosystem_read_against_the_history(tmp_path):
    from types import SimpleNamespace

    from jaxcompat.apihistory.apiexplain import ecosystem_scan
    from jaxcompat.report.apiexplain import ecosystem_lines

    pkg = tmp_path / "lib" / "python3.11" / "site-packages" / "equinox"
    pkg.mkdir(parents=True)
    (pkg / "_a.py").write_text("import jax\n\ndef f(x):\n    return jax.tree_map(abs, x), jax.lib.xla_bridge\n")
    seen = SimpleNamespace(case="cases/test_x.py::test_y", status="failed",
                           message="AttributeError: module 'jax' has no attribute 'tree_map'")
    text = ecosystem_lines(ecosystem_scan(tmp_path, "0.10.2"), "0.10.2", [seen])
    assert ("equinox/_a.py:4: jax.tree_map was removed in jax 0.6.0 (deprecated in 0.4.26): use jax.tree.map"
            " — predicted and confirmed by cases/test_x.py::test_y") in text
    assert "equinox/_a.py:4: module jax.lib.xla_bridge was removed in jax 0.9.0 — predicted, not exercised" in text
    assert "use no name removed" in ecosystem_lines(ecosystem_scan(tmp_path, "0.4.30"), "0.4.30", [seen])
    assert ecosystem_scan(tmp_path / "nothing-here", "0.10.2") is None
    assert ecosystem_lines(None, "0.10.2", []) == ""


def test_a_replacement_removed_in_its_turn_is_said_not_offered(tmp_path):
    """jax 0.11.0 removed jax.core.CallPrimitive for jax.extend.core.CallPrimitive, which 0.11.1
    removed (seen on the real releases: absent from both modules on 0.11.2 and 0.12.0.1)."""
    from jaxcompat.apihistory.apitimeline import Timeline as Bundled

    real = Bundled.load()
    (tmp_path / "m.py").write_text("import jax.core\nx = jax.core.CallPrimitive\n")
    (f,) = scan([str(tmp_path)], Target("0.12.0"), real).findings
    assert "its replacement jax.extend.core.CallPrimitive was removed too, in jax 0.11.1" in f.message
    assert not f.fixable
    (f,) = scan([str(tmp_path)], Target("0.11.0"), real).findings
    assert f.message.endswith("use jax.extend.core.CallPrimitive") and f.fixable

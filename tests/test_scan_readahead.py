"""scan reads ahead of the parser (which lines can hold a finding, which scopes may bind a jax
name again): over generated modules that shadow, rebind and hide jax names in every way the
text search must see through, it finds exactly what parsing and reading every scope finds; and
a file's tree does not outlive its reading (scan runs with the garbage collector off)."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import weakref
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaxcompat.apihistory import scan as scan_module
from jaxcompat.apihistory.apitimeline import Timeline
from jaxcompat.apihistory.scan import scan
from jaxcompat.apihistory.scanscope import may_rebind
from jaxcompat.model.scan import Target

HEADS = ["import jax", "import jax.numpy as jnp", "from jax import tree_map", "from jax import numpy as np",
         "from jax import lax as jax_lax", "import jax as J", "if X: import jax.numpy as jnp",
         "y = 0; from jax import tree_map"]
USES = ["jax.tree_map(f, x)", "jnp.round_(x)", "tree_map(f, x)", "np.round_(x)", "jax . tree_map", "J.tree_map",
        "jax.tree_util.tree_map(f, x)", "myjax.tree_map(f)", "x.jax.tree_map(f)", "'jax.tree_map'",
        "jax_lax.tree_map", "jax.numpy.round_(x)", "jax.lib.xla_bridge.get_backend()"]
BINDERS = [  # a statement that binds (or declares, or only seems to bind) one of the names
    "jax = None", "jnp, y = 1, 2", "for jax in things: pass", "global jax", "import numpy as jnp",
    "tree_map = lambda f, x: x", "with open(p) as np: pass", "def jax(): pass", "class jnp: pass",
    "jax == 1", "f(jax, jnp)", "f(jax=1)", "y = {jax: 1 for jax in z}", "y = [jnp for jnp in z]",
    "try:\n{i}    pass\n{i}except E as jax:\n{i}    pass", "(jax := 3)", "del jax",
]


@st.composite
def modules(draw) -> str:
    lines = draw(st.lists(st.sampled_from(HEADS), min_size=1, max_size=4, unique=True))
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["use", "bind", "def", "lambda", "comp", "class"]))
        use, bind = draw(st.sampled_from(USES)), draw(st.sampled_from(BINDERS))
        if kind == "use":
            lines.append(f"r = {use}")
        elif kind == "bind":
            lines.append(bind.replace("{i}", ""))
        elif kind == "def":
            param = draw(st.sampled_from(["jax", "jnp", "x", "tree_map", "*jax", "np=1"]))
            body = [bind.replace("{i}", "    ")] if draw(st.booleans()) else []
            lines += [f"def f({param}):", *("    " + b for b in body), f"    return {use}"]
        elif kind == "lambda":
            lines.append(f"g = lambda {draw(st.sampled_from(['jax', 'jnp', 'x']))}: {use}")
        elif kind == "comp":
            lines.append(f"h = [{use} for {draw(st.sampled_from(['jax', 'jnp', 'x']))} in things]")
        else:
            lines += ["class C:", "    " + bind.replace("{i}", "    "), "    def m(self):", f"        return {use}"]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def timeline() -> Timeline:
    return Timeline.load()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=modules())
def test_reading_ahead_finds_what_reading_everything_finds(source, tmp_path_factory, timeline):
    path = tmp_path_factory.mktemp("m") / "m.py"
    path.write_text(source, encoding="utf-8")
    for release in ("0.6.0", "0.12.0.1"):
        fast = scan([str(path)], Target(release), timeline)
        slow = scan([str(path)], Target(release), timeline, exhaustive=True)
        assert fast.parse_errors == slow.parse_errors
        assert [f.to_dict() for f in fast.findings] == [f.to_dict() for f in slow.findings], source


@pytest.mark.parametrize("src", ["X = 1\nif X: from jax import tree_map\n", "x = 1; from jax import tree_map\n",
                                 "try: import jax\nexcept ImportError: pass\ny = jax.tree_map(f, x)\n",
                                 "if X:  from jax import (\n    tree_map)\n"])
def test_an_import_that_does_not_start_its_line_is_read(tmp_path, src):
    # 758816f: 0 findings, exit 0; the read-ahead looked for imports at the start of a line only
    (tmp_path / "m.py").write_text(src)
    run = subprocess.run([sys.executable, "-m", "jaxcompat", "scan", str(tmp_path), "--jax", "0.6.2", "--format",
                          "json"], capture_output=True, text=True, cwd=Path(__file__).resolve().parent.parent)
    assert run.returncode == 1 and [f["name"] for f in json.loads(run.stdout)["findings"]] == ["jax.tree_map"]


@pytest.mark.parametrize("src", [
    "import jax\ry = jax.tree_map(abs, [1])\r",  # lines that end with a CR alone
    "from \\\n    jax import tree_map\ny = tree_map(abs, [1])\n",
    "\x0cimport jax\ny = jax.tree_map(abs, [1])\n",
    "x = 1;\x0cimport jax\ny = jax.tree_map(abs, [1])\n",
    "import os, \\\n    jax\ny = jax.tree_map(abs, [1])\n",
    "import os; import \\\r\n    jax\r\ny = jax.tree_map(abs, [1])\r\n",
    "if X: \\\n  from jax import tree_map\ny = tree_map(abs, [1])\n",
    "import \uff4aax\ny = jax.tree_map(abs, [1])\n",  # Python reads identifiers NFKC-normalized
    "import jax\ny = jax.\uff54ree_map(abs, [1])\n",
    "import jax as \u03bc\ny = \xb5.tree_map(abs, [1])  # \xa0\n",  # MICRO SIGN is GREEK SMALL LETTER MU in a name
])
def test_an_import_or_a_use_in_any_layout_python_reads_is_read(tmp_path, src, timeline):
    # d0fc716: no finding, exit 0 (the read-ahead looked for imports where a plain layout puts them)
    (tmp_path / "m.py").write_bytes(src.encode())
    fast = scan([str(tmp_path)], Target("0.6.2"), timeline)
    assert [f.name for f in fast.findings] == ["jax.tree_map"], src
    slow = scan([str(tmp_path)], Target("0.6.2"), timeline, exhaustive=True)
    assert [f.to_dict() for f in fast.findings] == [f.to_dict() for f in slow.findings]


def test_a_comment_or_a_string_that_reads_like_an_import_is_none():
    src = 'import jax\n# note: import jax.numpy as jnp first\ns = "a; import jax ("\nt = "b: from jax import x"\n'
    assert scan_module.import_starts(src, "jax") == [0]


@pytest.mark.parametrize("text, lines", [
    ("def f(jax):\n  return jax\n", [1]),
    ("x = 1\ny = (lambda jnp: jnp)\n", [2]),
    ("for jax in xs:\n  pass\n", [1]),
    ("to a global\n  jax.Array\n", [2]),  # the name's own line (where the keyword is is no binding)
    ("def\\\n jax(): pass\n", [2]),
    ("jaxpr = 1\nmyjax = 2\nx.jax = 3\nif jax == 1: pass\njax.x = 1\n", []),
    ("import jax\n", []),  # the import itself is skipped
    ("jax : int = 1\njnp += 1\n", [1]),  # an augmented assignment needs a binding before it
    # `del` binds the name in its scope (found by the property test below: `del jax` in a function
    # then `jax.tree_map(...)` there was a finding read ahead, none read whole)
    ("def f():\n    del jax\n    return jax.tree_map(f, x)\n", [2]),
])
def test_may_rebind_reads_the_text_around_each_name(text, lines):
    imports = [(0, len("import jax"))] if text.startswith("import jax") else []
    assert may_rebind(text, {"jax", "jnp"}, imports) == lines


def test_a_files_tree_does_not_outlive_its_reading(tmp_path, monkeypatch, timeline):
    """Each file's reader used to keep its tree in a cycle (its guards and scopes call back into
    it); with the collector off for the whole scan every tree stayed in memory (jax's own source:
    a peak of 319 MiB, against 66 MiB when freed as it goes)."""
    for i in range(3):
        (tmp_path / f"m{i}.py").write_text("import jax\ntry:\n  x = jax.tree_map(f, y)\nexcept AttributeError:\n"
                                           "  pass\ndef f(jax):\n  return jax.tree_map(f, y)\n")
    trees = []
    parse = scan_module.ast.parse

    def keep(*args, **kwargs):
        tree = parse(*args, **kwargs)
        if "filename" in kwargs:  # a whole file (an import statement alone is read apart)
            trees.append(weakref.ref(tree))
        return tree

    monkeypatch.setattr(scan_module.ast, "parse", keep)
    monkeypatch.setattr(scan_module.gc, "enable", lambda: None)  # no collection may free them behind the test
    try:
        scan([str(tmp_path)], Target("0.6.0"), timeline)
        assert len(trees) == 3
        assert [t() for t in trees] == [None, None, None]
    finally:
        monkeypatch.undo()
        gc.enable()

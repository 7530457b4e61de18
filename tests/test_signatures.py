"""Signatures, private API and behaviour changes in jax's API history, and what scan says of them.

Three fake jax releases (wheels written here) carry the shapes of real changes of jax 0.10-0.12:
``jnp.array``'s ``copy`` by position (fine, then a deprecation shim ``*args``, then keyword-only),
``make_mesh(axis_shapes=)`` renamed ``axis_sizes``, ``compute_on`` given required keyword-only
parameters, a class whose constructor gains a required parameter, a private name that goes.
Whether a call binds is checked against what Python itself does with the same call.
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxcompat.apihistory import behaviour
from jaxcompat.apihistory.apitimeline import Timeline, regenerate
from jaxcompat.apihistory.scan import scan
from jaxcompat.apihistory.scanlookup import private_part
from jaxcompat.apihistory.signatures import NewerSyntax, Params, of_function, parse, top_names
from jaxcompat.model.scan import Target
from jaxcompat.model.vocab import BindProblem
from jaxcompat.report.scan import render

ARRAY = {
    "0.10.0": "def array(object, dtype=None, copy=True, order='K', ndmin=0):\n  return object\n",
    "0.10.1": "def array(object, dtype=None, *args, copy=True, order='K', ndmin=0):\n  return object\n",
    "0.12.0": "def array(object, dtype=None, *, copy=True, order='K', ndmin=0):\n  return object\n",
}
MESH = {
    "0.10.0": "def make_mesh(axis_shapes, axis_names, *, devices=None):\n  pass\n",
    "0.10.1": "def make_mesh(axis_shapes, axis_names, *, devices=None):\n  pass\n",
    "0.12.0": "def make_mesh(axis_sizes, axis_names, *, devices=None):\n  pass\n",
}
COMPUTE_ON = {
    "0.10.0": "def compute_on(compute_type):\n  pass\n",
    "0.10.1": "def compute_on(compute_type):\n  pass\n",
    "0.12.0": "def compute_on(f=None, *, compute_type, out_memory_spaces, compiler_options=None):\n  pass\n",
}
MESH_CLASS = {
    "0.10.0": "class Mesh:\n  def __init__(self, devices, axis_names):\n    pass\n"
              "  def local_mesh(self, n):\n    pass\n  def old_api(self, n):\n    pass\n",
    "0.10.1": "class Mesh:\n  def __init__(self, devices, axis_names):\n    pass\n"
              "  def local_mesh(self, n):\n    pass\n  def old_api(self, n):\n    pass\n",
    "0.12.0": "class Mesh:\n  def __init__(self, devices, axis_names, *, axis_types):\n    pass\n"
              "  def local_mesh(self, n, m=None):\n    pass\n",
}


def _release(v: str) -> dict[str, str]:
    core = "def get_aval(x):\n  pass\n" if v != "0.12.0" else "def other(x):\n  pass\n"
    return {
        "jax/__init__.py": "from jax._src.mesh import make_mesh as make_mesh\n",
        "jax/numpy/__init__.py": "from jax._src.numpy.lax_numpy import array as array, empty as empty, cross\n",
        "jax/_src/__init__.py": "",
        "jax/_src/numpy/__init__.py": "",
        "jax/_src/numpy/lax_numpy.py": ARRAY[v] + "def empty(shape, dtype=None):\n  pass\n"
                                       "def cross(a, b):\n  pass\n",
        "jax/_src/mesh.py": MESH[v] + MESH_CLASS[v],
        "jax/_src/core.py": core,
        "jax/sharding.py": "from jax._src.mesh import Mesh as Mesh\n",
        "jax/experimental/__init__.py": "",
        "jax/experimental/compute_on.py": COMPUTE_ON[v],
    }


@pytest.fixture(scope="module")
def tl(tmp_path_factory) -> Timeline:
    cache = tmp_path_factory.mktemp("sigs")
    (cache / "wheels").mkdir()
    for v in ARRAY:
        with zipfile.ZipFile(cache / "wheels" / f"jax-{v}-py3-none-any.whl", "w") as z:
            for name, text in _release(v).items():
                z.writestr(name, text)
    out = cache / "timeline.json"
    regenerate(cache, out, list(ARRAY), progress=lambda *_: None)
    return Timeline(json.loads(out.read_text()))


def test_the_timeline_keeps_each_signature_change(tl):
    assert tl.callables["jax.numpy.array"] == [
        ["0.10.0", "object,dtype=,copy=,order=,ndmin="],
        ["0.10.1", "object,dtype=,*args,copy=,order=,ndmin="],
        ["0.12.0", "object,dtype=,*,copy=,order=,ndmin="]]
    assert tl.callables["jax.make_mesh"][-1] == ["0.12.0", "axis_sizes,axis_names,*,devices="]
    assert tl.callables["jax.sharding.Mesh"][-1] == ["0.12.0", "devices,axis_names,*,axis_types"]
    assert tl.callables["jax.sharding.Mesh.local_mesh"] == [["0.10.0", "n"], ["0.12.0", "n,m="]]
    assert "jax.numpy.empty" not in tl.callables  # never changed: not kept
    assert tl.private_gone("jax._src.core.get_aval", "0.12.0") == "0.12.0"
    assert tl.private_gone("jax._src.core.get_aval", "0.10.1") == ""


def scan_at(tmp_path: Path, tl: Timeline, code: str, release: str, before: str = "", fix: bool = False):
    (tmp_path / "user.py").write_text(code)
    return scan([str(tmp_path)], Target(release, before), tl, fix=fix)


USER = """import jax
import jax.numpy as jnp
from jax.numpy import array
from jax.experimental.compute_on import compute_on

a = jnp.array([1.0], jnp.float32, False)
b = array([1.0], None, True, "C")
mesh = jax.make_mesh(axis_shapes=(1,), axis_names=("x",))
m = jax.sharding.Mesh(devices, ("x",))

with compute_on("device_host"):
    pass
"""

LOOKALIKES = """import jax
import jax.numpy as jnp


def array(x, dtype=None, copy=True):
    return x


a = jnp.array([1.0], jnp.float32, copy=False)
b = array([1.0], None, False)
mesh = jax.make_mesh((1,), ("x",))
mesh = jax.make_mesh(axis_sizes=(1,), axis_names=("x",))
c = jnp.array(*args)
d = jnp.array(x, **kwargs)
"""


def test_each_call_the_target_rejects_is_flagged_with_the_release_and_the_fix(tmp_path, tl):
    got = {f.line: f for f in scan_at(tmp_path, tl, USER, "0.12.0").findings}
    assert got[6].code == "JXC003" and "copy passed by position, keyword-only since jax 0.12.0" in got[6].message
    assert "warned since jax 0.10.1" in got[6].message and got[6].fixable
    assert got[7].code == "JXC003" and "copy, order passed by position" in got[7].message
    assert "renamed axis_sizes= in jax 0.12.0" in got[8].message and got[8].fixable
    assert got[9].code == "JXC003" and "axis_types is required since jax 0.12.0" in got[9].message
    assert got[11].code == "JXC003" and "compute_type is required since jax 0.12.0" in got[11].message
    assert not got[11].fixable  # nothing mechanical about it


def test_a_deprecation_shim_is_a_warning_naming_the_release_that_rejects_it(tmp_path, tl):
    got = {f.line: f for f in scan_at(tmp_path, tl, USER, "0.10.1").findings}
    assert set(got) == {6, 7}
    assert got[6].code == "JXC006" and got[6].level == "warning"
    assert "deprecated since jax 0.10.1 (a DeprecationWarning; a TypeError from jax 0.12.0)" in got[6].message


def test_nothing_is_flagged_where_every_call_runs(tmp_path, tl):
    assert scan_at(tmp_path, tl, USER, "0.10.0").findings == []


def test_no_false_alarm_on_look_alikes(tmp_path, tl):
    got = scan_at(tmp_path, tl, LOOKALIKES, "0.12.0").findings
    assert got == [], [f.text() for f in got]


def test_the_new_spelling_on_an_older_release_is_flagged(tmp_path, tl):
    got = scan_at(tmp_path, tl, LOOKALIKES, "0.10.0").findings
    assert [(f.line, f.code) for f in got] == [(12, "JXC003")]
    assert "accepted only from jax 0.12.0" in got[0].message


def test_fix_rewrites_by_position_to_by_keyword_and_renames(tmp_path, tl):
    report = scan_at(tmp_path, tl, USER, "0.12.0", fix=True)
    text = (tmp_path / "user.py").read_text()
    assert 'a = jnp.array([1.0], jnp.float32, copy=False)' in text
    assert 'b = array([1.0], None, copy=True, order="C")' in text
    assert 'jax.make_mesh(axis_sizes=(1,), axis_names=("x",))' in text
    assert len(report.fixed) == 3
    assert {f.line for f in scan_at(tmp_path, tl, text, "0.12.0").findings} == {9, 11}  # fixed for good


def test_from_says_when_the_call_already_fails(tmp_path, tl):
    got = {f.line: f for f in scan_at(tmp_path, tl, USER, "0.12.0", before="0.12.0").findings}
    assert "already failing in jax 0.12.0" in got[8].message


def test_private_api_is_its_own_code_and_gone_names_are_errors(tmp_path, tl):
    code = ("import jax\nfrom jax._src import core\nfrom jax._src.core import get_aval\n"
            "x = core.get_aval(1)\ny = jax._src.core.other\nok = jax.__version__\n")
    got = {(f.line, f.code): f for f in scan_at(tmp_path, tl, code, "0.12.0").findings}
    assert set(got) == {(2, "JXC004"), (3, "JXC007"), (4, "JXC007"), (5, "JXC004")}
    assert "gone in jax 0.12.0" in got[(4, "JXC007")].message
    assert {(f.line, f.code) for f in scan_at(tmp_path, tl, code, "0.10.0").findings} == {
        (2, "JXC004"), (3, "JXC004"), (5, "JXC004")}
    assert private_part("jax.lib.xla_bridge._backends") == "jax.lib.xla_bridge._backends"
    assert private_part("jax.__version_info__") == "" and private_part("numpy._core") == ""


def test_behaviour_changes_warn_on_the_call_when_the_scan_crosses_the_release(tmp_path, tl):
    code = "import jax.numpy as jnp\nbuf = jnp.empty((4,))\n"
    assert scan_at(tmp_path, tl, code, "0.10.1").findings == []
    (f,) = scan_at(tmp_path, tl, code, "0.12.0").findings
    assert f.code == "JXC005"
    assert "changed in jax 0.11.0" in f.message and "jnp.zeros" in f.message
    assert scan_at(tmp_path, tl, code, "0.12.0", before="0.12.0").findings == []  # not crossed


def test_the_behaviour_table_is_well_formed_and_its_errors_name_the_key(tmp_path):
    changes = behaviour.load()
    assert {c.name for c in changes} >= {"jax.numpy.empty", "jax.numpy.cross"}
    assert all(c.evidence and c.instead for c in changes)
    bad = tmp_path / "b.toml"
    bad.write_text('[[change]]\nname = "jax.numpy.empty"\nrelease = "0.11.0"\nmeening = "x"\n')
    with pytest.raises(ValueError, match=r"b.toml: change\[0\]: unknown key 'meening'.*missing key 'evidence'"):
        behaviour.load(bad)


def test_summary_counts_errors_and_warnings(tmp_path, tl):
    report = scan_at(tmp_path, tl, USER, "0.12.0")
    assert render(report, "text", Target("0.12.0"), tl).rstrip().splitlines()[-1].startswith(
        "jax 0.12.0: 1 files, 5 errors, 0 warnings")


# ------------------------------------------------ the reading itself, against Python's own


PARAMS = st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), min_size=0, max_size=5, unique=True)


@settings(max_examples=200, deadline=None)
@given(names=PARAMS, data=st.data())
def test_bind_agrees_with_python(names, data):
    kinds = [data.draw(st.sampled_from(["pos", "posonly", "kw"])) for _ in names]
    order = {"posonly": 0, "pos": 1, "kw": 2}
    names = [n for _, n in sorted(zip(kinds, names, strict=True), key=lambda x: order[x[0]])]
    kinds = sorted(kinds, key=order.get)
    defaults = [data.draw(st.booleans()) for _ in names]
    for i in range(1, len(names)):  # a positional default is followed by defaults only
        if kinds[i] != "kw" and defaults[i - 1] and kinds[i - 1] != "kw":
            defaults[i] = True
    varargs, varkw = data.draw(st.booleans()), data.draw(st.booleans())
    parts, done_posonly = [], False
    for n, k, d in zip(names, kinds, defaults, strict=True):
        if k != "posonly" and not done_posonly and "posonly" in kinds:
            parts.append("/")
            done_posonly = True
        if k == "kw" and not any(p.startswith("*") for p in parts):
            parts.append("*args" if varargs else "*")
        parts.append(f"{n}=0" if d else n)
    if "posonly" in kinds and not done_posonly:
        parts.append("/")
    if varargs and not any(p.startswith("*") for p in parts):
        parts.append("*args")
    if varkw:
        parts.append("**kw")
    src = f"def f({', '.join(parts)}):\n  pass\n"
    ns: dict = {}
    exec(src, ns)
    import ast as _ast

    params = Params.parse(of_function(_ast.parse(src).body[0]))
    n_pos = data.draw(st.integers(0, 6))
    kws = data.draw(st.lists(st.sampled_from(["a", "b", "c", "d", "e", "z"]), max_size=3, unique=True))
    try:
        ns["f"](*range(n_pos), **{k: 0 for k in kws})  # the call itself: inspect's bind is stricter than Python
        python_ok = True
    except TypeError:
        python_ok = False
    assert params.bind(n_pos, kws).ok == python_ok, (src, n_pos, kws, params.bind(n_pos, kws))


def test_methods_drop_self_and_replacing_decorators_are_unknown():
    import ast as _ast

    cls = _ast.parse("class C:\n  def m(self, x, *, y=1): pass\n  @staticmethod\n  def s(x): pass\n"
                     "  @property\n  def p(self): pass\n").body[0]
    m, s, p = cls.body
    assert of_function(m, method=True) == "x,*,y="
    assert of_function(s, method=True) == "x"
    assert of_function(p, method=True) is None
    assert Params.parse("a,/,b=,*,c").bind(0, ["a"]).problem is BindProblem.POSITIONAL_ONLY_BY_KEYWORD


def test_newer_syntax_is_refused_not_read_as_empty():
    src = "def f[T](x: T) -> T:\n  return x\n"
    if sys.version_info >= (3, 12):
        assert parse("jax._src.m", src).body
    else:
        with pytest.raises(NewerSyntax, match=r"jax._src.m \(line 1\) does not parse on Python 3.1\d.*nox -s timeline"):
            parse("jax._src.m", src)


def test_top_names_reads_module_level_bindings():
    src = ("import numpy as np\nfrom a.b import (x as _y,\n  z)\ndef _f(): pass\n_X: int = 3\n"
           "class _C: pass\nif True:\n  _hidden = 1\n")
    assert top_names(src) == {"np", "_y", "z", "_f", "_X", "_C"}


TB = 'Traceback (most recent call last):\n  File "/v/lib/python3.12/site-packages/proj/core.py", line 12, in f\n'


@pytest.mark.parametrize("message, expected", [
    ("TypeError: array() takes from 1 to 2 positional arguments but 3 were given",
     "jax.numpy.array: copy passed by position, keyword-only since jax 0.12.0 (by position it warned since jax "
     "0.10.1): pass copy= by keyword, called at proj/core.py:12"),
    ("TypeError: make_mesh() got an unexpected keyword argument 'axis_shapes'",
     "jax.make_mesh: keyword axis_shapes= was renamed axis_sizes= in jax 0.12.0: write axis_sizes=, called at "
     "proj/core.py:12"),
    ("TypeError: compute_on() missing 2 required keyword-only arguments: 'compute_type' and 'out_memory_spaces'",
     "jax.experimental.compute_on.compute_on: out_memory_spaces is required since jax 0.12.0, called at "
     "proj/core.py:12"),
    ("TypeError: helper() takes 1 positional argument but 2 were given", ""),  # not jax's
    ("TypeError: unsupported operand type(s) for +: 'int' and 'str'", ""),
])
def test_a_type_error_from_a_signature_change_is_explained(tl, message, expected):
    from jaxcompat.apihistory.apiexplain import explain_call

    assert explain_call(message, TB, "0.12.0", timeline=tl) == expected
    assert explain_call(message, TB, "0.10.0", timeline=tl) == ""  # nothing had changed yet


def test_equinox_has_its_own_history_read_the_same_way(tmp_path):
    from jaxcompat.apihistory.apitimeline import PACKAGES

    eqx = Timeline.load(PACKAGES["equinox"][1])
    assert eqx.package == "equinox" and eqx.releases[0] == "0.10.0"
    code = ("import equinox as eqx\nimport jax\n\n"
            "class M(eqx.Module):\n    w: jax.Array = eqx.static_field()\n\n"
            "mlp = eqx.nn.MLP(2, 2, 4, 1, scan=True, key=jax.random.key(0))\n"
            "def static_field():\n    return 1\n")  # a local look-alike is never flagged
    (tmp_path / "m.py").write_text(code)
    got = {f.line: f for f in scan([str(tmp_path)], Target("0.13.4"), eqx).findings}
    assert got[5].code == "JXC002" and "equinox.static_field is deprecated since equinox 0.13.0" in got[5].message
    assert "use equinox.field" in got[5].message
    assert got[7].code == "JXC003" and "accepted only from equinox 0.13.5" in got[7].message
    assert set(got) == {5, 7}
    assert {f.line for f in scan([str(tmp_path)], Target("0.13.5"), eqx).findings} == {5}


def test_scan_command_reads_equinox_beside_jax(tmp_path, capsys):
    from jaxcompat.commands import main

    (tmp_path / "m.py").write_text("import equinox as eqx\nimport jax.numpy as jnp\nf = eqx.static_field()\n"
                                   "a = jnp.array([1.0], None, False)\n")
    assert main(["scan", str(tmp_path), "--jax", "0.12.0", "--equinox", "0.13.8", "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [s["package"] for s in data["scans"]] == ["jax", "equinox"]
    assert [f["code"] for s in data["scans"] for f in s["findings"]] == ["JXC003", "JXC002"]
    assert main(["scan", str(tmp_path), "--equinox", "latest"]) == 0  # equinox alone: a deprecation warns
    assert "equinox 0.13.8: 1 files, 0 errors, 1 warnings" in capsys.readouterr().out


def test_a_fallback_import_does_not_rebind_and_setting_an_attribute_never_fails(tmp_path, tl):
    code = ("try:\n    from jax._src import core\nexcept ImportError:\n    from jax._src import mesh as core\n"
            "x = core.get_aval\ncore.get_aval = print\n")
    got = [(f.line, f.code, f.name) for f in scan_at(tmp_path, tl, code, "0.12.0").findings]
    assert got == [(4, "JXC004", "jax._src"), (5, "JXC007", "jax._src.core.get_aval")]


def test_a_method_its_class_no_longer_has_is_known_and_explains_an_attribute_error(tl):
    from jaxcompat.apihistory.apiexplain import explain_method

    assert tl.callables["jax.sharding.Mesh.old_api"] == [["0.10.0", "n"], ["0.12.0", "-"]]
    assert tl.method_gone("jax.sharding.Mesh.old_api", "0.12.0") == "0.12.0"
    assert tl.signature("jax.sharding.Mesh.old_api", "0.12.0") is None
    msg = "AttributeError: 'Mesh' object has no attribute 'old_api'"
    assert explain_method(msg, TB, "0.12.0", timeline=tl) == (
        "jax.sharding.Mesh.old_api was removed in jax 0.12.0, used at proj/core.py:12")
    assert explain_method(msg, TB, "0.10.1", timeline=tl) == ""
    assert explain_method("AttributeError: 'Mesh' object has no attribute 'shape'", TB, "0.12.0", timeline=tl) == ""

"""`scan` and `scan --fix` on code as people write it, against the committed timeline (real jax
history, no jax installed): a fix never damages a file (form feeds, U+2028, CRLF, a BOM, a coding
cookie), keyword renames come from the release that broke the call, a local that shadows jax is
not jax, guards count only where they test jax itself, and a file this Python cannot parse is
bad input (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jaxcompat.apihistory import apitimeline
from jaxcompat.apihistory.apitimeline import Timeline
from jaxcompat.apihistory.scan import scan
from jaxcompat.model.scan import Target

ROOT = Path(__file__).resolve().parent.parent
NEW = Target("0.12.0.1", "0.4.30")


@pytest.fixture(scope="module")
def tl() -> Timeline:
    return Timeline.load()


def _fix(tmp_path: Path, tl: Timeline, data: bytes, name: str = "m.py") -> tuple[bytes, object]:
    f = tmp_path / name
    f.write_bytes(data)
    report = scan([str(f)], NEW, tl, fix=True)
    return f.read_bytes(), report


@pytest.mark.parametrize("breaker", ["\x0c", "\u2028", "\x1c", "\x1d", "\x85"])
def test_fix_counts_lines_as_ast_does(tmp_path, tl, breaker):
    # 084bcdf: str.splitlines broke at the form feed: `xjax.tree.mapmap(f, y)`, "1 fixed", exit 0
    src = f"import jax\n# a {breaker} comment\nx = jax.tree_map(f, y)\n"
    got, report = _fix(tmp_path, tl, src.encode("utf-8"))
    assert got.decode("utf-8") == src.replace("jax.tree_map", "jax.tree.map")
    assert len(report.fixed) == 1 and not report.findings


def test_fix_keeps_crlf_bom_and_the_coding_cookie(tmp_path, tl):
    crlf = b"import jax\r\n\r\nx = jax.tree_map(f, y)  # \xc3\xa9\r\n"
    got, _ = _fix(tmp_path, tl, crlf, "crlf.py")
    assert got == crlf.replace(b"jax.tree_map", b"jax.tree.map")  # 084bcdf: the file came back LF
    bom = b"\xef\xbb\xbfimport jax\nx = jax.tree_map(f, y)\n"
    got, _ = _fix(tmp_path, tl, bom, "bom.py")
    assert got == bom.replace(b"jax.tree_map", b"jax.tree.map")
    latin = "# -*- coding: latin-1 -*-\nimport jax\ns = 'caf\u00e9'; x = jax.tree_map(f, y)\n".encode("latin-1")
    got, report = _fix(tmp_path, tl, latin, "latin.py")
    assert got == latin.replace(b"jax.tree_map", b"jax.tree.map") and len(report.fixed) == 1
    # 084bcdf: a latin-1 file was "cannot read" (decoded as UTF-8 whatever its cookie said)


def test_a_second_fix_changes_nothing(tmp_path, tl):
    src = ("import jax\nfrom jax import tree_map, tree_leaves as leaves_of, jit\nimport jax.numpy as jnp\n"
           "a = jax.tree_map(f, x); b = leaves_of(x)\nc = jnp.array(x, None, False)\n")
    once, _ = _fix(tmp_path, tl, src.encode())
    twice, report = _fix(tmp_path, tl, once)
    assert once == twice and not report.fixed
    assert b"copy=False" in once and b"from jax.tree import map as tree_map" in once
    compile(once, "m.py", "exec")


def test_keyword_renames_come_from_the_release_that_broke_the_call(tmp_path, tl):
    # 084bcdf read the rename against the target's signature: newshape= became out_sharding=
    src = ("import jax.numpy as jnp\nfrom jax import lax\njnp.reshape(x, newshape=(2, 3))\n"
           "jnp.einsum('ij', a, _use_xeinsum=True)\nlax.dot_general(a, b, dn, algorithm=al)\n"
           "lax.broadcasted_iota(d, s, 0, _sharding=sh)\n")
    got, report = _fix(tmp_path, tl, src.encode())
    by_line = {f.line: f.message for f in report.findings}
    assert "newshape= was removed in jax 0.6.0" in by_line[3]
    assert "_use_xeinsum= was removed in jax 0.4.22" in by_line[4]
    assert "algorithm= was removed in jax 0.4.35" in by_line[5]  # algorithm and transpose_algorithm went
    assert b"out_sharding=(2, 3)" not in got and b"out_sharding=True" not in got and b"out_sharding=al" not in got
    assert b"out_sharding=sh" in got  # _sharding= -> sharding= (0.5.0) -> out_sharding= (0.5.1): a real rename


@pytest.mark.parametrize("code", [
    "def f(jax):\n    return jax.tree_map(1)\n",
    "z = [jax.tree_map(g, x) for jax in things]\n",
    "g = lambda jax: jax.tree_map(1)\n",
    "def f():\n    jax = load()\n    return jax.tree_map(1)\n",
    "class C:\n    jax = other\n    y = jax.tree_map(1)\n",
    "def f(jnp):\n    return jnp.reshape(x, newshape=(2, 3))\n",
    "def f(*, jax=None):\n    return jax.tree_map(1)\n",
])
def test_a_local_that_shadows_jax_is_not_jax(tmp_path, tl, code):
    src = "import jax\nimport jax.numpy as jnp\n" + code
    got, report = _fix(tmp_path, tl, src.encode())
    assert not report.findings and not report.fixed and got == src.encode()


def test_outside_the_shadowing_scope_jax_is_jax(tmp_path, tl):
    src = ("import jax\ndef f(jax):\n    return jax.tree_map(1)\nclass C:\n    jax = 1\n"
           "    def m(self):\n        return jax.tree_map(2)\ny = jax.tree_map(3)\n")
    _, report = _fix(tmp_path, tl, src.encode())
    assert sorted(f.line for f in report.fixed) == [7, 8]


def test_a_fix_adds_the_module_level_import_it_needs(tmp_path, tl):
    # 084bcdf borrowed the `import jax` inside f and wrote module-level code raising NameError
    src = ("from jax import core\n\ndef f():\n    import jax\n    return jax.jit\n\n"
           "E = core.ConcretizationTypeError\n")
    got, report = _fix(tmp_path, tl, src.encode())
    text = got.decode()
    assert "E = jax.errors.ConcretizationTypeError" in text and len(report.fixed) == 1
    assert text.startswith("import jax\nfrom jax import core\n")  # bound at module level, above its use


@pytest.mark.parametrize("guard", [
    "if hasattr(obj, 'x'):\n    y = jax.tree_map(f, x)\n",
    "if np.__version__ >= '1.0':\n    y = jax.tree_map(f, x)\n",
    "try:\n    def g():\n        return jax.tree_map(f, x)\nexcept AttributeError:\n    pass\n",
    "try:\n    y = jax.tree_map(f, x)\nexcept ImportError:\n    pass\n",
])
def test_a_guard_that_does_not_test_jax_hides_nothing(tmp_path, tl, guard):
    # 084bcdf: each of these hid the removal ("1 more inside try/except or hasattr/version checks")
    src = "import jax\nimport numpy as np\n" + guard
    f = tmp_path / "m.py"
    f.write_text(src)
    report = scan([str(f)], NEW, tl)
    assert [x.name for x in report.findings] == ["jax.tree_map"] and report.guarded == 0


@pytest.mark.parametrize("guard", [
    "if hasattr(jax, 'tree_map'):\n    y = jax.tree_map(f, x)\n",
    "if jax.__version_info__ < (0, 6):\n    y = jax.tree_map(f, x)\n",
    "try:\n    y = jax.tree_map(f, x)\nexcept AttributeError:\n    y = jax.tree.map(f, x)\n",
])
def test_a_guard_that_tests_jax_still_guards(tmp_path, tl, guard):
    f = tmp_path / "m.py"
    f.write_text("import jax\n" + guard)
    report = scan([str(f)], NEW, tl)
    assert not report.findings and report.guarded == 1


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jaxcompat", "scan", *args], capture_output=True, text=True, cwd=ROOT)


def test_type_checking_imports_are_a_warning(tmp_path):
    (tmp_path / "m.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                   "    from jax.core import Jaxpr\n")
    run = _cli(str(tmp_path), "--jax", "0.12.0.1", "--format", "json")
    got = json.loads(run.stdout)["findings"]
    assert run.returncode == 0 and [f["level"] for f in got] == ["warning"] and "TYPE_CHECKING" in got[0]["message"]


def test_star_imports_of_jax_modules_are_resolved(tmp_path, tl):
    f = tmp_path / "m.py"
    f.write_text("from jax import *\nfrom jax.numpy import *\ny = tree_map(f, x)\nz = reshape(x, newshape=(2,))\n"
                 "def tree_flatten(x):\n    return x\nw = tree_flatten(1)\n")
    report = scan([str(f)], NEW, tl)
    assert sorted((x.line, x.name) for x in report.findings) == [(3, "jax.tree_map"), (4, "jax.numpy.reshape")]


def test_a_file_this_python_cannot_parse_is_bad_input(tmp_path):
    (tmp_path / "m.py").write_text("import jax\ndef f[T](x: T):\n    return jax.tree_map(x)\n")
    run = _cli(str(tmp_path / "m.py"), "--jax", "0.12.0.1")
    assert run.returncode == 2, run.stdout  # 084bcdf: a warning, exit 0
    if sys.version_info < (3, 12):
        assert "needs Python 3.12 or later" in run.stdout


def _cli_fix(tmp_path: Path, src: str, *args: str) -> tuple[str, subprocess.CompletedProcess]:
    f = tmp_path / "m.py"
    f.write_text(src)
    run = _cli(str(f), "--fix", *args)
    return f.read_text(), run


def test_a_fix_imports_the_submodule_its_new_chain_needs(tmp_path):
    # 758816f wrote `jax.extend.core.Primitive`, "1 fixed", exit 0: in jax 0.4.38 `import jax` does
    # not import jax.extend, and the fixed file raised AttributeError where the original ran
    got, run = _cli_fix(tmp_path, 'import jax\np = jax.core.Primitive("p")\n', "--jax", "0.4.38")
    assert got == 'import jax.extend.core\nimport jax\np = jax.extend.core.Primitive("p")\n', run.stdout
    assert run.returncode == 0 and "1 fixed" in run.stdout
    # on one line, the import stays on it: `import jax; import ...` would not be under the same statement otherwise
    got, _ = _cli_fix(tmp_path, 'if X: import jax; p = jax.core.Primitive("p")\n', "--jax", "0.4.38")
    assert got == 'if X: import jax.extend.core; import jax; p = jax.extend.core.Primitive("p")\n'
    # beside the import it hangs from, in its branch: it runs exactly when that one does
    got, _ = _cli_fix(tmp_path, "try:\n    import jax\nexcept ImportError:\n    jax = None\nP = jax.core.Primitive\n",
                      "--jax", "0.4.38")
    assert got == ("try:\n    import jax.extend.core\n    import jax\nexcept ImportError:\n    jax = None\n"
                   "P = jax.extend.core.Primitive\n")


@pytest.mark.parametrize("src, release, fixed", [
    # `import jax` imports jax.tree: nothing to add
    ("import jax\nx = jax.tree_map(f, y)\n", "0.4.38", "import jax\nx = jax.tree.map(f, y)\n"),
    # the file imports jax.extend already, and jax.extend imports jax.extend.core
    ("import jax\nimport jax.extend\nP = jax.core.Primitive\n", "0.4.38",
     "import jax\nimport jax.extend\nP = jax.extend.core.Primitive\n"),
    # jax.extend.core.primitives is imported by jax.extend.core only: import the deepest module
    ("import jax\np = jax.core.call_p\n", "0.4.38", "import jax.extend.core.primitives\nimport jax\n"
     "p = jax.extend.core.primitives.call_p\n"),
    # an import below the use comes too late for it
    ("import jax\nP = jax.core.Primitive\nimport jax.extend.core\n", "0.4.38",
     "import jax.extend.core\nimport jax\nP = jax.extend.core.Primitive\nimport jax.extend.core\n"),
])
def test_the_import_a_fix_needs_follows_what_the_file_and_jax_import(tmp_path, tl, src, release, fixed):
    got, report = _fix_at(tmp_path, tl, src, Target(release))
    assert got == fixed and len(report.fixed) == 1


def test_a_fix_that_needs_an_import_with_no_module_level_import_to_go_beside_is_withheld(tmp_path, tl):
    src = "def f():\n    import jax\n    return jax.core.Primitive\n"
    got, report = _fix_at(tmp_path, tl, src, Target("0.4.38"))
    assert got == src and not report.fixed
    (f,) = report.findings
    assert not f.fixable and "(not fixed: jax.extend.core.Primitive needs `import jax.extend.core`" in f.message


def test_which_submodules_importing_a_package_imports(tl):
    assert tl.loaded_with_parent("jax.tree", "0.4.26") and tl.loaded_with_parent("jax.numpy", "0.12.0.1")
    assert not any(tl.loaded_with_parent("jax.extend", r) for r in tl.releases)
    assert tl.loaded_with_parent("jax.extend.core", "0.4.38")
    assert not tl.loaded_with_parent("jax.ffi", "0.4.38") and tl.loaded_with_parent("jax.ffi", "0.6.2")
    assert not tl.loaded_with_parent("jax.export", "0.6.2") and tl.loaded_with_parent("jax.export", "0.12.0.1")


def test_only_imports_that_always_run_count_as_importing_a_submodule():
    sources = {"pkg": "import pkg.a as _a\nfrom pkg import b as b\nfrom . import c\nfrom .d import x\n"
                      "if X:\n    import pkg.e\ntry:\n    import pkg.f\nexcept ImportError:\n    import pkg.g\n"
                      "with ctx():\n    import pkg.h\nimport pkg._private\nfrom pkg import not_a_module\n",
               **{f"pkg.{m}": "" for m in ("a", "b", "c", "d", "e", "f", "g", "h", "_private")}}
    assert apitimeline._Reader(sources, pkg="pkg").api("pkg").loads == ["_private", "a", "b", "c", "d", "h"]


def _fix_at(tmp_path: Path, tl: Timeline, src: str, target: Target) -> tuple[str, object]:
    f = tmp_path / "m.py"
    f.write_text(src)
    report = scan([str(f)], target, tl, fix=True)
    return f.read_text(), report


def test_a_name_moved_out_of_a_one_line_branch_stays_in_it(tmp_path, tl):
    # 758816f put `from jax.tree import map as tree_map` on a line of its own at the `if`'s indent: unconditional
    src = ("import jax.numpy as jnp\ndef f(u):\n    if u: x = jnp.zeros(3); from jax import tree_map, jit\n"
           "    return 1\n")
    got, report = _fix_at(tmp_path, tl, src, Target("0.6.2"))
    assert got == src.replace("from jax import tree_map, jit",
                              "from jax import jit; from jax.tree import map as tree_map")
    assert len(report.fixed) == 1
    # a statement that starts its line keeps the moved name on a line of its own below it
    src = "if u:\n    from jax import tree_map, jit\n"
    got, _ = _fix_at(tmp_path, tl, src, Target("0.6.2"))
    assert got == "if u:\n    from jax import jit\n    from jax.tree import map as tree_map\n"
    src = "if u: \\\n    from jax import tree_map, jit\n"  # the `if`'s body on the next line, by a backslash
    got, _ = _fix_at(tmp_path, tl, src, Target("0.6.2"))
    assert got == "if u: \\\n    from jax import jit; from jax.tree import map as tree_map\n"


@pytest.mark.parametrize("src, fixed", [
    # 5bd6efe renamed the chain and left the import of jax.extend.ffi (gone in 0.8.0): the fixed
    # file still failed at that import. A module that moved whole is imported under its new name
    ("import jax.extend.ffi; _ = jax.extend.ffi.ffi_call\n", "import jax.ffi; _ = jax.ffi.ffi_call\n"),
    ("import numpy, jax.extend.ffi\n_ = jax.extend.ffi.pycapsule\n", "import numpy, jax.ffi\n_ = jax.ffi.pycapsule\n"),
    ("import jax.extend.ffi as m; _ = m.ffi_call\n", "import jax.ffi as m; _ = m.ffi_call\n"),
    ("if u:\n    from jax.extend.ffi import ffi_call, include_dir as d\n",
     "if u:\n    from jax.ffi import ffi_call, include_dir as d\n"),
])
def test_the_import_of_a_module_that_moved_whole_is_rewritten(tmp_path, tl, src, fixed):
    got, report = _fix_at(tmp_path, tl, src, Target("0.12.0.1", "0.6.2"))
    assert got == fixed and not report.findings


@pytest.mark.parametrize("src, why", [
    # the old import imported jax.extend on the way, the new one does not
    ("import jax.extend.ffi\n_ = jax.extend.ffi.ffi_call\nP = jax.extend.core.Primitive\n",
     "the file uses jax.extend.core.Primitive, which `import jax.extend.ffi` imports on the way"),
    ("import jax.extend.ffi as m\nf(m)\n", "m is used as the module jax.extend.ffi itself (line 2)"),
    ("import jax.extend.ffi as m\n_ = m.no_such_name\n", "jax.extend.ffi.no_such_name did not move to jax.ffi"),
    ("from jax.extend.ffi import ffi_call, no_such_name\n", "jax.extend.ffi.no_such_name did not move to jax.ffi"),
])
def test_the_import_of_a_moved_module_is_withheld_when_the_file_needs_more(tmp_path, tl, src, why):
    got, report = _fix_at(tmp_path, tl, src, Target("0.12.0.1", "0.6.2"))
    (f,) = [f for f in report.findings if f.name == "jax.extend.ffi" and f.line == 1]
    assert not f.fixable and f"(not fixed: the import of jax.extend.ffi is left to you: {why}" in f.message
    assert got == src  # nor is a chain through it renamed: the file would still fail at the import
    for chain in (f for f in report.findings if f.name.startswith("jax.extend.ffi") and f.line == 2):
        assert not chain.fixable and "the file would still fail at its import of jax.extend.ffi" in chain.message


def test_the_import_of_a_moved_module_the_target_has_no_new_home_for_is_left_alone(tmp_path, tl):
    src = "import jax.extend.ffi\n"  # jax 0.4.26 has neither jax.extend.ffi (0.4.29) nor jax.ffi (0.5.0)
    got, report = _fix_at(tmp_path, tl, src, Target("0.4.26"))
    (f,) = report.findings
    assert got == src and not f.fixable and "(not fixed: " in f.message


@pytest.mark.parametrize("src, fixed", [
    # the only `import jax` is for type checkers, or below the use, or in a branch: the fix wrote
    # `jax.ffi.ffi_call` with no `jax` bound there (NameError at 0.6.2)
    ("from typing import TYPE_CHECKING\nfrom jax.extend import ffi\nif TYPE_CHECKING:\n    import jax\n"
     "call = ffi.ffi_call\n",
     "from typing import TYPE_CHECKING\nimport jax\nfrom jax.extend import ffi\nif TYPE_CHECKING:\n    import jax\n"
     "call = ffi.ffi_call\n"),
    ("from jax.extend import ffi\ncall = ffi.ffi_call\nimport jax\n",
     "import jax\nfrom jax.extend import ffi\ncall = ffi.ffi_call\nimport jax\n"),
    ("from jax.extend import ffi\nif X:\n    import jax\ncall = ffi.ffi_call\n",
     "import jax\nfrom jax.extend import ffi\nif X:\n    import jax\ncall = ffi.ffi_call\n"),
    ("import jax as J\nfrom jax.extend import ffi\nJ = 3\ncall = ffi.ffi_call\n",  # J is no jax there
     "import jax as J\nimport jax\nfrom jax.extend import ffi\nJ = 3\ncall = ffi.ffi_call\n"),
    # bound above, surely: used as it is
    ("import jax\nfrom jax.extend import ffi\ncall = ffi.ffi_call\n",
     "import jax\nfrom jax.extend import ffi\ncall = jax.ffi.ffi_call\n"),
])
def test_a_fix_writes_jax_only_where_an_import_surely_bound_it_above(tmp_path, tl, src, fixed):
    got, report = _fix_at(tmp_path, tl, src, Target("0.6.2", "0.4.38"))
    assert len(report.fixed) == 1 and got == fixed.replace("call = ffi.ffi_call", "call = jax.ffi.ffi_call")


def test_setting_a_removed_attribute_is_no_use_of_it(tmp_path, tl):
    # the fix made `jax.core.Primitive = Mine` into `jax.extend.core.Primitive = Mine`: it patched jax's own class
    src = "import jax\nclass Mine: pass\njax.core.Primitive = Mine\n"
    got, report = _fix_at(tmp_path, tl, src, Target("0.6.2", "0.4.38"))
    assert got == src and report.findings == [] and report.fixed == []
    # `+=` and `del` read it first (AttributeError): said, never renamed; a use below the set is one
    src = "import jax\njax.core.Primitive += 1\ndel jax.core.Primitive\njax.core.Primitive.x = 1\n"
    got, report = _fix_at(tmp_path, tl, src, Target("0.6.2", "0.4.38"))
    assert [(f.line, f.fixable) for f in report.findings] == [(2, False), (3, False)] and len(report.fixed) == 1
    assert "written to here" in report.findings[0].message
    assert got.endswith("jax.core.Primitive += 1\ndel jax.core.Primitive\njax.extend.core.Primitive.x = 1\n")


def test_an_explicit_re_export_keeps_its_as(tmp_path, tl):
    src = "from jax.core import Primitive as Primitive\nfrom jax.core import Var as Var, jaxpr_as_fun\n"
    got, _ = _fix_at(tmp_path, tl, src, Target("0.6.2", "0.4.38"))
    assert "from jax.extend.core import Primitive as Primitive\n" in got
    assert "import Var as Var" in got

"""`scan --fix` as a property: over generated modules (form feeds, U+2028 and other characters
`str.splitlines` breaks at, CRLF, tabs, unicode, continuation lines, a BOM) the rewrite is
exactly the intended one, parses, and a second run changes nothing; and the check behind it
refuses an edit that would touch anything else."""

from __future__ import annotations

import ast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaxcompat.apihistory.apitimeline import Timeline
from jaxcompat.apihistory.scan import scan
from jaxcompat.apihistory.scanfix import Replace, apply, ast_lines, char_offset, line_starts
from jaxcompat.model.scan import Target

TARGET = Target("0.12.0.1", "0.4.30")
HEAD = "import jax\nimport jax.numpy as jnp\n"
PIECES = [  # (a statement as written, as --fix must leave it); line breaks are "\n", made CRLF below
    ("x = jax.tree_map(f, y)", "x = jax.tree.map(f, y)"),
    ("y = jnp.array(a, None, False)", "y = jnp.array(a, None, copy=False)"),
    ("z = (jax\n    .tree_map)", "z = (jax\n    .tree_map)"),  # a chain over two lines: reported, not rewritten
    ("w = jax.tree_map(\\\n  f, y)", "w = jax.tree.map(\\\n  f, y)"),
    ("if True:\n\tv = jax.tree_map(f, y)", "if True:\n\tv = jax.tree.map(f, y)"),
    ("u = jnp.array(a,\n  # kept\n  None, False)", "u = jnp.array(a,\n  # kept\n  None, copy=False)"),
    ("s = 'jax.tree_map \u00e9\u4e2d'  # jax.tree_map", "s = 'jax.tree_map \u00e9\u4e2d'  # jax.tree_map"),
    ("t = jax.tree_map(f, '\u2028')", "t = jax.tree.map(f, '\u2028')"),
    # `import jax` does not import jax.extend: the fix imports it, just before `import jax`
    ("p = jax.core.Primitive", "p = jax.extend.core.Primitive"),
]
ADDED = {"p = jax.core.Primitive": "import jax.extend.core"}  # the import a piece's fix adds above HEAD
ODD = st.sampled_from(["\x0c", "\u2028", "\u2029", "\x1c", "\x1d", "\x1e", "\x85", "\x0b", "\t", "\u00e9",
                       "\U0001f600"])
COMMENT = st.lists(st.one_of(ODD, st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"))), max_size=8).map(
    lambda cs: "# " + "".join(cs))


@st.composite
def modules(draw) -> tuple[str, str]:
    before, after = [HEAD.rstrip("\n")], [HEAD.rstrip("\n")]
    for _ in range(draw(st.integers(1, 7))):
        if draw(st.booleans()):
            c = draw(COMMENT)
            before.append(c)
            after.append(c)
        src, fixed = draw(st.sampled_from(PIECES))
        if draw(st.booleans()):  # a form feed at the start of a line, where Python allows it
            src, fixed = "\x0c" + src, "\x0c" + fixed
        before.append(src)
        after.append(fixed)
        if src.lstrip("\x0c") in ADDED and ADDED[src.lstrip("\x0c")] not in after:
            after.insert(0, ADDED[src.lstrip("\x0c")])
    return "\n".join(before) + "\n", "\n".join(after) + "\n"


@pytest.fixture(scope="module")
def tl() -> Timeline:
    return Timeline.load()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(module=modules(), crlf=st.booleans(), bom=st.booleans())
def test_fix_is_exactly_the_intended_rewrite(tmp_path_factory, tl, module, crlf, bom):
    src, want = module
    if crlf:
        src, want = src.replace("\n", "\r\n"), want.replace("\n", "\r\n")
    head = b"\xef\xbb\xbf" if bom else b""
    f = tmp_path_factory.mktemp("gen") / "m.py"
    f.write_bytes(head + src.encode("utf-8"))
    first = scan([str(f)], TARGET, tl, fix=True)
    got = f.read_bytes()
    assert got == head + want.encode("utf-8"), (first.not_fixed, first.findings)
    assert not first.not_fixed
    ast.parse(got.decode("utf-8-sig"))
    second = scan([str(f)], TARGET, tl, fix=True)
    assert f.read_bytes() == got and not second.fixed


def test_ast_lines_and_offsets():
    text = "a = 1  # \x0c \u2028 x\r\nb = 2\rc = '\u00e9'; d = 3\n"
    assert ast_lines(text) == ["a = 1  # \x0c \u2028 x\r\n", "b = 2\r", "c = '\u00e9'; d = 3\n"]
    tree = ast.parse(text)
    d = tree.body[-1].targets[0]
    assert text[char_offset(text, line_starts(text), d.lineno, d.col_offset):].startswith("d = 3")
    with pytest.raises(ValueError):
        char_offset(text, line_starts(text), 3, 6)  # inside the two bytes of é


def test_an_edit_that_does_not_match_the_file_is_refused():
    text = "import jax\n# \x0c\nx = jax.tree_map(f, y)\n"
    wrong = Replace(2, 4, 2, 16, "jax.tree.map", "jax.tree_map")  # where splitlines would have put it
    made = apply(text, [wrong])
    assert made.text == text and made.done == [False] and "does not match" in made.refused
    right = Replace(3, 4, 3, 16, "jax.tree.map", "jax.tree_map")
    assert apply(text, [right]).text == text.replace("tree_map", "tree.map")


def test_an_edit_that_changes_other_tokens_or_breaks_the_syntax_is_refused():
    text = "import jax\nx = jax.tree_map(f, y)  # note\n"
    mid_token = Replace(2, 6, 2, 10, "y.tr", "x.tr")  # `jax` -> `jay`: half a name is no token of its own
    made = apply(text, [mid_token])
    assert made.text == text and "straddles" in made.refused
    broken = Replace(2, 4, 2, 16, "jax.tree.map(", "jax.tree_map")
    assert "would not parse" in apply(text, [broken]).refused

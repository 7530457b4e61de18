"""The parameters of a package's public callables, read from a release's source with ``ast``.

A public name (``jax.numpy.array``) is followed through the imports that re-export it to the
``def`` or ``class`` that defines it (``jax/_src/numpy/lax_numpy.py``); a class is called through
its ``__init__`` (or ``__new__``, or the first base that has one), and the public methods of a
public class (``jax.Array.reshape``) are read too. What cannot be read statically is *unknown*,
never a change: a name bound by an assignment that is not a plain alias (``f = partial(g, ...)``),
a class with neither constructor nor readable base, a ``@dataclass``, a decorator that is known to
replace the signature.

A signature is kept as one short string, the way Python writes it without annotations and default
values: ``"object,dtype=,*args,copy=,order=,ndmin=,device=,out_sharding="`` (``=`` marks a
default, ``/`` ends the positional-only parameters, a bare ``*`` starts the keyword-only ones,
``*name``/``**name`` are the catch-alls). :class:`Params` reads it back and says whether a call
binds (:meth:`Params.bind`), as Python would, from what the call site shows.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass

from jaxcompat.model.vocab import BindProblem

# decorators whose result has another signature than the function they wrap
_REPLACING = {"property", "cached_property", "overload", "abstractproperty"}
_OPAQUE_CLASS_DECORATORS = {"dataclass", "dataclasses.dataclass", "register_dataclass"}


# ---------------------------------------------------------------- one signature


@dataclass(frozen=True)
class Param:
    name: str
    default: bool


@dataclass(frozen=True)
class Params:
    """A callable's parameters, as a call sees them (``self``/``cls`` already dropped)."""

    posonly: tuple[Param, ...] = ()
    positional: tuple[Param, ...] = ()  # positional-or-keyword
    varargs: str = ""
    kwonly: tuple[Param, ...] = ()
    varkw: str = ""

    @classmethod
    def parse(cls, text: str) -> Params:
        posonly: list[Param] = []
        pos: list[Param] = []
        kw: list[Param] = []
        varargs = varkw = ""
        seen_star = False
        for part in filter(None, text.split(",")):
            if part == "/":
                posonly, pos = pos, []
            elif part == "*":
                seen_star = True
            elif part.startswith("**"):
                varkw = part[2:]
            elif part.startswith("*"):
                varargs, seen_star = part[1:], True
            else:
                p = Param(part.rstrip("="), part.endswith("="))
                (kw if seen_star else pos).append(p)
        return cls(tuple(posonly), tuple(pos), varargs, tuple(kw), varkw)

    def text(self) -> str:
        def one(p: Param) -> str:
            return p.name + ("=" if p.default else "")

        out = [one(p) for p in self.posonly] + (["/"] if self.posonly else [])
        out += [one(p) for p in self.positional]
        if self.varargs:
            out.append("*" + self.varargs)
        elif self.kwonly:
            out.append("*")
        out += [one(p) for p in self.kwonly]
        if self.varkw:
            out.append("**" + self.varkw)
        return ",".join(out)

    @property
    def slots(self) -> tuple[Param, ...]:
        """The parameters a positional argument can fill, in order."""
        return self.posonly + self.positional

    def names(self) -> set[str]:
        return {p.name for p in self.positional + self.kwonly}

    def bind(self, n_pos: int, keywords: list[str], star: bool = False, dstar: bool = False) -> Bound:
        """Whether a call with ``n_pos`` positional arguments and these keywords binds, as Python
        decides it (``star``/``dstar``: the call also splats ``*x``/``**x``: what those hold is
        unknown, so nothing they could supply is called missing)."""
        slots = self.slots
        if n_pos > len(slots) and not self.varargs and not star:
            return Bound(BindProblem.TOO_MANY_POSITIONAL, index=len(slots))
        filled = {p.name for p in slots[:n_pos]}
        names = self.names()
        posonly = {p.name for p in self.posonly}
        into_varkw = 0
        for k in keywords:
            if k not in names:  # unknown, or positional-only: either lands in **kwargs, if there is one
                if self.varkw:
                    into_varkw += 1
                    continue
                problem = BindProblem.POSITIONAL_ONLY_BY_KEYWORD if k in posonly else BindProblem.UNKNOWN_KEYWORD
                return Bound(problem, name=k)
            if k in filled:
                return Bound(BindProblem.MULTIPLE_VALUES, name=k)
        given = filled | (set(keywords) & names)  # a positional-only name by keyword lands in **kwargs
        if not dstar:
            for i, p in enumerate(slots):
                if not p.default and p.name not in given and not (star and i >= n_pos):
                    return Bound(BindProblem.MISSING_REQUIRED, name=p.name)
            for p in self.kwonly:
                if not p.default and p.name not in given:
                    return Bound(BindProblem.MISSING_REQUIRED, name=p.name)
        into_varargs = max(0, n_pos - len(slots)) if self.varargs else 0
        return Bound(None, into_varargs=into_varargs, into_varkw=into_varkw)


@dataclass(frozen=True)
class Bound:
    problem: BindProblem | None
    name: str = ""  # the keyword or parameter the problem is about
    index: int = -1  # TOO_MANY_POSITIONAL: the first positional argument with no slot (0-based)
    into_varargs: int = 0  # positional arguments that land in *args
    into_varkw: int = 0  # keywords that land in **kwargs (forwarded somewhere: whether they are taken is unknown)

    @property
    def ok(self) -> bool:
        return self.problem is None


def of_function(node: ast.FunctionDef | ast.AsyncFunctionDef, method: bool = False) -> str | None:
    """A ``def``'s signature text; None when its decorators replace it. ``method``: drop the first
    parameter (``self``/``cls``) unless it is a ``@staticmethod``."""
    decorators = {_decorator_name(d) for d in node.decorator_list}
    if decorators & _REPLACING or any(d.endswith(".setter") or d.endswith(".getter") for d in decorators):
        return None
    a = node.args
    posonly = [Param(x.arg, False) for x in a.posonlyargs]
    pos = [Param(x.arg, False) for x in a.args]
    every = posonly + pos
    for i in range(len(a.defaults)):  # defaults belong to the last positional parameters
        j = len(every) - len(a.defaults) + i
        every[j] = Param(every[j].name, True)
    posonly, pos = every[: len(posonly)], every[len(posonly):]
    if method and "staticmethod" not in decorators:
        if posonly:
            posonly = posonly[1:]
        elif pos:
            pos = pos[1:]
        else:
            return None  # def f(*args): self comes through *args: unreadable as a method
    kw = [Param(x.arg, d is not None) for x, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)]
    return Params(tuple(posonly), tuple(pos), a.vararg.arg if a.vararg else "", tuple(kw),
                  a.kwarg.arg if a.kwarg else "").text()


def warns_when_called(node: ast.AST) -> str:
    """The message of a function that warns of its own deprecation before anything else it does
    (``def static_field(**kw): warnings.warn("`equinox.static_field` is deprecated ...")``), or ""."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return ""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    if not body or not isinstance(body[0], ast.Expr) or not isinstance(body[0].value, ast.Call):
        return ""
    call = body[0].value
    func = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    if func != "warn" or not call.args:
        return ""
    parts = [call.args[0]] if not isinstance(call.args[0], ast.JoinedStr) else call.args[0].values
    text = "".join(p.value for p in parts if isinstance(p, ast.Constant) and isinstance(p.value, str))
    return " ".join(text.split()) if "deprecat" in text.lower() else ""


def _decorator_name(d: ast.expr) -> str:
    if isinstance(d, ast.Call):
        d = d.func
    parts = []
    while isinstance(d, ast.Attribute):
        parts.append(d.attr)
        d = d.value
    if isinstance(d, ast.Name):
        parts.append(d.id)
    return ".".join(reversed(parts))


# ---------------------------------------------------------------- a release's callables


class NewerSyntax(RuntimeError):
    """A release's source uses syntax this Python cannot parse: reading on would call its names gone."""


def parse(mod: str, source: str) -> ast.Module:
    """``ast.parse``, or :class:`NewerSyntax` naming the module and the Python needed: jax 0.12 writes
    ``def f[T](x: T)`` (Python 3.12), which Python 3.11 cannot parse; a module read as unparsable
    would look empty, and everything it exports removed."""
    try:
        return ast.parse(source)
    except SyntaxError as e:
        raise NewerSyntax(
            f"{mod} (line {e.lineno}) does not parse on Python {sys.version_info[0]}.{sys.version_info[1]}: "
            f"{e.msg} (fix: read it with a newer Python: `nox -s timeline` runs the newest one)") from None


class Callables:
    """Every public callable of one release: ``{"jax.numpy.array": "object,dtype=,..."}``.

    ``sources``: ``{module: source}`` of the whole package (private modules too: that is where the
    definitions are); ``public``: ``{module: [public names it exports]}``."""

    def __init__(self, sources: dict[str, str], trees: dict[str, ast.Module] | None = None):
        self.sources = sources
        self.trees = trees if trees is not None else {}
        self._bindings: dict[str, dict[str, tuple]] = {}

    def tree(self, mod: str) -> ast.Module | None:
        if mod not in self.sources:
            return None
        if mod not in self.trees:
            self.trees[mod] = parse(mod, self.sources[mod])
        return self.trees[mod]

    def bindings(self, mod: str) -> dict[str, tuple]:
        """name -> ("def", node) | ("class", node) | ("from", module, name) | ("alias", name)."""
        if mod in self._bindings:
            return self._bindings[mod]
        out: dict[str, tuple] = {}
        self._bindings[mod] = out
        tree = self.tree(mod)
        if tree is None:
            return out
        is_pkg = any(k.startswith(mod + ".") for k in self.sources)

        def visit(body: list[ast.stmt]) -> None:
            for st in body:
                if isinstance(st, ast.If):
                    visit(st.body)
                    visit(st.orelse)
                elif isinstance(st, ast.Try):
                    visit(st.body)
                elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[st.name] = ("def", st)
                elif isinstance(st, ast.ClassDef):
                    out[st.name] = ("class", st)
                elif isinstance(st, ast.ImportFrom):
                    src = absolute_module(mod, is_pkg, st.module, st.level)
                    for a in st.names:
                        if a.name != "*":
                            out[a.asname or a.name] = ("from", src, a.name)
                elif isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                    name, value = st.targets[0].id, st.value
                    if isinstance(value, ast.Name):
                        out[name] = ("alias", value.id)
                    elif isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
                        out[name] = ("attr", value.value.id, value.attr)  # module.f re-bound
                    else:
                        out[name] = ("other",)  # f = partial(...), f = jit(g): bound, not readable
                elif isinstance(st, ast.Assign):
                    for t in st.targets:
                        for n in ast.walk(t):
                            if isinstance(n, ast.Name):
                                out[n.id] = ("other",)
                elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                    out[st.target.id] = ("other",)

        visit(tree.body)
        return out

    def definition(self, mod: str, name: str, depth: int = 0) -> tuple[str, ast.AST] | None:
        """(module, the def/class node) that ``mod.name`` is bound to, following re-exports."""
        if depth > 12:
            return None
        b = self.bindings(mod).get(name)
        if b is None:
            return None
        if b[0] in ("def", "class"):
            return mod, b[1]
        if b[0] == "from":
            src, orig = b[1], b[2]
            if src not in self.sources:
                return None
            return self.definition(src, orig, depth + 1)
        if b[0] == "alias":
            return None if b[1] == name else self.definition(mod, b[1], depth + 1)
        if b[0] == "attr":  # `f = _mod.g` where `_mod` is an imported jax module
            target = self.bindings(mod).get(b[1])
            if target and target[0] == "from":
                sub = f"{target[1]}.{target[2]}"
                if sub in self.sources:
                    return self.definition(sub, b[2], depth + 1)
            return None
        return None

    def constructor(self, mod: str, cls: ast.ClassDef, depth: int = 0) -> str | None:
        if depth > 8 or {_decorator_name(d) for d in cls.decorator_list} & _OPAQUE_CLASS_DECORATORS:
            return None
        for st in cls.body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and st.name == "__init__":
                return of_function(st, method=True)
        for st in cls.body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and st.name == "__new__":
                return of_function(st, method=True)
        for base in cls.bases:
            if isinstance(base, ast.Name):
                found = self.definition(mod, base.id)
                if found and isinstance(found[1], ast.ClassDef):
                    return self.constructor(found[0], found[1], depth + 1)
            return None  # a base from outside (NamedTuple, Enum, a C extension): not readable
        return None

    def read(self, public: dict[str, list[str]]) -> dict[str, dict[str, str]]:
        """``{module: {name or Class.method: signature}}`` for the public names given."""
        every: dict[str, dict[str, str]] = {}
        for mod, names in public.items():
            out = every.setdefault(mod, {})
            for name in names:
                found = self.definition(mod, name)
                if found is None:
                    continue
                where, node = found
                qual = name
                if isinstance(node, ast.ClassDef):
                    sig = self.constructor(where, node)
                    for st in node.body:
                        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and not st.name.startswith("_"):
                            msig = of_function(st, method=True)
                            if msig is not None:
                                out[f"{qual}.{st.name}"] = msig
                else:
                    sig = of_function(node)
                if sig is not None:
                    out[qual] = sig
        return every


def absolute_module(mod: str, is_pkg: bool, target: str | None, level: int) -> str:
    """The module a (possibly relative) ``from target import`` inside ``mod`` names."""
    if not level:
        return target or ""
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join(base + ([target] if target else []))


_TOP = re.compile(
    r"^(?:(?:async[ \t]+)?def[ \t]+(\w+)|class[ \t]+(\w+)|(\w+)[ \t]*(?::[^=\n]*)?=(?!=)"
    r"|from[ \t]+[\w.]+[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)|import[ \t]+([^\n]*))",
    re.M)


def top_names(source: str) -> set[str]:
    """The names a module binds in its statements at column 0 (defs, classes, assignments,
    imports), read from the text: fast enough for every module of every release, where ``ast``
    would parse generated files of megabytes. What an ``if``/``try`` binds is not seen."""
    out: set[str] = set()
    for m in _TOP.finditer(source):
        d, c, a, frm, imp = m.groups()
        if d or c or a:
            out.add(d or c or a)
        else:
            for part in (frm or imp or "").strip("()").replace("\\\n", " ").split("#")[0].split(","):
                words = part.split()
                if not words:
                    continue
                name = words[-1] if len(words) == 3 and words[1] == "as" else words[0]
                out.add(name.split(".")[0] if imp and len(words) == 1 else name)
    return out

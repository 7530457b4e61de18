"""Python's scopes, for scan: which uses of a name the jax imports bind really are jax.

``def f(jax): return jax.tree_map(1)`` or ``[jax.tree_map(g, x) for jax in things]`` use a
parameter or a comprehension variable, not the module: a name is looked up as Python looks it up
(the innermost function, lambda or comprehension that binds it, a class body only for the code
directly in it, then the module). Only the names scan follows are tracked.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_SCOPES = (*_FUNCS, *_COMPS, ast.ClassDef)

# a scope: (is a class, {name: bound by a jax import}); a chain: innermost first, the module last
Chain = tuple


@dataclass
class Scopes:
    module_jax: dict[str, bool] = field(default_factory=dict)  # names the module scope binds
    chains: dict[int, Chain] = field(default_factory=dict)  # id(Name) -> the scopes it is looked up in
    imports_in_module: set[int] = field(default_factory=set)  # id() of the import statements at module scope

    def is_jax(self, node: ast.Name) -> bool:
        """False when a local binding that no jax import made hides the module's name at ``node``."""
        return self.lookup(node, node.id)

    def lookup(self, node: ast.AST, name: str) -> bool:
        """Does ``name``, used where ``node`` is, reach the module's binding (or a jax import)?"""
        for i, (is_class, bound) in enumerate(self.chains.get(id(node), ())):
            if is_class and i > 0:
                continue  # a class body's names are not seen from the functions inside it
            if name in bound:
                return bound[name]
        return True


def scopes(tree: ast.Module, names: set[str], is_jax_import) -> Scopes:
    """The scopes of ``tree`` for ``names``; ``is_jax_import(node)``: an import statement of jax."""
    out = Scopes()
    todo = [(tree, ())]
    while todo:
        node, outer = todo.pop()
        roots, params = _inner(node)
        bound, uses, nested, imports = _collect(roots, names, is_jax_import)
        for p in params:
            if p in names:
                bound[p] = False
        chain = ((isinstance(node, ast.ClassDef), bound), *outer)
        if node is tree:
            out.module_jax, out.imports_in_module = bound, {id(i) for i in imports}
            chain = ()  # the module's own names: as the imports bind them
        for use in uses:
            out.chains[id(use)] = chain
        todo += [(n, chain) for n in nested]
    return out


def _inner(node: ast.AST) -> tuple[list[ast.AST], list[str]]:
    """What runs inside ``node``'s own scope, and the names its parameters bind."""
    if isinstance(node, ast.Module):
        return list(node.body), []
    if isinstance(node, _FUNCS):
        a = node.args
        params = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if x is not None]
        return (list(node.body) if isinstance(node.body, list) else [node.body]), params
    if isinstance(node, ast.ClassDef):
        return list(node.body), []
    gens = node.generators
    elts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
    return [*elts, *(g.target for g in gens), *(i for g in gens for i in g.ifs), *(g.iter for g in gens[1:])], []


def _outer(node: ast.AST) -> list[ast.AST]:
    """What a nested scope's statement runs in the scope around it (decorators, defaults,
    annotations, bases, the first iterable of a comprehension)."""
    if isinstance(node, _COMPS):
        return [node.generators[0].iter]
    out = list(getattr(node, "decorator_list", []))
    if isinstance(node, ast.ClassDef):
        return out + node.bases + [k.value for k in node.keywords]
    a = node.args
    out += [d for d in (*a.defaults, *a.kw_defaults) if d is not None]
    if not isinstance(node, ast.Lambda):
        out += [x.annotation for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg)
                if x is not None and x.annotation is not None]
        out += [node.returns] if node.returns else []
    return out


def _collect(roots: list[ast.AST], names: set[str], is_jax_import):
    """The names of ``names`` one scope binds ({name: by a jax import}), the uses of them in it,
    the scopes nested in it, and its import statements."""
    bound: dict[str, bool] = {}
    uses: list[ast.Name] = []
    nested: list[ast.AST] = []
    imports: list[ast.AST] = []
    declared: set[str] = set()
    stack = list(roots)
    while stack:
        n = stack.pop()
        t = type(n)
        if t is ast.Name:
            if n.id in names:
                uses.append(n)
                if type(n.ctx) is not ast.Load:
                    bound.setdefault(n.id, False)
            continue
        if isinstance(n, _SCOPES):
            nested.append(n)
            stack += _outer(n)
            if t is not ast.Lambda and not isinstance(n, _COMPS) and n.name in names:
                bound.setdefault(n.name, False)
            continue
        if t is ast.Import or t is ast.ImportFrom:
            imports.append(n)
            jax = is_jax_import(n)
            for a in n.names:
                local = a.asname or a.name.split(".")[0]
                if local in names:
                    bound[local] = bound.get(local, False) or jax
        elif t is ast.Global or t is ast.Nonlocal:
            declared.update(n.names)
        elif t is ast.ExceptHandler or t is ast.MatchAs or t is ast.MatchStar:
            if n.name in names:
                bound.setdefault(n.name, False)
        elif t is ast.MatchMapping and n.rest in names:
            bound.setdefault(n.rest, False)
        stack.extend(ast.iter_child_nodes(n))
    for d in declared:
        bound.pop(d, None)
    return bound, uses, nested, imports

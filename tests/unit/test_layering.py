"""The import layering a reader should see: keys -> key sets -> TLS -> schema -> registry -> library.

Read from the source with ``ast``: every ``from .x import`` / ``from . import x``, at module level
or inside a function (a late import is a dependency too), except under ``if TYPE_CHECKING``.
The registry's layers import nothing above them, not even late; nothing in the package forms a
circle at import time. The layers above the library (tensors, autograd, the Python key, the
public face) register into the registry, as backends do.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

import dispatchcore

ROOT = pathlib.Path(dispatchcore.__file__).parent

# bottom to top; a module may import its own layer and the ones below
LAYERS: list[tuple[str, ...]] = [
    ("errors", "dtypes", "layouts", "keys", "display", "plugins"),
    ("keyset",),
    ("tls",),
    ("schema",),
    ("resolution", "dumps", "operator", "dispatcher", "ops"),
    ("_library",),
]
RANK = {f"dispatchcore.{name}": rank for rank, names in enumerate(LAYERS) for name in names}


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in ROOT.rglob("*.py")}


def _resolve(name: str) -> str:
    """A name imported from the package, as the module that holds it."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _imports(module: str) -> tuple[set[str], set[str]]:
    """(module-level, late) package modules that ``module`` imports."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    top: set[str] = set()
    late: set[str] = set()

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue  # annotations only: never executed
            if isinstance(child, ast.ImportFrom) and child.level:
                base = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                target = ".".join(base + ([child.module] if child.module else []))
                names = [target] if child.module else [f"{target}.{a.name}" for a in child.names]
                (late if in_function else top).update(_resolve(n) for n in names)
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in child.names] if isinstance(child, ast.Import) else [child.module or ""]
                own = [_resolve(n) for n in names if n.startswith("dispatchcore")]
                (late if in_function else top).update(own)
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(path.read_text()), False)
    return top - {module}, late - {module}


IMPORTS = {m: _imports(m) for m in MODULES}


def test_the_layer_table_names_real_modules():
    assert set(RANK) <= set(MODULES)


@pytest.mark.parametrize("module", sorted(RANK))
def test_a_registry_layer_imports_nothing_above_it_not_even_late(module):
    top, late = IMPORTS[module]
    above = sorted(m for m in top | late if RANK.get(m, len(LAYERS)) > RANK[module])
    assert not above, f"{module} imports {above}, which sit above it"


def test_the_registry_imports_neither_tensors_nor_modes():
    registry = [m for m, rank in RANK.items() if rank <= RANK["dispatchcore._library"]]
    for module in registry:
        top, late = IMPORTS[module]
        assert not {"dispatchcore.tensor", "dispatchcore.modes", "dispatchcore.subclass"} & (top | late), module


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import circle in ``edges`` (its modules, in order), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def walk(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(edges.get(m, ())):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state and (found := walk(n)):
                return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(edges):
        if m not in state and (found := walk(m)):
            return found
    return None


def test_no_module_level_import_circle_in_the_package():
    # a package's __init__ runs before its submodules, so an edge into a package's own
    # submodule from its __init__ is the package importing its parts, not a circle
    edges = {m: {n for n in top if not n.startswith(m + ".")} for m, (top, _) in IMPORTS.items()}
    assert _cycle(edges) is None, " -> ".join(_cycle(edges) or [])


def test_the_registry_layers_have_no_circle_even_through_late_imports():
    edges = {m: (IMPORTS[m][0] | IMPORTS[m][1]) & set(RANK) for m in RANK}
    assert _cycle(edges) is None, " -> ".join(_cycle(edges) or [])


def test_the_cycle_finder_finds_a_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None

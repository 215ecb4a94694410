"""Packaging invariants: every package ships, backends stay behind the public API."""

from __future__ import annotations

import ast
import pathlib
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _listed_packages() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return set(config["tool"]["setuptools"]["packages"])


def _packages_on_disk() -> set[str]:
    found = set()
    for top, name in (("dispatchcore", "dispatchcore"), ("backends", "dispatchcore_backends")):
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / top)
            found.add(".".join([name, *rel.parts]) if rel.parts else name)
    return found


def test_every_package_directory_is_listed_in_pyproject():
    """An unlisted subpackage is silently missing from the wheel (it still works editable)."""
    assert _packages_on_disk() <= _listed_packages()


def test_listed_packages_exist():
    assert _listed_packages() <= _packages_on_disk()


def _imports(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_core_never_imports_the_backends():
    for path in (ROOT / "dispatchcore").rglob("*.py"):
        assert not any(n.startswith(("dispatchcore_backends", "backends")) for n in _imports(path)), path


def test_backends_use_only_dispatchcore_public_modules():
    allowed = {"dispatchcore", "dispatchcore.tensor", "dispatchcore.dtypes", "dispatchcore.shapes",
               "dispatchcore.native"}  # native.families: the backends' family modules
    for path in (ROOT / "backends").rglob("*.py"):
        used = {n for n in _imports(path) if n.startswith("dispatchcore") and
                not n.startswith(("dispatchcore_backends", "dispatchcore.native."))}  # the declarations
        assert used <= allowed, (path, used - allowed)


def test_entry_points_name_the_backends():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    eps = config["project"]["entry-points"]["dispatchcore.backends"]
    assert eps == {"cpu": "dispatchcore_backends.cpu:register", "meta": "dispatchcore_backends.meta:register",
                   "cuda": "dispatchcore_backends.cuda:register"}

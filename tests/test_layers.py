"""Dependencies point down: core/, kernels/ and the CLI never import Qt, and nothing imports
CuPy at module level (it is optional and slow to import)."""

import ast
from pathlib import Path

import explorer

PACKAGE = Path(explorer.__file__).parent
QT = {"PySide6", "pyqtgraph", "shiboken6"}
QT_FREE = [*sorted((PACKAGE / "core").rglob("*.py")), *sorted((PACKAGE / "kernels").rglob("*.py")),
           *sorted((PACKAGE / "commands").glob("*.py")),
           PACKAGE / "paths.py", PACKAGE / "app.py"]


def imported_roots(tree: ast.AST, top_level_only: bool) -> set[str]:
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    roots = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_core_kernels_and_cli_do_not_import_qt():
    assert len(QT_FREE) > 10
    for path in QT_FREE:
        roots = imported_roots(ast.parse(path.read_text()), top_level_only=False)
        assert not roots & QT, f"{path.relative_to(PACKAGE)} imports {roots & QT}"


def test_core_does_not_import_the_ui():
    for path in (PACKAGE / "core").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("explorer.ui", "explorer.app")), path


def test_cupy_is_never_imported_at_module_level():
    for path in PACKAGE.rglob("*.py"):
        roots = imported_roots(ast.parse(path.read_text()), top_level_only=True)
        assert "cupy" not in roots and "cupyx" not in roots, path


def test_modules_and_functions_stay_small():
    """docs/architecture.md: a module over ~400 lines is a sign to split; no function over 60 lines (form
    builders included: they loop over the parameter table)."""
    long_modules, long_functions = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > 400:
            long_modules.append(path.relative_to(PACKAGE))
        functions = [n for n in ast.walk(ast.parse(text))
                     if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        long_functions += [f"{path.relative_to(PACKAGE)}:{n.name}" for n in functions
                           if n.end_lineno - n.lineno >= 60]
    assert not long_modules and not long_functions

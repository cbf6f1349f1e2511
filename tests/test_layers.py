"""Dependencies point one way: cli.py -> dsstar_lake -> index. Read from the source (ast), lazy imports included.

A node of the graph is a subpackage (dsstar_lake/agent, index/profilers, ...) or a module that sits directly in
dsstar_lake/ or index/ (lake, catalog, ...): the folders' own top-level modules are separate floors, so lake.py
is not in a cycle merely because another module shares its folder.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from conftest import REPO

TOP = ("cli", "dsstar_lake", "index")
# Cycles that exist today through imports made inside functions or under TYPE_CHECKING; delete one here when it
# goes. Add none.
KNOWN_CYCLES: set[frozenset[str]] = set()


def project_modules() -> dict[str, Path]:
    """Return every module of the three top-level packages by dotted name."""
    found = {"cli": REPO / "cli.py"}
    for top in TOP[1:]:
        for path in sorted((REPO / top).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = project_modules()
# Installed, the folders index/ and cli.py are the packages dslake_index and dslake_cli (pyproject.toml); the graph
# names nodes by folder.
INSTALLED_AS = {"dslake_index": "index", "dslake_cli.cli": "cli"}


def _folder_name(module: str) -> str:
    for installed, folder in INSTALLED_AS.items():
        if module == installed or module.startswith(installed + "."):
            return folder + module[len(installed):]
    return module


def imported(name: str, path: Path, *, module_level_only: bool = False) -> Iterator[tuple[str, int]]:
    """Yield (project module, line) for each import in a module (at import time only, if asked)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    nodes = _module_level(tree.body) if module_level_only else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                stem = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(stem + ([node.module] if node.module else []))
            submodules = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES]
            targets = submodules + ([base] if len(submodules) < len(node.names) else [])
        else:
            continue
        for target in map(_folder_name, targets):
            while target and target not in MODULES and "." in target:  # `import index.x.y` names index.x.y
                target = target.rpartition(".")[0]
            if target in MODULES and target != name:
                yield target, node.lineno


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements run when the module is imported (not function bodies, not `if TYPE_CHECKING:`)."""
    for node in body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from _module_level(node.orelse)
        elif isinstance(node, ast.If | ast.Try):
            for block in (node.body, node.orelse, getattr(node, "finalbody", []),
                          *[h.body for h in getattr(node, "handlers", [])]):
                yield from _module_level(block)
        else:
            yield node


def node_of(module: str) -> str:
    """The graph node of a module: its subpackage, or itself when it sits directly in a top-level folder."""
    parts = module.split(".")
    if len(parts) >= 2 and (REPO / parts[0] / parts[1]).is_dir():
        return ".".join(parts[:2])
    return module


def cycles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components with more than one node (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def graph(key, *, module_level_only: bool = False) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        for target, _ in imported(name, path, module_level_only=module_level_only):
            if key(name) != key(target):
                edges.setdefault(key(name), set()).add(key(target))
    return edges


def test_index_imports_nothing_above_it():
    upward = [f"{path.relative_to(REPO)}:{line} imports {target}"
              for name, path in MODULES.items() if name.split(".")[0] == "index"
              for target, line in imported(name, path) if target.split(".")[0] != "index"]
    assert not upward, "index/ knows nothing of the agent or the CLI:\n" + "\n".join(upward)


FACADE = ("dsstar_lake", "dsstar_lake.lake")  # the package re-exports Lake, so importing it is importing the facade
# The front doors beside cli.py serve an opened Lake, so they may name it (for typing); nothing below them may.
ABOVE_THE_FACADE = ("dsstar_lake.web", "dsstar_lake.mcp.server")


def _above_the_facade(name: str) -> bool:
    return any(name == door or name.startswith(door + ".") for door in ABOVE_THE_FACADE)


def test_nothing_below_the_facade_imports_it():
    """Use cases get what they need from the run setup (dsstar_lake/runs/setup.py), never from Lake."""
    upward = [f"{path.relative_to(REPO)}:{line} imports {target}"
              for name, path in MODULES.items() if name.split(".")[0] in ("dsstar_lake", "index")
              and name not in FACADE and not _above_the_facade(name)
              for target, line in imported(name, path) if target in FACADE]
    assert not upward, "only cli.py (and tests) import the Lake facade:\n" + "\n".join(upward)


SQL = re.compile(r"\b(SELECT\b.*\bFROM|INSERT\b.*\bINTO|UPDATE\b.*\bSET|DELETE\s+FROM)\b", re.S)
# The response cache is the LLM layer's own database, not the catalog: its SQL stays with it.
OWN_DATABASES = {"dsstar_lake.llm.cache"}


def test_catalog_sql_lives_in_index():
    """dsstar_lake/ reads and writes the catalog through named functions of index/, never with SQL of its own."""
    found = [f"{path.relative_to(REPO)}:{node.lineno}"
             for name, path in MODULES.items() if name.split(".")[0] == "dsstar_lake" and name not in OWN_DATABASES
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.search(node.value)]
    assert not found, "SQL outside index/ (put it behind a function there):\n" + "\n".join(found)


def test_top_level_packages_point_one_way():
    edges = graph(lambda module: module.split(".")[0])
    assert edges.get("index", set()) == set() and "cli" not in edges.get("dsstar_lake", set()), edges
    assert not cycles(edges)


def test_no_import_cycles_between_packages():
    import_time = cycles(graph(lambda module: module, module_level_only=True))
    assert not import_time, f"modules that import each other when loaded: {import_time}"
    found = set(cycles(graph(node_of)))
    new = [sorted(cycle) for cycle in found - KNOWN_CYCLES]
    assert not new, f"new import cycles between packages (lazy and TYPE_CHECKING imports count): {new}"
    gone = [sorted(cycle) for cycle in KNOWN_CYCLES - found]
    assert not gone, f"these cycles are gone (or changed shape): update KNOWN_CYCLES in {__file__}: {gone}"


def test_importing_index_loads_neither_the_facade_nor_the_cli():
    names = sorted(name for name in MODULES if name.split(".")[0] == "index")
    code = (f"import importlib, sys\nfor name in {names!r}:\n    importlib.import_module(name)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dsstar_lake', 'cli')))")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", result.stdout

"""The codebase's shape: floors import downwards only, no import circle, small modules, a short train().

Read from the source with `ast`, imports inside functions included, so a lazy import cannot
hide a loop between floors.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FLOORS = ("envs", "agents", "train", "experiments")  # lowest first: a floor imports only floors below it
# The rules engines and their compiled copies are the only modules allowed to run long.
LONG_MODULES = {
    "envs/not_for_me.py", "envs/deadfall.py", "envs/neu.py", "envs/not_your_mas_jong.py",
    "envs/vector/not_for_me.py", "envs/vector/deadfall.py", "envs/vector/neu.py", "envs/vector/not_your_mas_jong.py",
}
MAX_LINES = 600


def sources() -> dict[str, Path]:
    """Module name -> file, for every module of the four packages."""
    out = {}
    for floor in FLOORS:
        for path in (ROOT / floor).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def typing_only(tree: ast.Module) -> set[int]:
    """ids of the nodes under ``if TYPE_CHECKING:``, which never run."""
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING":
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skip


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules `name` imports anywhere in its file (relative imports resolved)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    tree = ast.parse(path.read_text(), str(path))
    skip = typing_only(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            # `from pkg import mod` imports pkg.mod when that is a module, else a name in pkg.
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        for target in targets:
            # The longest project module the dotted name starts with.
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = sources()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def test_floors_import_only_downwards(graph):
    wrong = [f"{a} imports {b}" for a, targets in graph.items() for b in targets
             if FLOORS.index(b.split(".")[0]) > FLOORS.index(a.split(".")[0])]
    assert not wrong, "\n".join(sorted(wrong))


def test_the_product_never_imports_the_lab():
    """lab/ may use the product; nothing of the product uses the lab, and the wheel leaves it out."""
    modules = sources()
    lab = {".".join(p.relative_to(ROOT).with_suffix("").parts): p for p in (ROOT / "lab").glob("*.py")}
    lab["lab"] = lab.pop("lab.__init__")
    everything = {**modules, **lab}
    wrong = [f"{a} imports {b}" for a, path in modules.items() for b in imports_of(a, path, everything)
             if b == "lab" or b.startswith("lab.")]
    assert not wrong, "\n".join(sorted(wrong))
    import tomllib

    found = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    assert all(not "lab".startswith(pattern.rstrip("*")) for pattern in found), found


def test_no_import_circle_between_files(graph):
    # A package's __init__ re-exporting its own modules is not a circle between files: the
    # module never needs the package body to run first. Every other edge counts.
    def edges(a):
        return {b for b in graph[a] if not (a.startswith(b + ".") and b in graph)}

    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []

    def visit(a):
        state[a] = 1
        stack.append(a)
        for b in sorted(edges(a)):
            if state.get(b) == 1:
                cycle = stack[stack.index(b):] + [b]
                raise AssertionError("import circle: " + " -> ".join(cycle))
            if b not in state:
                visit(b)
        stack.pop()
        state[a] = 2

    for a in sorted(graph):
        if a not in state:
            visit(a)


def test_the_check_sees_an_import_inside_a_function(tmp_path):
    # The graph must count lazy imports, or the floor test above could not fail on them.
    path = tmp_path / "m.py"
    path.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import experiments\n"
                    "def f():\n    from agents import make_agent\n    import train.ppo\n")
    modules = {"envs.m": path, "agents": path, "train.ppo": path, "experiments": path}
    assert imports_of("envs.m", path, modules) == {"agents", "train.ppo"}


def test_modules_stay_short():
    long = []
    for path in sources().values():
        rel = path.relative_to(ROOT).as_posix()
        n = len(path.read_text().splitlines())
        if rel not in LONG_MODULES and n > MAX_LINES:
            long.append(f"{rel}: {n} lines")
    assert not long, "\n".join(long)


def test_train_reads_in_one_sitting():
    tree = ast.parse((ROOT / "train" / "ppo.py").read_text())
    [train] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "train"]
    length = train.end_lineno - train.lineno + 1
    assert length <= 90, f"train() is {length} lines"

"""The package's floors stay honest: no module imports from a higher floor, no two modules import each
other, and the demo instance imports nothing of threadcase but ``wire``.

Every import counts — top-level, inside a function, and under ``TYPE_CHECKING`` — because each of them
is a dependency a reader must follow. The floors are the ones the README's layout table draws.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import threadcase

PACKAGE = Path(threadcase.__file__).parent

FLOORS: dict[str, int] = {
    "wire": 0,
    "errors": 0,
    "records": 0,
    "render": 0,
    "verdicts": 0,
    "models": 0,
    "_util": 0,
    "redaction": 0,
    "leftovers": 0,
    "case": 1,
    "instance": 1,
    "llm": 1,
    "seeds": 2,
    "credentials": 2,
    "user_proxy": 2,
    "grading": 2,
    "harness": 3,
    "report": 4,
    "cli": 4,
    "__main__": 4,
}
DEMO = "demo_instance"
DEMO_MAY_IMPORT = {"threadcase.wire"}
DEMO_IMPORTED_FROM = 3
"""The lowest floor that may start the embedded demo (the runner does; the CLI serves it)."""
STANDINS = "standins"
"""Beside the floors too: the scripted model and the sandbox stand-in speak only HTTP and import nothing
else of threadcase (the sandbox even runs as a bare file); only the CLI (floor 4) serves them."""
STANDINS_IMPORTED_FROM = 4
BESIDE = {DEMO, STANDINS}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _imports(name: str, path: Path, modules: dict[str, Path]) -> Iterator[str]:
    """Every threadcase module ``name`` imports (a ``from pkg import sub`` names the submodule)."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name.split(".")[0] == "threadcase")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.split(".")[0] != "threadcase":
                continue
            submodules = [f"{target}.{alias.name}" for alias in node.names if f"{target}.{alias.name}" in modules]
            yield from submodules or [target]


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: {t for t in _imports(name, path, modules) if t != name} for name, path in modules.items()}


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _floor(module: str) -> int | None:
    return FLOORS.get(_part(module))


def test_every_part_of_the_package_has_a_floor() -> None:
    parts = {_part(name) for name in _modules()} - {""}
    assert parts - set(FLOORS) - BESIDE == set(), "a new sub-package or module needs a floor in FLOORS (and the README)"


def test_no_module_imports_from_a_higher_floor() -> None:
    upward = []
    for module, targets in _graph().items():
        here = _floor(module)
        for target in targets:
            there = _floor(target)
            if _part(target) == DEMO:
                if here is not None and here < DEMO_IMPORTED_FROM:
                    upward.append(f"{module} -> {target} (only floor {DEMO_IMPORTED_FROM}+ may start the demo)")
            elif _part(target) == STANDINS and _part(module) != STANDINS:
                if here is None or here < STANDINS_IMPORTED_FROM:
                    upward.append(f"{module} -> {target} (only floor {STANDINS_IMPORTED_FROM} may serve the stand-ins)")
            elif here is not None and there is not None and there > here:
                upward.append(f"{module} (floor {here}) -> {target} (floor {there})")
    assert upward == []


def test_the_demo_instance_imports_only_the_wire_shapes() -> None:
    leaks = [
        f"{module} -> {target}"
        for module, targets in _graph().items()
        if _part(module) == DEMO
        for target in targets
        if _part(target) != DEMO and target not in DEMO_MAY_IMPORT
    ]
    assert leaks == []


def test_the_stand_ins_import_nothing_else_of_threadcase() -> None:
    leaks = [
        f"{module} -> {target}"
        for module, targets in _graph().items()
        if _part(module) == STANDINS
        for target in targets
        if _part(target) != STANDINS
    ]
    assert leaks == []


def test_no_two_modules_import_each_other_even_through_others() -> None:
    graph = _graph()
    # Package __init__ modules re-export their children; an import of the package is an import of them,
    # so `pkg -> pkg.child` edges are kept but a child importing its own package is what would loop.
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                cycles.append([*stack[stack.index(target) :], target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert cycles == []


def test_the_walker_sees_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    """A guard that could not fail would be worse than none: the walker must see every import form."""
    source = tmp_path / "probe.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from threadcase.harness.runner import RunSettings\n"
        "def f():\n    import threadcase.cli\n    from threadcase import records\n",
        encoding="utf-8",
    )
    found = set(_imports("threadcase.wire", source, _modules()))
    assert found == {"threadcase.harness.runner", "threadcase.cli", "threadcase.records"}

"""The package's layers read downward: no module imports from a layer above its own.

cli → jobs (nightly, running, demo) → store, comparison, reports → formats, metrics, searchers,
alerts, testsets → db → inputs → errors, resources. Imports under ``TYPE_CHECKING`` count too:
a type that lives above is a dependency that points the wrong way. The package root
(``evalplat/__init__.py``) is the public facade and may reach any layer. And no module is over
450 lines: a longer one holds more than one concept.
"""

from __future__ import annotations

import ast
from pathlib import Path

import evalplat

PACKAGE = Path(evalplat.__file__).parent
LAYERS: dict[str, int] = {
    "__main__": 6,  # ``python -m evalplat`` and the console script: the command line
    "cli": 6,
    "nightly": 5,
    "running": 5,
    "demo": 5,
    "judging": 5,
    "rating": 5,
    "store": 4,
    "comparison": 4,
    "reports": 4,
    "formats": 3,
    "metrics": 3,
    "searchers": 3,
    "alerts": 3,
    "testsets": 3,
    "events": 3,
    "db": 2,
    "inputs": 1,
    "errors": 0,
    "resources": 0,
}


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("evalplat"):
            if node.module == "evalplat":
                found.update(f"evalplat.{alias.name}" for alias in node.names)
            else:
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("evalplat."))
    return found


def _violations() -> list[str]:
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        module = ".".join(relative.parts)
        stage = _stage(module)
        if stage in ("__init__", "py"):
            continue
        own = LAYERS[stage]
        for target in sorted(_imports(path)):
            other = _stage(target)
            if other in ("", "__version__"):
                continue
            if LAYERS[other] > own:
                problems.append(
                    f"{module} imports {target} ({stage} {own} < {other} {LAYERS[other]})"
                )
    return problems


def test_every_stage_has_a_layer() -> None:
    stages = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
              if (p.is_dir() and p.name != "__pycache__") or p.suffix == ".py"}  # fmt: skip
    assert stages - {"__init__"} == set(LAYERS)


def test_no_module_imports_a_layer_above_its_own() -> None:
    assert _violations() == []


MAX_MODULE_LINES = 450  # docs/architecture.md: modules near 100 to 400 lines, none over 450


def test_no_module_passes_the_size_limit() -> None:
    lengths = {
        str(path.relative_to(PACKAGE.parent)): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(PACKAGE.rglob("*.py"))
    }
    over = [f"{name}: {n} lines" for name, n in lengths.items() if n > MAX_MODULE_LINES]
    assert over == [], f"split along a seam (over {MAX_MODULE_LINES} lines): {over}"

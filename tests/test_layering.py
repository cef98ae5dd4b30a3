"""The core is pure: no module of ``planner/`` outside ``planner/cli/`` imports ``hive_integration``.

The one exception is the package's own face, ``planner.sql(spark, text)`` in ``planner/__init__.py``:
the Python entry point a user calls with a Spark session, which imports the edge only when called.
Every other import of Spark, the metastore or HiveServer2 goes through ``planner/cli/`` (the command)
or lives in ``hive_integration/``.
"""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EDGE = ("hive_integration", "pyspark", "py4j", "pyhive", "thrift")
FACADE = ROOT / "planner" / "__init__.py"


def _imports(path: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append((node.lineno, node.module))
    return out


def test_the_core_imports_nothing_from_the_edge():
    found = []
    for path in sorted((ROOT / "planner").rglob("*.py")):
        if "cli" in path.relative_to(ROOT / "planner").parts[:1]:
            continue
        for line, name in _imports(path):
            if name.split(".")[0] in EDGE and not (path == FACADE and name == "hive_integration.layouts"):
                found.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert not found, "\n".join(found)

"""The house stays readable: stages import downwards, the core never imports the edge, no circles.

* The import-linter contracts in ``setup.cfg`` (``[importlinter:contract:*]``): the pipeline's stages
  in ``planner/`` import only the stages below them; the core (``planner/`` but ``cli/`` and the
  package's face, ``planner.sql(spark, text)``, which imports the edge only when called) imports
  nothing of Spark, the metastore or HiveServer2; ``hive_integration/``'s rooms layer the same way;
  nothing but tests and benchmarks imports ``devtools/``; nothing of the product imports
  ``benchmarks/``, whose scripts stand on the shared modules, which stand on the harness.
* No import circle among the modules of ``planner/``, ``hive_integration/``, ``devtools/`` and
  ``benchmarks/``, imports inside functions included: a circle is two modules that cannot be
  understood apart. The walk is ``devtools.import_graph``'s, which also draws the package graph
  in ``docs/architecture.md``.
"""
import subprocess
import sys
from pathlib import Path

from devtools.import_graph import circles, import_graph

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("planner", "hive_integration", "devtools", "benchmarks")


def test_import_contracts_hold():
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[done.stdout.find("Broken contracts"):] + done.stderr


def test_no_import_circles():
    found = circles(import_graph(ROOT, PACKAGES))
    assert not found, "import circles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_circle_check_sees_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_drawing_keeps_only_the_arrows_no_longer_path_gives():
    from devtools.import_graph import mermaid, package_graph, reduced

    assert reduced({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == {"a": {"b"}, "b": {"c"}, "c": set()}
    drawn = package_graph(import_graph(ROOT, PACKAGES))
    assert "planner.cnf" in drawn["planner.model"] and "planner.cnf.values" not in drawn
    assert not any(t.startswith("hive_integration") for p, ts in drawn.items()
                   if p.startswith("planner.") and p != "planner.cli" for t in ts)
    assert mermaid(reduced(drawn)).startswith("flowchart TD")

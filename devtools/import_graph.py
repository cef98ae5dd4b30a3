"""The project's import graph, from its own code: module by module, or package by package as a drawing.

``tests/test_layering.py`` fails on any import circle found by this walk; ``docs/architecture.md``
shows its package drawing. The walk reads every ``.py`` file of the packages with ``ast`` (no
import runs), imports inside functions included: a module that imports another only when called
still cannot be understood without it.

    .venv/bin/python -m devtools.import_graph                 # packages, Mermaid, arrows reduced
    .venv/bin/python -m devtools.import_graph --format text   # one line per package: what it imports
    .venv/bin/python -m devtools.import_graph --all-arrows    # every arrow, not only the shortest paths
"""
from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("planner", "hive_integration", "devtools", "benchmarks")
#: how many name parts make a node of the package drawing: planner's stages and the edge's rooms
#: are drawn one by one, the developers' tools and the benchmarks as one box each
DEPTH = {"planner": 2, "hive_integration": 2, "devtools": 1, "benchmarks": 1}


def modules(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    """Dotted module name -> its file, for every module of ``packages``."""
    mods = {}
    for pkg in packages:
        for f in (root / pkg).rglob("*.py"):
            parts = list(f.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join(parts)] = f
    return mods


def import_graph(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    """Module -> the project's modules it imports (at any depth of its code). Importing a package
    whose ``__init__`` holds nothing but a docstring and imports is an edge to what it imports."""
    mods = modules(root, packages)

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, f in mods.items():
        package = m if f.name == "__init__.py" else m.rpartition(".")[0]
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([base] if base else []))
                names = [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for n in names:
                target = resolve(n)
                if target and target != m and not m.startswith(target + "."):
                    graph[m].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def package_of(module: str) -> str:
    """The node of the package drawing ``module`` belongs to (``planner.cnf.values`` -> ``planner.cnf``)."""
    parts = module.split(".")
    return ".".join(parts[:DEPTH.get(parts[0], 1)])


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph with each module folded into its package (arrows inside a package dropped)."""
    out: dict[str, set[str]] = {}
    for m, targets in graph.items():
        p = package_of(m)
        out.setdefault(p, set()).update(package_of(t) for t in targets if package_of(t) != p)
    return out


def reduced(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The arrows no longer path already gives (the transitive reduction of a graph with no circle):
    the drawing shows the layering, not every direct import."""
    def reach(start: str, skip: str) -> set[str]:
        seen, todo = set(), [t for t in graph[start] if t != skip]
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo.extend(graph.get(n, ()))
        return seen

    return {n: {t for t in targets if t not in reach(n, t)} for n, targets in graph.items()}


def mermaid(graph: dict[str, set[str]]) -> str:
    """A Mermaid flowchart, importers above what they import."""
    ids = {n: n.replace(".", "_") for n in graph}
    lines = ["flowchart TD"]
    for n in sorted(graph):
        lines.append(f"  {ids[n]}[{n}]")
    for n in sorted(graph):
        lines += [f"  {ids[n]} --> {ids[t]}" for t in sorted(graph[n])]
    return "\n".join(lines)


def text(graph: dict[str, set[str]]) -> str:
    return "\n".join(f"{n} -> {', '.join(sorted(graph[n])) or '(nothing of ours)'}" for n in sorted(graph))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m devtools.import_graph", description=__doc__.splitlines()[0])
    ap.add_argument("--format", choices=("mermaid", "text"), default="mermaid")
    ap.add_argument("--all-arrows", action="store_true", help="every import between packages, not the reduction")
    ap.add_argument("--modules", action="store_true", help="module by module, not folded into packages")
    args = ap.parse_args(argv)
    graph = import_graph()
    found = circles(graph)
    if found:
        print("import circles:\n" + "\n".join(" <-> ".join(c) for c in found), file=sys.stderr)
        return 1
    drawn = graph if args.modules else package_graph(graph)
    if not args.all_arrows:
        drawn = reduced(drawn)
    print(mermaid(drawn) if args.format == "mermaid" else text(drawn))
    return 0


if __name__ == "__main__":
    sys.exit(main())

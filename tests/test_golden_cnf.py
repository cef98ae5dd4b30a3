"""Golden-file tests: workload text in, per-scan CNF of one table out.

``tests/golden/lineitem_cnf.txt`` (TPC-H's ``lineitem``) and ``tests/golden/edges_cnf.txt`` (a
table of every column type the planner binds, for the edges of conversion: bare boolean columns,
LIKE and its escapes, FLOAT/DOUBLE literals between two binaries, NaN, DATE against TIMESTAMP,
DECIMAL scales, subqueries, the CNF budget) hold sections like sqlglot's optimizer fixtures::

    #### q06                      <- section name; "cps" sections print candidate plans instead
    @ sql/tpch/q06.sql            <- input: "@ path" (relative to the repo) or SQL text
    ----                          <- separates input from the expected output
    scan 1 lineitem AS lineitem
      l_discount: [0.05, 0.07]
      ...

For every scan of the file's table (any database) the expected output lists the
per-column value sets (``str(ValueSet)``, derived column-pair attributes included), the residual
and opaque clauses, the predicates that cannot prune with their reasons, and the weakened flag.

Regenerate with ``./dev golden`` (``python tests/update_golden.py``) and then review the diff by
hand: a golden file is only as good as the reading it got.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from planner.analysis.table_analysis import TableAnalysis, analyze_table
from planner.cnf.normalize import clause_str
from planner.workload import parse_workload
from planner.workload.scans import Schema, schema_from_ddl

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden" / "lineitem_cnf.txt"
EDGES = GOLDEN.with_name("edges_cnf.txt")
EDGES_DDL = """
CREATE TABLE edges (flag BOOLEAN, f FLOAT, x DOUBLE, i INT, b BIGINT, s STRING, c CHAR(5), v VARCHAR(10),
                    m DECIMAL(38,18), n DECIMAL(10,2), d DATE, ts TIMESTAMP);
CREATE TABLE other (k INT, y INT, w STRING, ok BOOLEAN, flag BOOLEAN, s STRING);
"""
HEADER = "#### "
SEPARATOR = "----"


@dataclass(frozen=True)
class Golden:
    """A golden file, the table whose scans it prints and the schema its queries are read with."""

    path: Path
    table: str
    schema: Schema


GOLDENS = (Golden(GOLDEN, "lineitem", schema_from_ddl((ROOT / "sql" / "tpch_schema.sql").read_text(),
                                                      "sql/tpch_schema.sql")),
           Golden(EDGES, "edges", schema_from_ddl(EDGES_DDL, "tests/test_golden_cnf.py")))


def parse_golden(text: str) -> list[tuple[str, str, str]]:
    """``[(name, input, expected)]``; lines before the first section are a free-form preamble."""
    sections: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith(HEADER):
            sections.append((line[len(HEADER):].strip(), []))
        elif sections:
            sections[-1][1].append(line)
    out = []
    for name, lines in sections:
        if SEPARATOR not in lines:
            raise ValueError(f"golden section {name!r} has no {SEPARATOR!r} line")
        cut = lines.index(SEPARATOR)
        out.append((name, "\n".join(lines[:cut]).strip(), "\n".join(lines[cut + 1:]).strip()))
    return out


def preamble(text: str) -> str:
    head = text.split("\n" + HEADER, 1)[0] if not text.startswith(HEADER) else ""
    return head.rstrip("\n")


def workload_text(source: str) -> tuple[str, str]:
    """The SQL of a section and the path to name in messages (several "@ path" lines concatenate)."""
    lines = source.splitlines()
    if lines and all(line.startswith("@") for line in lines):
        rels = [line[1:].strip() for line in lines]
        return "\n".join((ROOT / rel).read_text() for rel in rels), rels[0] if len(rels) == 1 else "<golden>"
    return source, "<golden>"


def render_scans(t: TableAnalysis, statement_of) -> list[str]:
    lines = []
    for s in t.scans:
        g = s.groups
        lines.append(f"scan {statement_of(s.query)} {t.table} AS {s.alias}")
        for col, vs in g.columns:
            lines.append(f"  {col}: {vs}")
        for clause in g.residual:
            lines.append(f"  residual: {clause_str(clause)}")
        for clause in g.opaque:
            lines.append(f"  opaque: {clause_str(clause)}")
        # Sorted: the core's order follows frozenset iteration and changes with PYTHONHASHSEED.
        for pred, why in sorted(s.unused):
            lines.append(f"  unused: {pred}  [{why}]")
        lines.append(f"  weakened: {'yes' if g.weakened else 'no'}")
        if g.unsatisfiable:
            lines.append("  unsatisfiable: yes")
    return lines


def render_candidates(t: TableAnalysis) -> list[str]:
    lines = [f"candidates {t.table}"]
    for c in t.candidates:
        lines.append(f"  {c.column} ({c.kind.value}, {'ordered' if c.ordered else 'categorical'}, "
                     f"{c.queries} scans)")
        for i, cond in enumerate(c.conditions, 1):
            lines.append(f"    c{i}: {cond}")
    return lines


def render(name: str, source: str, golden: Golden = GOLDENS[0]) -> str:
    sql, path = workload_text(source)
    wl = parse_workload(sql, path, schema=golden.schema)
    tables = [t for t in wl.tables() if t.rsplit(".", 1)[-1] == golden.table]
    if not tables:
        return f"(no scan of {golden.table})"
    lines: list[str] = []
    for table in tables:
        t = analyze_table(wl, table, golden.schema.columns(table))
        # "cps" sections show the workload's candidate plans; the scans are in the other sections.
        lines += render_candidates(t) if name.startswith("cps") else render_scans(t, lambda i: wl.queries[i].number)
    return "\n".join(lines)


def _cases(golden: Golden) -> list[tuple[str, str, str]]:
    return parse_golden(golden.path.read_text()) if golden.path.exists() else []


CASES = [(g, *case) for g in GOLDENS for case in _cases(g)]


def test_golden_files_are_well_formed():
    for golden in GOLDENS:
        names = [n for n, _, _ in _cases(golden)]
        assert len(names) >= 40 and len(names) == len(set(names)), f"{golden.path.name}: unique section names"
    tpch = {n for n, _, _ in _cases(GOLDENS[0]) if n.startswith("q")}
    assert tpch >= {"q01", "q03", "q04", "q05", "q06", "q07", "q08", "q09", "q10", "q12", "q14", "q15", "q17",
                    "q18", "q19", "q20", "q21"}


@pytest.mark.parametrize("golden,name,source,expected", CASES, ids=[f"{c[0].table}-{c[1]}" for c in CASES])
def test_golden(golden, name, source, expected):
    assert render(name, source, golden) == expected


def regenerated(golden: Golden = GOLDENS[0]) -> str:
    """The golden file with every section's expected output rendered anew (inputs are kept)."""
    text = golden.path.read_text()
    parts = [preamble(text)] if preamble(text) else []
    for name, source, _ in parse_golden(text):
        parts.append(f"{HEADER}{name}\n{source}\n{SEPARATOR}\n{render(name, source, golden)}")
    return "\n\n".join(parts) + "\n"


@pytest.mark.parametrize("golden", GOLDENS, ids=[g.table for g in GOLDENS])
def test_regenerating_changes_nothing(golden):
    assert regenerated(golden) == golden.path.read_text()

"""Real HiveQL files through the workload reader, and how fast the CLI answers (issue 12).

    .venv/bin/python -m benchmarks.corpus_bench [--corpus DIR] [--repeat 3] [--no-write]

1. Every ``*.q``/``*.sql`` file under ``--corpus`` is read with default settings
   (``read_workload(path)``: hive dialect, ``--on-error fail``). A file *contains a query* when
   one of its statements holds a SELECT (GRANT/REVOKE SELECT aside); such a file counts as read
   when it gives a workload, and a file without one is right to answer "no queries".
2. A query is *lost silently* when a statement holding a SELECT became neither a query (with
   its scans, or a note saying why it has none) nor a view definition that queries follow.
3. Statements skipped are counted by kind (SET, DDL, DESCRIBE, dfs, …).
4. ``planner rewrite`` and ``planner explain`` of 100 TPC-H queries with ``--layout`` and
   ``planner analyze`` of 1,000, each as a fresh process (CLI start included), median wall and CPU
   time of ``--repeat`` runs; the import trace shows whether pyspark (hence a JVM) was loaded.

The default corpus is ``.planner/corpus`` when present (the full one), else the sample kept in
``tests/corpus``. The full corpus measured in ``results/corpus.md``: Apache Hive 0.13's
``clientpositive`` tests as copied into Apache Spark (``sql/hive/src/test/resources/ql/src/test/
queries/clientpositive``), hive-testbench's ``sample-queries-tpcds``, ``sample-queries-tpch`` and
``spark-queries-tpcds``, and seven of Hive's TPC-DS perf files (``tests/corpus/hive-perf``)::

    git clone --depth 1 https://github.com/hortonworks/hive-testbench
    git clone --depth 1 --filter=blob:none --sparse https://github.com/apache/spark
    git -C spark sparse-checkout set sql/hive/src/test/resources/ql/src/test/queries/clientpositive
"""
from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmarks.harness import RESULTS, ROOT, load_average, markdown_table, time_process, write_result
from planner.errors import PlannerError
from planner.workload import read_workload
from planner.workload.parse import classify
from planner.workload.statements import split_statements

NO_QUERY = "files without a query (answered 'no queries')"
PLANNER = [sys.executable, "-m", "planner.cli"]


def corpus_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".q", ".sql"))


_LITERALS = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|--[^\n]*|/\*.*?\*/", re.S)
_SELECT = re.compile(r"\b(select|map|reduce)\b", re.I)


def _holds_select(stmt) -> bool:
    """Whether the statement's text holds a query (independent of the reader: strings and comments
    blanked, then a SELECT, MAP or REDUCE word; GRANT/REVOKE SELECT and CLI commands aside)."""
    if stmt.command is not None:
        return False
    text = _LITERALS.sub(" ", stmt.sql)
    first = (text.split() or [""])[0].upper()
    return first not in ("GRANT", "REVOKE") and _SELECT.search(text) is not None and not (
        first in ("CREATE", "ALTER", "DESC", "DESCRIBE") and not re.search(r"\bselect\b", text, re.I))


def read_corpus(files: list[Path], root: Path) -> dict:
    figures = Counter()
    skipped: Counter = Counter()
    failures: list[str] = []
    lost: list[str] = []
    notes: Counter = Counter()
    started = time.perf_counter()
    for path in _progress(files, "reading the corpus"):
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            stmts = list(split_statements(text, str(path)))
        except PlannerError:
            stmts = []
        with_select = [s for s in stmts if _holds_select(s)]
        figures["files"] += 1
        figures["statements"] += len(stmts)
        if with_select:
            figures["files with a query"] += 1
        try:
            wl = read_workload(path)
        except PlannerError as e:
            if "no queries" in str(e) or "is empty" in str(e):
                figures[NO_QUERY] += 1
                if with_select:
                    lost += [f"{path.relative_to(root)}:{s.line}" for s in with_select]
            else:
                figures["files failed"] += 1
                failures.append(str(e).replace(str(root) + "/", ""))
            continue
        figures["files read"] += 1 if with_select else 0
        figures["queries"] += len(wl.queries)
        figures["views followed"] += len(wl.views)
        for kind, n in wl.skipped:
            skipped[kind] += n
        numbers = {q.number for q in wl.queries}
        for q in wl.queries:
            figures["scans"] += len(q.scans)
            if not q.scans and not q.notes:
                lost.append(f"{path.relative_to(root)}:{q.line} (no scan, no note)")
            for n in q.notes:
                notes[_note_kind(n)] += 1
        for s in with_select:
            if s.number not in numbers and classify(s, "hive").kind != "view":
                lost.append(f"{path.relative_to(root)}:{s.line}")
    figures["read seconds"] = round(time.perf_counter() - started, 2)
    return {"figures": dict(figures), "skipped": dict(skipped.most_common()), "failures": failures,
            "lost": lost, "notes": dict(notes.most_common())}


def _progress(items: list, label: str):
    """``items``, with a rich progress bar on a terminal (plain otherwise)."""
    if not sys.stderr.isatty():
        return items
    from rich.progress import track

    return track(items, description=label, transient=True)


def _note_kind(note: str) -> str:
    for key in ("could belong to several tables", "reads no table", "Hive syntax the reader cannot parse",
                "is not read by any query"):
        if key in note:
            return key
    return note[:60]


# ---- CLI speed ---------------------------------------------------------------------------------
def _timed(args: list[str], repeat: int, cwd: Path) -> tuple[float, float, bool, str]:
    """Median wall and CPU seconds (user + system of the child) of ``repeat`` fresh processes, whether
    pyspark was imported, and stderr. The first run traces imports and is left out of the medians."""
    runs = []
    for i in range(repeat):
        cmd = PLANNER[:1] + (["-X", "importtime"] if i == 0 else []) + PLANNER[1:] + args
        runs.append(time_process(cmd, cwd=cwd, env=dict(os.environ, PLANNER_PLAIN="1")))
    traced = runs[0].stderr.splitlines()
    jvm = any("| pyspark" in line for line in traced)
    err = "\n".join(line for line in traced if "import time:" not in line)
    kept = runs[1:] if repeat > 1 else runs
    return statistics.median(r.seconds for r in kept), statistics.median(r.cpu for r in kept), jvm, err


def cli_figures(repeat: int) -> dict:
    from devtools.workload_gen import workload_file_text

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "q100.sql").write_text(workload_file_text("tpch", 100, 5), encoding="utf-8")
        (work / "q1000.sql").write_text(workload_file_text("tpch", 1000, 1), encoding="utf-8")
        _year_layout(work / "advice")
        rewrite, rewrite_cpu, rewrite_jvm, rewrite_err = _timed(
            ["rewrite", "q100.sql", "--layout", "advice", "--database", "tpch", "-o", "out.sql"], repeat, work)
        explain, explain_cpu, explain_jvm, _ = _timed(
            ["explain", "q100.sql", "--layout", "advice", "--database", "tpch"], repeat, work)
        analyze, analyze_cpu, analyze_jvm, _ = _timed(
            ["analyze", "q1000.sql", "--schema", str(ROOT / "sql" / "tpch_schema.sql"), "--format", "json"], repeat, work)
    return {"rewrite 100 queries (--layout) s": round(rewrite, 2), "rewrite CPU s": round(rewrite_cpu, 2),
            "rewrite started a JVM": rewrite_jvm,
            "rewrite summary": rewrite_err.strip().splitlines()[-1] if rewrite_err.strip() else "",
            "explain 100 queries (--layout) s": round(explain, 2), "explain CPU s": round(explain_cpu, 2),
            "explain started a JVM": explain_jvm,
            "analyze 1,000 queries s": round(analyze, 2), "analyze CPU s": round(analyze_cpu, 2),
            "analyze started a JVM": analyze_jvm}


def _year_layout(folder: Path) -> None:
    """A layout of tpch.lineitem by year of l_shipdate, written as an advice folder (no Spark)."""
    import datetime as dt

    from planner.cnf.valueset import ValueSet
    from planner.emit.advice_folder import write_advice_folder
    from planner.model.layout import Layout, Partition
    from planner.semantics.kinds import Kind
    from planner.workload.scans import schema_from_ddl

    columns = schema_from_ddl((ROOT / "sql" / "tpch_schema.sql").read_text()).columns("lineitem")
    years = range(1992, 1999)
    parts = [Partition(i + 1, (("l_shipdate", ValueSet.range(Kind.DATE, dt.date(y, 1, 1), dt.date(y + 1, 1, 1),
                                                              True, False)),)) for i, y in enumerate(years)]
    parts.append(Partition(len(parts) + 1, (("l_shipdate", ValueSet.range(Kind.DATE, None, dt.date(1992, 1, 1), True,
                                                                          False).union(
        ValueSet.range(Kind.DATE, dt.date(1999, 1, 1), None, True, True)).union(ValueSet.only_null(Kind.DATE))),)))
    layout = Layout("tpch.lineitem", "year ranges of l_shipdate", tuple(parts), kinds=(("l_shipdate", Kind.DATE),))
    write_advice_folder(folder, layout, dict(columns))


def report(corpus: Path, read: dict, cli: dict) -> str:
    f = read["figures"]
    with_q = f.get("files with a query", 0)
    load = load_average()
    lines = [
        "# Real HiveQL files and CLI speed (issue 12)", "",
        f"Corpus `{corpus.relative_to(ROOT) if corpus.is_relative_to(ROOT) else corpus}`; Python "
        f"{platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, load average {load:.1f} at the "
        "end (other jobs on the machine inflate wall times; CPU time is user + system of the command). "
        "`python -m benchmarks.corpus_bench`.", "",
        "| figure | value | target |", "|---|---:|---|",
        f"| files | {f.get('files', 0):,} | |",
        f"| files that contain a query | {with_q:,} | |",
        f"| of those, read with default settings | {f.get('files read', 0):,} "
        f"({f.get('files read', 0) / max(with_q, 1):.1%}) | 100 % |",
        f"| files without a query (answered 'no queries') | {f.get(NO_QUERY, 0):,} | |",
        f"| files that failed | {f.get('files failed', 0):,} | 0 |",
        f"| statements | {f.get('statements', 0):,} | |",
        f"| queries read | {f.get('queries', 0):,} ({f.get('scans', 0):,} scans) | |",
        f"| views followed into queries | {f.get('views followed', 0):,} | |",
        f"| queries lost silently | {len(read['lost']):,} | 0 |",
        f"| reading time, all files | {f.get('read seconds', 0):.1f} s | |",
        f"| `planner rewrite` of 100 queries with `--layout` (CLI start included) | "
        f"{cli['rewrite 100 queries (--layout) s']:.2f} s wall, {cli['rewrite CPU s']:.2f} s CPU, JVM started: "
        f"{'yes' if cli['rewrite started a JVM'] else 'no'} | ≤ 2 s, no JVM |",
        f"| `planner explain` of 100 queries with `--layout` (CLI start included) | "
        f"{cli['explain 100 queries (--layout) s']:.2f} s wall, {cli['explain CPU s']:.2f} s CPU, JVM started: "
        f"{'yes' if cli['explain started a JVM'] else 'no'} | ≤ 2 s, no JVM |",
        f"| `planner analyze` of 1,000 queries (CLI start included) | {cli['analyze 1,000 queries s']:.2f} s wall, "
        f"{cli['analyze CPU s']:.2f} s CPU, JVM started: {'yes' if cli['analyze started a JVM'] else 'no'} | ≤ 2 s |",
        "", "## Statements skipped, by kind", "",
        *markdown_table(["kind", "statements"], ([k, f"{n:,}"] for k, n in read["skipped"].items())),
        "", "## Notes attached to queries", "",
        *markdown_table(["note", "queries"], ([k, f"{n:,}"] for k, n in read["notes"].items()))]
    if read["failures"]:
        lines += ["", "## Files that failed", ""] + [f"- {e}" for e in read["failures"]]
    if read["lost"]:
        lines += ["", "## Queries lost silently", ""] + [f"- {x}" for x in read["lost"][:50]]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = ROOT / ".planner" / "corpus"
    ap.add_argument("--corpus", type=Path, default=default if default.is_dir() else ROOT / "tests" / "corpus")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-write", action="store_true", help="do not write benchmarks/results/corpus.*")
    ap.add_argument("--out-dir", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    corpus = args.corpus.resolve()
    read = read_corpus(corpus_files(corpus), corpus)
    cli = cli_figures(args.repeat)
    text = report(corpus, read, cli)
    print(text)
    if not args.no_write:
        write_result("corpus", text, {"corpus": str(corpus.name), **read, "cli": cli}, args.out_dir, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())

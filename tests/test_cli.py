"""The ``planner`` command as a user meets it: start-up cost, paths, options, exit codes, errors.

Commands that need no Spark start none: ``--help``, ``analyze``, ``rewrite``/``explain`` with
``--layout`` (checked on the import trace of a fresh process: pyspark, hence a JVM, never loads).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.corpus_bench import _year_layout  # noqa: E402


def run(*args: str, cwd: Path | None = None, importtime: bool = False) -> subprocess.CompletedProcess:
    cmd = [sys.executable] + (["-X", "importtime"] if importtime else []) + ["-m", "planner.cli", *args]
    return subprocess.run(cmd, cwd=cwd or ROOT, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PLANNER_PLAIN="1"))


def imported(stderr: str) -> set[str]:
    return {line.split("|")[-1].strip().split(".")[0] for line in stderr.splitlines() if line.startswith("import time:")}


@pytest.fixture(scope="module")
def advice_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("advice") / "lineitem"
    _year_layout(folder)
    return folder


QUERIES = """use tpch;
set hive.exec.parallel=true;
dfs -ls /tmp/*;
-- the year 1995
select count(*) from lineitem where l_shipdate >= date '1995-01-01' and l_shipdate < date '1996-01-01';
explain extended select * from lineitem where l_shipdate < date '1993-01-01';
select * from orders where o_orderdate = '1995-01-01';
"""


def test_help_imports_nothing_heavy():
    proc = run("--help", importtime=True)
    assert proc.returncode == 0 and "Exit codes: 0 success" in proc.stdout
    assert not imported(proc.stderr) & {"pyspark", "numpy", "pyarrow", "sqlglot", "py4j"}


def test_rewrite_with_layout_files_starts_no_jvm(advice_dir, tmp_path):
    (tmp_path / "q.sql").write_text(QUERIES)
    proc = run("rewrite", "q.sql", "--layout", str(advice_dir), "-o", "out.sql", cwd=tmp_path, importtime=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not imported(proc.stderr) & {"pyspark", "py4j", "pyarrow"}
    out = (tmp_path / "out.sql").read_text()
    assert "2 of 6 statements rewritten to prune partitions" in proc.stderr
    assert "dfs -ls /tmp/*;" in out and "set hive.exec.parallel=true;" in out  # commands pass through untouched
    assert "explain extended select * from (SELECT" in out  # the query inside EXPLAIN is pruned
    assert out.count("`planner_pid` IN (0, 4)") == 1 and out.count("`planner_pid` IN (0, 1, 8)") == 1


def test_analyze_starts_no_jvm():
    proc = run("analyze", "sql/tpch_workload.sql", "--schema", "sql/tpch_schema.sql", "--format", "json",
               importtime=True)
    assert proc.returncode == 0
    assert not imported(proc.stderr) & {"pyspark", "py4j", "pyarrow"}


def test_explain_reads_layout_files(advice_dir, tmp_path):
    (tmp_path / "q.sql").write_text(QUERIES)
    result = CliRunner().invoke(cli, ["explain", str(tmp_path / "q.sql"), "--layout", str(advice_dir)])
    assert result.exit_code == 0, result.output
    # counted as the layout counts its partitions (the catch-all left out, said once at the end)
    assert "tpch.lineitem: reads 1 of 8 partitions" in result.stdout
    assert "leave out partition 0, the catch-all" in result.stdout
    assert "pruned by l_shipdate IN [DATE '1995-01-01', DATE '1995-12-31']" in result.stdout


def test_rewrite_on_error_skip_keeps_a_bad_statement_as_it_is(advice_dir, tmp_path):
    q = tmp_path / "q.sql"
    q.write_text("use tpch;\nselect * from lineitem where (;\nselect * from lineitem where l_shipdate < '1993-01-01';\n")
    failed = CliRunner().invoke(cli, ["rewrite", str(q), "--layout", str(advice_dir)])
    assert failed.exit_code == 2 and failed.stderr.startswith(f"error: {q}:2, statement 2: syntax error")
    ok = CliRunner().invoke(cli, ["rewrite", str(q), "--layout", str(advice_dir), "--on-error", "skip",
                                  "--format", "json"])
    assert ok.exit_code == 0, ok.output
    doc = json.loads(ok.stdout)
    assert doc[1]["sql"] == "select * from lineitem where (" and "syntax error" in doc[1]["skipped"]
    assert "`planner_pid` IN" in doc[2]["sql"]


def test_rewrite_leaves_alone_a_table_an_earlier_temporary_view_or_table_shadows(advice_dir, tmp_path):
    # Spark and Hive read an unqualified name as the session's temporary view (or table) of that
    # name: pruning it by the table's layout would filter the view's rows by partitions they do not
    # have. A global temporary view (global_temp) and a qualified permanent table shadow nothing.
    q = tmp_path / "q.sql"
    prunable = "select count(*) from lineitem where l_shipdate < date '1993-01-01';\n"
    q.write_text("use tpch;\n" + prunable
                 + "create global temporary view lineitem as select * from tpch.lineitem;\n" + prunable
                 + "create table other.lineitem as select * from tpch.lineitem;\n" + prunable
                 + "create or replace temporary view lineitem as select l_orderkey, "
                   "date_add(l_shipdate, 400) as l_shipdate from tpch.lineitem;\n" + prunable
                 + "select count(*) from tpch.lineitem where l_shipdate < date '1993-01-01';\n")
    result = CliRunner().invoke(cli, ["rewrite", str(q), "--layout", str(advice_dir), "--format", "json"])
    assert result.exit_code == 0, result.output
    pruned = ["`planner_pid` IN" in s["sql"] for s in json.loads(result.stdout)]
    # the view's own SELECT reads the table: pruned too (it has no filter, so there is nothing to
    # prune it by); every later unqualified or qualified lineitem is left alone, to be safe
    assert pruned == [False, True, False, True, False, True, False, False, False]
    q.write_text("use tpch;\nwith lineitem as (select l_orderkey, date_add(l_shipdate, 400) as l_shipdate "
                 "from tpch.lineitem) select count(*) from lineitem where l_shipdate < date '1993-01-01';\n"
                 "select count(*) from (select date_add(l_shipdate, 400) as l_shipdate from lineitem) lineitem "
                 "where l_shipdate < date '1993-01-01';\n")
    doc = json.loads(CliRunner().invoke(cli, ["rewrite", str(q), "--layout", str(advice_dir), "--format", "json"]).stdout)
    assert not any("`planner_pid` IN" in s["sql"] for s in doc)  # a CTE or an alias named like the table
    for first in ("cache table lineitem as select 1", "create temporary table lineitem as select 1",
                  "create temporary view lineitem using parquet options (path '/data/x')"):  # hive cannot parse it
        q.write_text(f"use tpch;\n{first};\n" + prunable)
        doc = json.loads(CliRunner().invoke(cli, ["rewrite", str(q), "--layout", str(advice_dir),
                                                  "--format", "json"]).stdout)
        assert "`planner_pid` IN" not in doc[2]["sql"], first


def test_old_option_spellings_still_work(advice_dir, tmp_path):
    q = tmp_path / "q.sql"
    q.write_text("select * from tpch.lineitem where l_shipdate < '1993-01-01';\n")
    result = CliRunner().invoke(cli, ["rewrite", str(q), "--layout", str(advice_dir), "--out", str(tmp_path / "o.sql")])
    assert result.exit_code == 0 and "`planner_pid` IN" in (tmp_path / "o.sql").read_text()


# ---- paths, exit codes, one-line errors --------------------------------------------------------------
def test_dev_resolves_paths_where_the_caller_stands(tmp_path):
    # DEV_PYTHON: ./dev uses this interpreter as it is, so the test installs nothing anywhere.
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "w.sql").write_text("select * from t where a = 1;\n")
    env = dict(os.environ, DEV_PYTHON=sys.executable, PYTHONPATH=str(ROOT))
    proc = subprocess.run([str(ROOT / "dev"), "planner", "analyze", "w.sql", "--format", "json"],
                          cwd=tmp_path / "work", capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["workload"] == "w.sql"


def test_dev_reinstalls_when_the_locked_versions_change(tmp_path):
    # The stamp ./dev compares before installing is a digest of setup.cfg AND constraints.txt:
    # a new lock installs again. Checked on a copy of the script, so nothing is installed.
    import hashlib
    import shutil

    for name in ("dev", "setup.cfg", "constraints.txt"):
        shutil.copy2(ROOT / name, tmp_path / name)

    def stamp() -> str:
        return subprocess.run([str(tmp_path / "dev"), "stamp"], capture_output=True, text=True, check=True,
                              timeout=60).stdout.strip()

    digest = hashlib.sha1((ROOT / "setup.cfg").read_bytes() + (ROOT / "constraints.txt").read_bytes()).hexdigest()
    assert stamp() == f".installed-{digest[:12]}"
    with open(tmp_path / "constraints.txt", "a") as f:
        f.write("example==1.0\n")
    assert stamp() != f".installed-{digest[:12]}"
    assert not (tmp_path / ".venv").exists()


@pytest.mark.parametrize("args,code,needle", [
    (["analyze", "nope.sql"], 2, "'nope.sql' does not exist"),
    (["advise", "nope.sql"], 2, "'nope.sql' does not exist"),
    (["rewrite", "q.sql", "--metastore", "localhost:9083"], 2, "must look like thrift://host:port"),
    (["explain", "q.sql", "--metastore", "thrift://127.0.0.1"], 2, "must name a port"),
    (["analyze", "q.sql", "--format", "yaml"], 2, "Invalid value for '--format'"),
    (["analyze", "q.sql", "--since", "2024-01-01"], 2, "apply to --from-eventlog only"),
    (["analyze", "--from-eventlog", "."], 2, "no statements left in the event logs"),
    (["apply", "."], 2, "no layout.json in it or in a folder beneath it"),
])
def test_usage_and_input_errors_exit_2_in_one_line(tmp_path, args, code, needle, monkeypatch):
    (tmp_path / "q.sql").write_text("select * from t;\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == code, result.output
    assert result.stderr.startswith("error: ") and needle in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""


def test_a_usage_error_in_a_fresh_process_is_one_line_too(tmp_path):
    proc = run("rewrite", "nope.sql", "--layout", ".", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == "error: Invalid value for 'QUERIES': File 'nope.sql' does not exist. " \
                          "(see 'planner rewrite --help')\n"


@pytest.mark.parametrize("command", ["advise", "rewrite", "explain", "apply", "append", "status", "relayout"])
def test_an_unreachable_metastore_is_one_line_exit_1_before_any_jvm(tmp_path, command, monkeypatch):
    from devtools.servers import free_port

    (tmp_path / "q.sql").write_text("select * from t where a = 1;\n")
    _year_layout(tmp_path / "advice")
    uri = f"thrift://127.0.0.1:{free_port()}"
    args = {"advise": ["q.sql", "--table", "t"], "rewrite": ["q.sql"], "explain": ["q.sql"], "apply": ["advice"],
            "append": ["b", "--into", "t"], "status": ["t", "q.sql"], "relayout": ["t", "q.sql"]}[command]
    expected = (f"error: --metastore {uri}: cannot connect to metastore {uri[9:]}: "
                f"Could not connect to any of [('127.0.0.1', {uri.rsplit(':', 1)[1]})]")
    if command == "advise":  # a fresh process: the import trace shows no JVM was on its way
        proc = run(command, *args, "--metastore", uri, cwd=tmp_path, importtime=True)
        assert proc.returncode == 1, proc.stderr[-2000:]
        assert [line for line in proc.stderr.splitlines() if not line.startswith("import time:")] == [expected]
        assert "pyspark" not in imported(proc.stderr)
        return
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, [command, *args, "--metastore", uri])
    assert result.exit_code == 1 and result.stderr.splitlines() == [expected], result.output


def test_spark_and_thrift_failures_are_one_line():
    from thrift.transport.TTransport import TTransportException

    from planner.cli.main import external_error

    assert external_error(TTransportException(message="TSocket read 0 bytes")) == "thrift: TSocket read 0 bytes"
    assert external_error(ValueError("x")) is None


def test_rewrite_keeps_the_comments_in_front_of_statements(advice_dir, tmp_path):
    """Issue 34: ``rewrite`` dropped the comments in front of statements (query names, tickets)."""
    (tmp_path / "q.sql").write_text(QUERIES + "-- the end of the file\n")
    result = CliRunner().invoke(cli, ["rewrite", str(tmp_path / "q.sql"), "--layout", str(advice_dir),
                                      "-o", str(tmp_path / "out.sql")])
    assert result.exit_code == 0, result.output
    out = (tmp_path / "out.sql").read_text()
    lines = out.splitlines()
    year = lines.index("-- the year 1995")
    assert lines[year + 1].startswith("select count(*) from")  # still right above its query
    assert lines[-1] == "-- the end of the file"


def test_rewrite_says_when_a_layout_matches_no_scan_and_why(advice_dir, tmp_path):
    """Issue 34: without ``--database`` the layout of ``tpch.lineitem`` silently rewrote nothing
    where the queries say ``lineitem`` (read in ``default``)."""
    (tmp_path / "q.sql").write_text("select count(*) from lineitem where l_shipdate < date '1993-01-01';\n")
    result = CliRunner().invoke(cli, ["rewrite", str(tmp_path / "q.sql"), "--layout", str(advice_dir),
                                      "-o", str(tmp_path / "out.sql")])
    assert result.exit_code == 0, result.output
    assert ("note: the layout of tpch.lineitem matched no scan: the queries read lineitem (an unqualified "
            "`lineitem` is read in the current database; give --database tpch, or qualify the name)") in result.output
    fixed = CliRunner().invoke(cli, ["rewrite", str(tmp_path / "q.sql"), "--layout", str(advice_dir),
                                     "--database", "tpch", "-o", str(tmp_path / "out.sql")])
    assert "matched no scan" not in fixed.output

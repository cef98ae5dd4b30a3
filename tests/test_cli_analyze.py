"""``planner analyze`` end to end: text and JSON output, exit codes, errors without tracebacks."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import planner.cli.analyze  # noqa: F401  (registers the command)
from planner.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = str(ROOT / "sql" / "tpch_schema.sql")
TPCH = str(ROOT / "sql" / "tpch_workload.sql")
PLANNER = Path(sys.executable).parent / "planner"


def run(*args: str):
    result = CliRunner().invoke(cli, ["analyze", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def write(tmp_path: Path, text: str, name: str = "w.sql") -> str:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


Q6 = ("-- q6\nselect sum(l_extendedprice) from lineitem where l_shipdate >= '1994-01-01' "
      "and l_shipdate < '1995-01-01' and l_discount between 0.05 and 0.07 and l_quantity < 24;\n")


def test_text_output(tmp_path):
    p = write(tmp_path, "set x=1;\n" + Q6 + "select * from lineitem where l_shipmode in ('MAIL', 'SHIP');\n")
    code, out, err = run(p, "--schema", SCHEMA)
    assert code == 0, err
    assert out.splitlines()[0] == f"{p}: 2 queries; skipped statements: 1 SET"
    assert "table lineitem: 2 scans" in out
    assert "  l_shipdate: filtered by 1 scan; 4 candidate conditions" in out
    assert "    c2: [DATE '1994-01-01', DATE '1994-12-31']" in out
    assert "  l_shipmode: filtered by 1 scan; 3 candidate conditions" in out
    assert "    c1: {'MAIL', 'SHIP'}" in out
    assert err == ""


def test_json_output_on_the_bundled_workload():
    code, out, err = run(TPCH, "--schema", SCHEMA, "--table", "lineitem", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["queries"] == 200 and doc["errors"] == []
    (table,) = doc["tables"]
    assert table["table"] == "lineitem"
    cols = {c["column"]: c for c in table["columns"]}
    assert cols["l_shipdate"]["kind"] == "date" and cols["l_shipdate"]["ordered"]
    assert cols["l_commitdate < l_receiptdate"]["derived"] is True
    assert cols["l_shipdate"]["conditions"][-1] == "NULL"
    for c in table["columns"]:
        assert c["filtered_by"] >= 1 and len(c["conditions"]) >= 2


def test_json_output_reports_skipped_statements(tmp_path):
    p = write(tmp_path, Q6 + "select * from lineitem where (;\nselect * from lineitem where l_nope = 1;\n")
    code, out, err = run(p, "--schema", SCHEMA, "--on-error", "skip", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["queries"] == 1 and doc["skipped"] == {"error": 2}
    assert doc["errors"][0].startswith(f"{p}:3, statement 2: syntax error")
    assert doc["errors"][1] == f"{p}:4, statement 3: table lineitem has no column l_nope"


def test_text_output_lists_skipped_statements(tmp_path):
    p = write(tmp_path, Q6 + "select * from lineitem where (;\n")
    code, out, _ = run(p, "--on-error", "skip")
    assert code == 0
    assert "skipped statements: 1 error" in out.splitlines()[0]
    assert f"  skipped: {p}:3, statement 2: syntax error" in out


def test_unused_predicates_are_listed(tmp_path):
    p = write(tmp_path, "select * from lineitem where my_udf(l_comment) = 1 and l_quantity < 3;\n")
    code, out, _ = run(p, "--schema", SCHEMA)
    assert code == 0
    assert "  not usable for pruning:\n    MY_UDF(l_comment) = 1  [user-defined function; 1 scan]" in out


@pytest.mark.parametrize("content,args,needle,line", [
    ("select * from lineitem where l_quantity < 3;\n\nselect * from lineitem where (;\n", [],
     "statement 2: syntax error", 3),
    ("select * from lineitem where l_quantity < 3;\nselect * from lineitem where l_nope = 3;\n",
     ["--schema", SCHEMA], "statement 2: table lineitem has no column l_nope", 2),
])
def test_bad_statement_names_file_line_and_statement(tmp_path, content, args, needle, line):
    p = write(tmp_path, content)
    code, out, err = run(p, *args)
    assert code == 2
    assert out == ""
    assert err.startswith(f"error: {p}:{line}, {needle}")
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("make_args,needle", [
    (lambda d: [str(d / "nope.sql")], "nope.sql' does not exist"),
    (lambda d: [write(d, "")], "the workload is empty"),
    (lambda d: [write(d, Q6), "--table", "orders"], "no query reads orders"),
    (lambda d: [write(d, Q6), "--schema", str(d / "nope.ddl")], "nope.ddl' does not exist"),
    (lambda d: [write(d, Q6), "--schema", write(d, "select 1;", "s.ddl")], "no CREATE TABLE statements"),
    (lambda d: [write(d, "select * from t where " + "(" * 5000 + "a = 1" + ")" * 5000)], "nested too deeply"),
])
def test_input_errors_exit_2_without_traceback(tmp_path, make_args, needle):
    code, out, err = run(*make_args(tmp_path))
    assert code == 2, (out, err)
    assert needle in err and err.startswith("error: ")
    assert "Traceback" not in err


def test_bad_option_is_a_usage_error(tmp_path):
    code, _, err = run(write(tmp_path, Q6), "--format", "yaml")
    assert code == 2 and "Invalid value for '--format'" in err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1


def _subprocess(args, seed="0"):
    env = dict(os.environ, PYTHONHASHSEED=seed)
    return subprocess.run([str(PLANNER), "analyze", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=120)


def test_installed_entry_point(tmp_path):
    ok = _subprocess(["sql/tpch_workload.sql", "--schema", "sql/tpch_schema.sql", "--format", "json"])
    assert ok.returncode == 0, ok.stderr
    assert {t["table"] for t in json.loads(ok.stdout)["tables"]} >= {"lineitem", "orders"}
    bad = _subprocess([write(tmp_path, Q6 + "select * from lineitem where (;\n")])
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert bad.stderr.startswith(f"error: {tmp_path / 'w.sql'}:3, statement 2: syntax error")
    assert "Traceback" not in bad.stderr


def test_verbose_shows_the_traceback(tmp_path):
    p = write(tmp_path, "")
    assert "Traceback" not in _subprocess([p]).stderr
    verbose = subprocess.run([str(PLANNER), "--verbose", "analyze", p], capture_output=True, text=True, cwd=ROOT,
                             timeout=120)
    assert verbose.returncode != 0 and "Traceback" in verbose.stderr


def test_output_does_not_depend_on_the_hash_seed(tmp_path):
    """The same workload must print the same report in every run (diffable, cacheable)."""
    p = write(tmp_path, "select * from lineitem where l_comment like 'fur%ly%' and l_shipmode like 'A_R' "
                        "and l_shipinstruct like 'T%N' and my_udf(l_comment) = 1 and rand() < 0.1;\n")
    outs = {_subprocess([p, "--schema", "sql/tpch_schema.sql"], seed=s).stdout for s in ("1", "2", "3", "4")}
    assert len(outs) == 1, "\n----\n".join(outs)

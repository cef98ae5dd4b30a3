"""Crash safety of ``apply_layout``, beyond the fault points of tests/test_apply.py.

test_apply.py injects an ``ApplyError`` at each fault point, a simulated crash after the CREATE
and between the renames, and one concurrent apply. Here:

* a simulated crash (a killed process: no clean-up runs) at *every* fault point;
* failures *during* the INSERT: a Spark task failing part-way through the write, and a process
  killed after half the rows were written;
* a copy that does not verify (rows lost after the INSERT): refused, the copy dropped;
* chains of faults, one after the other on re-runs, until a run completes;
* a second apply refused at every step of a running one, a lease held by another owner, an
  expired lease, and ``break_lease``.

After every fault the source table holds exactly its rows and answers queries (through
``planner.sql`` too), or, for a crash between the two renames, which leaves no table under the
source's name, the next run finishes the swap. A run after the faults completes and the
laid-out table holds the same rows. Every fault injected is counted ("faults injected").
"""
from __future__ import annotations

import time

import figures
import pytest
import sqlglot
from sqlglot import exp
from test_apply import CREATE, FILL, ROWS, int_layout, props, rows, tables

import planner
from hive_integration.apply.apply_layout import (
    FAULT_POINTS,
    OWNER,
    SINCE,
    SimulatedCrash,
    SparkRunner,
    apply_layout,
)
from hive_integration.spark.spark_errors import SparkError
from planner.errors import ApplyError, LeaseError

FAULTS = "faults injected into apply"


@pytest.fixture
def source(spark, fresh_db):
    t = f"{fresh_db}.items"
    spark.sql(CREATE.format(t=t))
    spark.sql(FILL.format(t=t))
    return t


def intact(spark, table: str, before) -> None:
    """The source holds exactly its rows, unleased, and answers queries (plain and rewritten)."""
    assert rows(spark, table) == before
    assert OWNER not in props(spark, table)
    assert planner.sql(spark, f"SELECT count(*) FROM {table} WHERE k < 100").collect()[0][0] == \
        sum(1 for r in before if r.k is not None and r.k < 100)


def finished(spark, table: str, before) -> None:
    """The table is laid out, holds the same rows, and a pruned query returns the same answer."""
    assert rows(spark, table) == before
    assert len(spark.sql(f"SHOW PARTITIONS {table}").collect()) == 4
    got = sorted(r.id for r in planner.sql(spark, f"SELECT id FROM {table} WHERE k >= 200 OR k IS NULL").collect())
    assert got == sorted(r.id for r in before if r.k is None or r.k >= 200)
    db = table.split(".")[0]
    assert "items__planner_new" not in tables(spark, db)


# ---- a killed process at every step -------------------------------------------------------------
@pytest.mark.parametrize("point", FAULT_POINTS)
def test_crash_at_every_step(spark, source, point):
    before = rows(spark, source)
    figures.add(FAULTS)
    with pytest.raises(SimulatedCrash):
        apply_layout(SparkRunner(spark), int_layout(source), crash_at=point)
    db = source.split(".")[0]
    if point == "between_renames":
        # The one window with no table under the source's name; the data is in the backup.
        (backup,) = [t for t in tables(spark, db) if t.startswith("items__before_")]
        assert rows(spark, f"{db}.{backup}") == before
    else:
        assert rows(spark, source) == before  # the source itself is untouched
        assert planner.sql(spark, f"SELECT count(*) FROM {source}").collect()[0][0] == ROWS
        assert props(spark, source)[OWNER]  # the dead run's lease is still there
    # The dead run's lease is not broken silently ...
    with pytest.raises(LeaseError, match="is being applied by another run .* re-run with --break-lease"):
        apply_layout(SparkRunner(spark), int_layout(source))
    # ... and once the operator says so, a re-run resumes or redoes the work and completes.
    report = apply_layout(SparkRunner(spark), int_layout(source), break_lease=True)
    finished(spark, source, before)
    if point == "between_renames":
        assert "finished the swap" in report.resumed


# ---- failures during the INSERT ------------------------------------------------------------------
class InsertFault(SparkRunner):
    """Runs every statement, except that the INSERT fails the way ``mode`` says."""

    def __init__(self, spark, mode: str):
        super().__init__(spark)
        self.mode = mode

    def execute(self, sql: str):
        if not sql.lstrip().upper().startswith("INSERT"):
            return super().execute(sql)
        insert = sqlglot.parse_one(sql, read="spark")
        select = insert.expression
        if self.mode == "task-failure":
            # Rows with id > 150 make their Spark task fail: a job dying half-way through its write.
            boom = exp.Anonymous(this="raise_error", expressions=[exp.Literal.string("disk full")])
            cond = exp.Case().when(exp.GT(this=exp.column("id"), expression=exp.Literal.number(150)), boom)
            select.where(exp.Is(this=cond, expression=exp.Null()), copy=False)
            return super().execute(insert.sql(dialect="spark"))
        # "killed-mid-insert": half the rows are really written, then the process dies.
        select.where(exp.EQ(this=exp.Mod(this=exp.column("id"), expression=exp.Literal.number(2)),
                            expression=exp.Literal.number(0)), copy=False)
        super().execute(insert.sql(dialect="spark"))
        raise SimulatedCrash("killed during the INSERT")


def test_a_spark_job_failing_during_the_insert(spark, source):
    before = rows(spark, source)
    figures.add(FAULTS)
    with pytest.raises(ApplyError, match=r"stopped at step insert: .*disk full.* is unchanged") as info:
        apply_layout(InsertFault(spark, "task-failure"), int_layout(source))
    assert isinstance(info.value.__cause__, SparkError)
    intact(spark, source, before)
    apply_layout(SparkRunner(spark), int_layout(source))  # the half-written copy is dropped, redone
    finished(spark, source, before)


def test_a_process_killed_during_the_insert(spark, source):
    before = rows(spark, source)
    figures.add(FAULTS)
    with pytest.raises(SimulatedCrash):
        apply_layout(InsertFault(spark, "killed-mid-insert"), int_layout(source))
    copy = f"{source}__planner_new"
    assert 0 < len(rows(spark, copy)) < ROWS  # a partial copy was left behind ...
    assert props(spark, copy)["planner.apply.state"] == "created"  # ... and is marked as such
    assert rows(spark, source) == before
    report = apply_layout(SparkRunner(spark), int_layout(source), break_lease=True)
    assert report.resumed is None  # never reused: its state says it was not loaded
    finished(spark, source, before)


class LosesRows(SparkRunner):
    """After the INSERT, empties one partition of the copy: the copy no longer verifies."""

    def execute(self, sql: str):
        out = super().execute(sql)
        if sql.lstrip().upper().startswith("INSERT"):
            t = sqlglot.parse_one(sql, read="spark").find(exp.Table)
            target = exp.Table(this=t.this.copy(), db=t.args["db"].copy()).sql(dialect="spark")
            super().execute(f"ALTER TABLE {target} DROP PARTITION (planner_pid=2)")
        return out


def test_a_copy_that_does_not_verify_is_dropped(spark, source):
    before = rows(spark, source)
    figures.add(FAULTS)
    with pytest.raises(ApplyError, match="verification failed: .* does not hold the same rows .* dropped"):
        apply_layout(LosesRows(spark), int_layout(source))
    intact(spark, source, before)
    assert "items__planner_new" not in tables(spark, source.split(".")[0])
    apply_layout(SparkRunner(spark), int_layout(source))
    finished(spark, source, before)


# ---- chains of faults ------------------------------------------------------------------------------
CHAINS = [
    [("crash", "after_insert"), ("fail", "after_verify"), ("crash", "between_renames")],
    [("fail", "before_insert"), ("crash", "after_verify"), ("fail", "between_renames")],
    [("crash", "after_create"), ("crash", "after_create"), ("fail", "after_insert"), ("crash", "after_verify")],
]


@pytest.mark.parametrize("chain", CHAINS, ids=lambda c: "-".join(f"{k}@{p}" for k, p in c))
def test_faults_on_reruns(spark, source, chain):
    before = rows(spark, source)
    for kind, point in chain:
        figures.add(FAULTS)
        fault = {"crash_at": point} if kind == "crash" else {"fail_at": point}
        with pytest.raises(SimulatedCrash if kind == "crash" else ApplyError):
            apply_layout(SparkRunner(spark), int_layout(source), break_lease=True, **fault)
        if kind == "fail":
            intact(spark, source, before)
    apply_layout(SparkRunner(spark), int_layout(source), break_lease=True)
    finished(spark, source, before)


# ---- concurrency and leases --------------------------------------------------------------------
def test_a_second_apply_is_refused_at_every_step(spark, source):
    before = rows(spark, source)
    refusals = []

    def meanwhile(msg: str) -> None:
        if "swapped" in msg:
            return  # the work is done; the old table is being released
        with pytest.raises(LeaseError) as info:
            apply_layout(SparkRunner(spark), int_layout(source))
        refusals.append(str(info.value))

    apply_layout(SparkRunner(spark), int_layout(source), progress=meanwhile)
    figures.add("concurrent applies refused", len(refusals))
    assert len(refusals) >= 5  # lease, created, statements, verified, ...
    assert all("is being applied by another run (owner " in r and "--break-lease" in r for r in refusals)
    finished(spark, source, before)


def test_a_lease_held_elsewhere_refuses_until_it_expires(spark, source):
    before = rows(spark, source)
    spark.sql(f"ALTER TABLE {source} SET TBLPROPERTIES ('{OWNER}' = 'other-host-42', "
              f"'{SINCE}' = '{int(time.time()) - 60}')")
    figures.add(FAULTS)
    with pytest.raises(LeaseError, match=r"owner other-host-42, since \d+ s ago; leases expire after 3600 s"):
        apply_layout(SparkRunner(spark), int_layout(source), lease_ttl=3600)
    assert props(spark, source)[OWNER] == "other-host-42"  # a refusal never touches the lease
    assert rows(spark, source) == before
    apply_layout(SparkRunner(spark), int_layout(source), lease_ttl=30)  # 60 s old: expired, taken over
    finished(spark, source, before)


def test_a_lease_with_an_unreadable_time_counts_as_expired(spark, source):
    before = rows(spark, source)
    spark.sql(f"ALTER TABLE {source} SET TBLPROPERTIES ('{OWNER}' = 'x', '{SINCE}' = 'yesterday')")
    figures.add(FAULTS)
    report = apply_layout(SparkRunner(spark), int_layout(source))  # unreadable age: expired
    assert report.rows == ROWS
    finished(spark, source, before)


# ---- issue 34: Ctrl-C and a second apply of the same advice -------------------------------------
class CtrlC(SparkRunner):
    """Ctrl-C while the INSERT runs: pyspark turns SIGINT into a KeyboardInterrupt in the driver."""

    def execute(self, sql: str):
        if sql.lstrip().upper().startswith("INSERT"):
            raise KeyboardInterrupt
        return super().execute(sql)


def test_ctrl_c_releases_the_lease_and_says_how_to_continue_in_one_line(spark, source):
    """Was: about 40 lines of py4j tracebacks, "interrupted", and a lease that made the next apply
    refuse for 6 hours unless --break-lease."""
    from planner.errors import Interrupted

    before = rows(spark, source)
    with pytest.raises(Interrupted) as info:
        apply_layout(CtrlC(spark), int_layout(source))
    message = str(info.value)
    assert "\n" not in message and info.value.exit_code == 130
    assert f"interrupted at step insert: {source} is unchanged, its lease released" in message
    assert "the same command resumes or redoes it" in message
    intact(spark, source, before)  # no lease left: the next apply needs no --break-lease
    apply_layout(SparkRunner(spark), int_layout(source))
    finished(spark, source, before)


class Recording(SparkRunner):
    def __init__(self, spark):
        super().__init__(spark)
        self.statements: list[str] = []

    def execute(self, sql: str):
        self.statements.append(sql)
        return super().execute(sql)


def test_a_second_apply_of_the_same_advice_writes_nothing(spark, source):
    """Was: the second run rewrote and verified the whole table before refusing because the
    backup's name existed, and left the full copy behind."""
    before = rows(spark, source)
    apply_layout(SparkRunner(spark), int_layout(source))
    again = Recording(spark)
    report = apply_layout(again, int_layout(source))
    assert report.already_applied and "already has this layout" in report.text()
    written = [s for s in again.statements if s.lstrip().upper().startswith(("INSERT", "CREATE", "ALTER", "DROP"))]
    assert written == []
    finished(spark, source, before)


def test_a_taken_backup_name_is_refused_before_anything_is_written(spark, source):
    before = rows(spark, source)
    from dataclasses import replace

    from hive_integration.apply.apply_layout import backup_name

    layout = replace(int_layout(source), meta=(("advised_at", "2026-01-02T03:04:05Z"),))  # a stable backup name

    backup = backup_name(source, dialect="spark", layout=layout).sql("spark")
    spark.sql(f"CREATE TABLE {backup} (x INT) USING parquet")
    run = Recording(spark)
    with pytest.raises(ApplyError, match="already exists, and .* does not hold this layout.*nothing was changed"):
        apply_layout(run, layout)
    assert not [s for s in run.statements if s.lstrip().upper().startswith(("INSERT", "CREATE"))]
    intact(spark, source, before)

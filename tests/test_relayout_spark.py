"""Partial re-layout on real Spark: same rows as the source, untouched partitions' files unchanged,
old partitions kept, stale and fresh rewrites both correct, resumable after a crash."""
from __future__ import annotations

import os
from dataclasses import replace
from urllib.parse import unquote, urlparse

import pytest
from rewrite_entry import rewrite_query

from hive_integration.apply.apply_layout import SparkRunner, apply_layout
from hive_integration.apply.relayout import SimulatedCrash, relayout
from hive_integration.metastore.layouts import sql as planner_sql
from hive_integration.spark.statistics_pass import gather_stats
from planner.advice.relayout_plan import plan_relayout
from planner.analysis.table_analysis import analyze_table
from planner.cnf.valueset import ValueSet
from planner.costmodel.cost import CostModel, CostParams
from planner.model.layout import Layout, Ordering, Partition, with_generation
from planner.semantics.kinds import Kind
from planner.workload import parse_workload

N = 4000
COLUMNS = {"x": "bigint", "y": "bigint", "s": "string"}
WINDOW = "SELECT * FROM {t} WHERE x < 800 AND y = 7;\n" * 20
QUERIES = ["SELECT x, y, s FROM {t} WHERE y = 7", "SELECT x, y, s FROM {t} WHERE x < 800 AND y = 7",
           "SELECT x, y, s FROM {t} WHERE x >= 900 AND x < 1200", "SELECT x, y, s FROM {t} WHERE s IS NULL",
           "SELECT x, y, s FROM {t}"]


def quarters(table: str) -> Layout:
    k = Kind.INTEGER
    parts = [Partition(i + 1, (("x", ValueSet.range(k, i * 1000, (i + 1) * 1000, True, False)),)) for i in range(3)]
    parts.append(Partition(4, (("x", ValueSet.range(k, 3000, None).union(ValueSet.only_null(k))),)))
    return with_generation(Layout(table, "quarters", tuple(parts), kinds=(("x", k),), types=(("x", "bigint"),)))


def by_y(table: str) -> Layout:
    k = Kind.INTEGER
    parts = [Partition(1, (("y", ValueSet.points(k, [7])),)), Partition(2, (("y", ValueSet.points(k, [7]).complement()),))]
    return Layout(table, "y", tuple(parts), kinds=(("y", k),), types=(("y", "bigint"),))


def _laid_out(spark, t: str, tmp_path, window: str) -> tuple[dict, CostModel]:
    """``t`` loaded and laid out in quarters; the queries' results before, and the window's model."""
    spark.sql(f"CREATE TABLE {t} (x BIGINT, y BIGINT, s STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {t} SELECT id, id % 100, CASE WHEN id % 9 = 0 THEN NULL ELSE CAST(id AS STRING) END "
              f"FROM range({N})")
    source = {q: _rows(spark, q.format(t=t)) for q in QUERIES}
    apply_layout(SparkRunner(spark), quarters(t), drop_old=True)
    stats = gather_stats(spark, t, sample_rows=N, cache_dir=tmp_path / "stats")
    model = CostModel(analyze_table(parse_workload(window.format(t=t)), t, COLUMNS), stats,
                      CostParams(partition_overhead_rows=10, file_overhead_rows=1))
    return source, model


@pytest.fixture
def laid_out(spark, fresh_db, tmp_path):
    t = f"{fresh_db}.events"
    source, model = _laid_out(spark, t, tmp_path, WINDOW)
    return t, plan_relayout(model, quarters(t), by_y(t)), source


def _rows(spark, text):
    return sorted(tuple(r) for r in spark.sql(text).collect())


def _files(spark, table) -> dict[str, tuple]:
    out = {}
    for f in spark.table(table).inputFiles():
        p = urlparse(f).path
        st = os.stat(p)
        out[p] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


def _check(spark, t, plan, source):
    for q in QUERIES:
        text = q.format(t=t)
        assert _rows(spark, text) == source[q], text  # plain
        assert sorted(tuple(r) for r in planner_sql(spark, text).collect()) == source[q], text  # rewritten now
        for layout in (plan.current, plan.layout):  # rewritten earlier, for either layout (stale SQL)
            stale, _ = rewrite_query(text, {t: layout}, dialect="spark")
            assert _rows(spark, stale) == source[q], stale


def test_partial_relayout_recuts_one_partition_and_leaves_the_rest_alone(spark, laid_out):
    t, plan, source = laid_out
    first = plan.current.partitions[0].id
    assert plan.chosen == (first,)
    before = _files(spark, t)
    report = relayout(spark, plan)
    assert report.rows == 1000 and not report.dropped_old
    after = _files(spark, t)
    untouched = {p: v for p, v in before.items() if f"planner_pid={first}/" not in p}
    assert untouched and all(after.get(p) == v for p, v in untouched.items())  # same files, same inodes
    parts = {r[0] for r in spark.sql(f"SHOW PARTITIONS {t}").collect()}
    assert f"planner_pid={first}" not in parts and all(f"planner_pid={i}" in parts for i in plan.new_ids)
    _check(spark, t, plan, source)
    assert _rows(spark, f"SELECT x, y, s FROM {report.backup}") == \
        sorted(r for r in source[QUERIES[-1]] if r[0] < 1000)  # the old partition, kept
    from hive_integration.metastore.layouts import SparkCatalogLayouts

    db, name = t.split(".")
    assert SparkCatalogLayouts(spark).lookup(db, name).layout == plan.layout
    # a count-form query under the new layout reads only y = 7 rows of the re-cut quarter
    explain = planner_sql(spark, f"SELECT count(*) FROM {t} WHERE x < 800 AND y = 7")
    assert explain.collect()[0][0] == 8


def test_a_crash_after_verify_resumes_and_drop_old_deletes_the_old_files(spark, laid_out):
    t, plan, source = laid_out
    with pytest.raises(SimulatedCrash):
        relayout(spark, plan, crash_at="after_verify")
    _check(spark, t, plan, source)  # the table is as it was
    report = relayout(spark, plan, drop_old=True, break_lease=True)
    assert report.resumed and report.dropped_old
    _check(spark, t, plan, source)
    again = relayout(spark, plan)  # already done: nothing happens
    assert again.resumed
    _check(spark, t, plan, source)


def test_a_drift_over_the_whole_table_is_laid_out_as_the_target_through_the_same_swap(spark, fresh_db, tmp_path):
    t = f"{fresh_db}.events_all"
    source, model = _laid_out(spark, t, tmp_path, "SELECT * FROM {t} WHERE y = 7;\n" * 20)
    plan = plan_relayout(model, quarters(t), replace(by_y(t), order=Ordering("sort", ("x",))))
    assert plan.whole and plan.chosen == quarters(t).known_ids
    report = relayout(spark, plan)
    assert report.rows == N
    parts = {r[0] for r in spark.sql(f"SHOW PARTITIONS {t}").collect()}
    assert parts == {f"planner_pid={i}" for i in plan.new_ids}
    _check(spark, t, plan, source)
    assert _rows(spark, f"SELECT x, y, s FROM {report.backup}") == source[QUERIES[-1]]  # all kept
    assert planner_sql(spark, f"SELECT count(*) FROM {t} WHERE y = 7").collect()[0][0] == N // 100


def test_a_table_whose_folder_a_uri_escapes_keeps_its_files_under_it_and_its_old_partitions(spark, fresh_db,
                                                                                             tmp_path):
    # the metastore names folders by URI ("my%20db%25"); read as path strings, the staging folder
    # landed in a new folder "my%20db%25" beside the table's and the old partition was not found
    # to keep (the report named a backup table that was never made)
    home = tmp_path / "my db%"
    db = f"{fresh_db}_spaced"
    spark.sql(f"CREATE DATABASE {db} LOCATION '{home}'")
    try:
        t = f"{db}.events"
        source, model = _laid_out(spark, t, tmp_path, WINDOW)
        plan = plan_relayout(model, quarters(t), by_y(t))
        with pytest.raises(SimulatedCrash):
            relayout(spark, plan, crash_at="after_verify")
        report = relayout(spark, plan, break_lease=True)
        _check(spark, t, plan, source)
        assert _rows(spark, f"SELECT x, y, s FROM {report.backup}") == sorted(r for r in source[QUERIES[-1]] if r[0] < 1000)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["my db%", "stats"]
        assert all(unquote(urlparse(f).path).startswith(f"{home}/") for f in spark.table(t).inputFiles())
    finally:
        spark.sql(f"DROP DATABASE {db} CASCADE")


def test_an_orc_table_is_laid_out_and_re_cut_in_orc(spark, fresh_db, tmp_path):
    # the staging table was Parquet whatever the table's format: its pieces, swapped into an ORC
    # table's partitions, were Parquet files the ORC reader failed on (the table could not be read)
    t = f"{fresh_db}.events_orc"
    spark.sql(f"CREATE TABLE {t} (x BIGINT, y BIGINT, s STRING) STORED AS ORC")
    spark.sql(f"INSERT INTO {t} SELECT id, id % 100, CASE WHEN id % 9 = 0 THEN NULL ELSE CAST(id AS STRING) END "
              f"FROM range({N})")
    source = {q: _rows(spark, q.format(t=t)) for q in QUERIES}
    report = apply_layout(SparkRunner(spark), quarters(t), drop_old=True)  # the table's own format by default
    assert any("writing ORC" in s for s in report.steps)
    stats = gather_stats(spark, t, sample_rows=N, cache_dir=tmp_path / "stats")
    model = CostModel(analyze_table(parse_workload(WINDOW.format(t=t)), t, COLUMNS), stats,
                      CostParams(partition_overhead_rows=10, file_overhead_rows=1))
    plan = plan_relayout(model, quarters(t), by_y(t))
    assert plan.chosen
    report = relayout(spark, plan)
    _check(spark, t, plan, source)
    assert {urlparse(f).path.rsplit(".", 1)[-1] for f in spark.table(t).inputFiles()} == {"orc"}
    # the old partition, kept in an ORC backup it can be read from
    assert _rows(spark, f"SELECT x, y, s FROM {report.backup}") == sorted(r for r in source[QUERIES[-1]] if r[0] < 1000)


def test_a_text_table_is_laid_out_in_parquet(spark, fresh_db):
    t = f"{fresh_db}.events_text"
    spark.sql(f"CREATE TABLE {t} (x BIGINT, y BIGINT, s STRING) STORED AS TEXTFILE")
    spark.sql(f"INSERT INTO {t} SELECT id, id % 100, CAST(id AS STRING) FROM range(100)")
    report = apply_layout(SparkRunner(spark), quarters(t), drop_old=True)
    assert any("writing PARQUET" in s for s in report.steps)
    assert all(f.endswith(".parquet") for f in spark.table(t).inputFiles())


def test_an_external_table_stays_external_beside_its_folder(spark, fresh_db, tmp_path):
    # apply made an external table (data in the user's lake folder) a managed one in the warehouse;
    # a re-layout moved its old partitions into a managed backup (a rename across file systems on a
    # real lake)
    t = f"{fresh_db}.events_ext"
    lake = tmp_path / "lake"
    spark.sql(f"CREATE EXTERNAL TABLE {t} (x BIGINT, y BIGINT, s STRING) STORED AS PARQUET LOCATION '{lake}/events'")
    spark.sql(f"INSERT INTO {t} SELECT id, id % 100, CASE WHEN id % 9 = 0 THEN NULL ELSE CAST(id AS STRING) END "
              f"FROM range({N})")
    source = {q: _rows(spark, q.format(t=t)) for q in QUERIES}
    report = apply_layout(SparkRunner(spark), quarters(t), drop_old=True)
    assert any("(an external table: its files stay in" in s for s in report.steps)

    def storage(name):
        rows = {r[0]: r[1] for r in spark.sql(f"DESCRIBE FORMATTED {name}").collect()}
        return rows["Type"], rows["Location"]

    kind, where = storage(t)
    assert kind == "EXTERNAL" and where.startswith(f"file:{lake}/events__layout_")
    assert (lake / "events").is_dir()  # the old files, left where they were
    stats = gather_stats(spark, t, sample_rows=N, cache_dir=tmp_path / "stats")
    model = CostModel(analyze_table(parse_workload(WINDOW.format(t=t)), t, COLUMNS), stats,
                      CostParams(partition_overhead_rows=10, file_overhead_rows=1))
    plan = plan_relayout(model, quarters(t), by_y(t))
    relayout_report = relayout(spark, plan)
    _check(spark, t, plan, source)
    kind, backup_home = storage(relayout_report.backup)
    assert kind == "EXTERNAL" and backup_home.startswith(f"file:{lake}/events__layout_") and backup_home != where
    assert _rows(spark, f"SELECT x, y, s FROM {relayout_report.backup}") == \
        sorted(r for r in source[QUERIES[-1]] if r[0] < 1000)


"""The aggregate index against Spark: random aggregate queries, answered through the index and on
the plain table, must agree exactly (issue 32). Also: the index is really used, it goes stale
safely (append, a plain INSERT, a re-apply, saved SQL), and every path (``planner.sql``, the
saved rewrite, ``planner rewrite``/``explain``) gets the same answers.

The table mixes every type the issue names (DECIMAL of scales 0, 1, 2 and 18, DOUBLE, FLOAT, INT,
BIGINT, DATE, STRING) with NULLs in every column, and is laid out by ranges of ``i`` (NULL with the
last one), sorted by ``dt``, with an index whose grid cuts ``dt`` (by month), ``d`` (by tenths) and
``i`` (by tens), grouping by ``s`` and ``g``. The queries draw random boxes on those columns (and
now and then a predicate on another column, an aggregate the index does not keep, or a shape it
cannot answer, which must fall back to a scan and still agree), with and without GROUP BY, under
ANSI on and off, through ``planner.sql`` and through the saved rewrite (``planner rewrite``: no
session settings).

Tolerance, for aggregates Spark computes by adding doubles, and for those only: ``sum`` and ``avg``
of a DOUBLE or FLOAT, and ``avg`` of an integer (Spark averages integers by adding them as
doubles; on ``b``, whose values reach 10^15, two runs of the *plain* query on differently ordered
copies already differ in the last digits). Spark adds in an order of its own (tasks, partitions),
the index in another (per-cell partial sums). Two orders of adding n doubles differ by at most
``n · 2^-52 · Σ|x|`` (each of the n - 1 additions rounds by at most half an ulp of a partial sum,
itself at most Σ|x|), so a sum may differ by that and an average (the sum over its n values,
divided by n) by ``2^-52 · Σ|x|``; the comparison takes n and Σ|x| over the whole table, an upper
bound for any subset. Every other value (DECIMAL sums and averages, counts, minima, maxima, group
keys), and every type, must be equal.

CI runs ``QUERIES`` (200) deterministic queries; ``PLANNER_TESTS=long`` runs 2,000 with fresh seeds.
"""
from __future__ import annotations

import datetime as dt
import math
import os
import random
from decimal import Decimal

import pytest
from sizes import LONG

import planner
from hive_integration.apply.apply_layout import SparkRunner, apply_layout
from hive_integration.metastore.layouts import SparkCatalogLayouts, rewritten
from planner.cnf.valueset import ValueSet
from planner.model.aggregate_index import AggregateIndex, GridDim, IndexedExpr
from planner.model.layout import Layout, Ordering, Partition, with_generation
from planner.semantics.kinds import Kind

DB = "aggidx"
N_ROWS = 20_000
QUERIES = 2000 if LONG else 200
# AGGREGATE_SEED=n replays a run; AGGREGATE_RANDOM=1 (with PLANNER_TESTS=long) draws a fresh seed
SEED = int(os.environ.get("AGGREGATE_SEED") or (random.randrange(1 << 30) if LONG and os.environ.get("AGGREGATE_RANDOM") else 32))
USED_SHARE = 0.35  # at least this share of the random queries must take cells from the index

COLUMNS = {"k": "bigint", "i": "int", "d": "decimal(12,2)", "dt": "date", "s": "string", "g": "int", "x": "double",
           "f": "float", "b": "bigint", "z": "decimal(5,0)", "w": "decimal(20,1)", "h": "decimal(38,18)"}
DATE0 = dt.date(2020, 1, 1)
D_VALUES = [Decimal(v) / 4 for v in range(-40, 400)]  # quarters from -10.00 to 99.75


def _rows(n: int, seed: int = 7) -> list[str]:
    r = random.Random(seed)

    def maybe(v, p=0.06):
        return "NULL" if r.random() < p else v

    out = []
    for k in range(n):
        i = maybe(str(r.randint(-30, 149)))
        d = maybe(f"CAST({r.choice(D_VALUES)} AS DECIMAL(12,2))")
        day = maybe(f"DATE '{(DATE0 + dt.timedelta(days=r.randint(0, 729))).isoformat()}'")
        s = maybe(f"'{r.choice('abcd')}'")
        g = maybe(str(r.randint(0, 4)))
        x = maybe(repr(r.uniform(-1000, 1000)))
        f = maybe(f"CAST({r.uniform(-50, 50):.3f} AS FLOAT)")
        b = maybe(str(r.randint(-10 ** 15, 10 ** 15)))
        z = maybe(f"CAST({r.randint(-999, 999)} AS DECIMAL(5,0))")
        w = maybe(f"CAST({r.randint(-10 ** 6, 10 ** 6) / 10:.1f} AS DECIMAL(20,1))")
        h = maybe(f"CAST({r.uniform(-100, 100):.18f} AS DECIMAL(38,18))")
        out.append(f"({k}, {i}, {d}, {day}, {s}, {g}, {x}, {f}, {b}, {z}, {w}, {h})")
    return out


def _index() -> AggregateIndex:
    months = tuple(dt.date(2020 + m // 12, m % 12 + 1, 1) for m in range(1, 24))
    exprs = [("`d`", "decimal(12,2)"), ("`i`", "int"), ("`x`", "double"), ("`f`", "float"), ("`b`", "bigint"),
             ("`z`", "decimal(5,0)"), ("`w`", "decimal(20,1)"), ("`h`", "decimal(38,18)"),
             ("`d` * `i`", "decimal(23,2)"), ("`dt`", "date"), ("`s`", "string")]
    return AggregateIndex(
        # d and i built by value (grouped by the value, the groups bucketed: a staged build), dt by a
        # search on every row: both builds, merged in one cells table
        dims=(GridDim("dt", "date", months),
              GridDim("d", "decimal(12,2)", tuple(Decimal(v) for v in range(0, 100, 10)), by_value=True),
              GridDim("i", "int", tuple(range(0, 150, 10)), by_value=True)),
        groups=(("g", "int"), ("s", "string")),
        exprs=tuple(IndexedExpr(k, t) for k, t in sorted(exprs)))


def _layout(table: str, index: AggregateIndex | None = None, cuts=(0, 50, 100)) -> Layout:
    K = Kind.INTEGER
    edges = [None, *cuts, None]
    parts = []
    for n, (lo, hi) in enumerate(zip(edges, edges[1:]), 1):
        vs = ValueSet.range(K, lo, hi, True, False) if lo is not None or hi is not None else ValueSet.everything(K)
        if hi is None:
            vs = vs.union(ValueSet.only_null(K))
        parts.append(Partition(n, (("i", vs),)))
    return with_generation(Layout(table, "test ranges of i", tuple(parts), Ordering("sort", ("dt",)),
                                  kinds=(("i", K),), types=(("i", "int"),), aggregate_index=index))


@pytest.fixture(scope="module")
def table(spark):
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")
    spark.sql(f"CREATE DATABASE {DB}")
    src = f"{DB}.t"
    spark.sql(f"CREATE TABLE {src} ({', '.join(f'{c} {t}' for c, t in COLUMNS.items())}) STORED AS PARQUET")
    rows = _rows(N_ROWS)
    for i in range(0, len(rows), 5000):
        spark.sql(f"INSERT INTO {src} VALUES {', '.join(rows[i:i + 5000])}")
    spark.sql(f"CREATE TABLE {DB}.plain STORED AS PARQUET AS SELECT * FROM {src}")
    saved = spark.conf.get("spark.sql.ansi.enabled")
    apply_layout(SparkRunner(spark), _layout(src, _index()), drop_old=True)
    yield src
    spark.conf.set("spark.sql.ansi.enabled", saved)
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")


# ---- random queries ------------------------------------------------------------------------------
AGGREGATES = ["count(*)", "count(1)", "count({e})", "sum({e})", "avg({e})", "min({e})", "max({e})"]
NUMERIC = ["d", "i", "x", "f", "b", "z", "w", "h", "d * i"]
ANY = NUMERIC + ["dt", "s"]
NOT_KEPT = ["sum(d + 1)", "count(DISTINCT g)", "max(k)", "avg(i * 2)"]


def _date(r) -> str:
    return f"DATE '{(DATE0 + dt.timedelta(days=r.randint(-20, 750))).isoformat()}'"


def _predicate(r: random.Random) -> str:
    kind = r.random()
    if kind < 0.3:
        a, b = sorted([_date(r), _date(r)])
        return r.choice([f"dt >= {a}", f"dt < {b}", f"dt BETWEEN {a} AND {b}", f"dt >= {a} AND dt < {b}",
                         "dt IS NOT NULL", f"(dt < {a} OR dt IS NULL)"])
    if kind < 0.6:
        a, b = sorted([r.choice(D_VALUES), r.choice(D_VALUES)])
        return r.choice([f"d >= {a}", f"d <= {b}", f"d BETWEEN {a} AND {b}", f"d > {a} AND d < {b}",
                         f"d IN ({a}, {b}, 50)", f"d = {a}", "d IS NULL", f"NOT d BETWEEN {a} AND {b}"])
    if kind < 0.85:
        a, b = sorted([r.randint(-40, 160), r.randint(-40, 160)])
        return r.choice([f"i < {b}", f"i >= {a}", f"i BETWEEN {a} AND {b}", f"(i < {a} OR i IS NULL)",
                         f"i <> {a}", f"i IN ({a}, {b})"])
    return r.choice(["x > 0", "s = 'b'", "g IN (1, 2)", "k < 9000", "f <= 0.5"])  # not on the grid


def _query(r: random.Random, table: str) -> tuple[str, list]:
    """A random query, and per output column (function, argument) (None for a group column)."""
    picked = []
    for _ in range(r.randint(1, 4)):
        if r.random() < 0.06:
            picked.append(r.choice(NOT_KEPT))
            continue
        a = r.choice(AGGREGATES)
        e = r.choice(NUMERIC if a.split("(")[0] in ("sum", "avg") else ANY)
        picked.append(a.format(e=e))
    groups = r.choice([[], [], ["s"], ["g"], ["s", "g"]])
    meta = [None] * len(groups) + [(a.split("(")[0], a.split("(", 1)[1].rstrip(")")) for a in picked]
    items = list(groups) + [f"{a} AS a{n}" if r.random() < 0.5 else a for n, a in enumerate(picked)]
    where = " AND ".join(_predicate(r) for _ in range(r.choice([0, 1, 1, 2, 2, 3])))
    sql = f"SELECT {', '.join(items)} FROM {table}" + (f" WHERE {where}" if where else "")
    if groups:
        sql += f" GROUP BY {', '.join(groups)}"
        if r.random() < 0.15:
            sql += " HAVING count(*) > 2"
        if r.random() < 0.2:
            sql += f" ORDER BY {', '.join(groups)}"
    return sql, meta


# ---- comparing ------------------------------------------------------------------------------------
def _tolerances(spark, table: str) -> tuple[int, dict[str, float]]:
    """(rows, Σ|e| over the whole table per numeric argument): what the tolerance is made of."""
    exprs = sorted(set(NUMERIC) | {"d + 1", "i * 2"})
    row = spark.sql(f"SELECT count(*), {', '.join(f'sum(abs(CAST({e} AS DOUBLE)))' for e in exprs)} "
                    f"FROM {table}").collect()[0]
    return row[0], {e: float(v or 0.0) for e, v in zip(exprs, row[1:])}


def _tolerance(meta, sizes) -> float | None:
    """The allowed difference of one output column (None: it must be equal)."""
    if meta is None:
        return None
    function, arg = meta
    n, sums = sizes
    if function not in ("sum", "avg") or arg not in sums:
        return None
    floating = arg in ("x", "f")
    integral = arg in ("i", "b", "i * 2")
    if not (floating or (integral and function == "avg")):
        return None  # a DECIMAL, or an integer's sum (a BIGINT): exact
    bound = 2.0 ** -52 * sums[arg]
    return n * bound if function == "sum" else bound


def _run(spark, sql: str):
    try:
        df = spark.sql(sql)
        return [(f.name, f.dataType.simpleString()) for f in df.schema.fields], sorted(map(tuple, df.collect()), key=repr)
    except Exception as e:  # an error must be the same error on both sides
        return "error", type(e).__name__ + ": " + (getattr(e, "getErrorClass", lambda: None)() or str(e).split("\n")[0][:80])


def _close(a, b, tol: float) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, float) and (math.isnan(a) or math.isnan(b)):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= tol


def _same(plain, other, meta, sizes) -> str:
    """'' when the results agree (a double-added aggregate within its tolerance), else what differs.
    ``meta``: per output column (function, argument) or None, as ``_query`` gives it; None for all:
    every column must be equal."""
    if plain[0] == "error" or other[0] == "error":
        return "" if plain == other else f"errors differ: {plain} vs {other}"
    if plain[0] != other[0]:
        return f"schemas differ: {plain[0]} vs {other[0]}"
    if len(plain[1]) != len(other[1]):
        return f"{len(plain[1])} rows vs {len(other[1])}"
    tols = [_tolerance(m, sizes) for m in meta] if meta is not None else [None] * len(plain[0])
    for ra, rb in zip(plain[1], other[1]):
        for (name, type_), a, b, tol in zip(plain[0], ra, rb, tols):
            if tol is not None and type_ == "double":
                if not _close(a, b, tol):
                    return f"{name}: {a!r} vs {b!r} (tolerance {tol:.3g})"
            elif a != b or type(a) is not type(b):
                return f"{name}: {a!r} vs {b!r}"
    return ""


def test_random_aggregates_agree_with_spark(spark, table):
    """QUERIES random queries: same schema, same rows (DOUBLE sums within the bound), both ANSI
    modes, through planner.sql and through the saved rewrite; a fixed share really used the index."""
    r = random.Random(SEED)
    sizes = _tolerances(spark, table)
    used = wrong = 0
    failures = []
    for n in range(QUERIES):
        sql, meta = _query(r, table)
        ansi = "true" if n % 2 == 0 else "false"
        spark.conf.set("spark.sql.ansi.enabled", ansi)
        plain = _run(spark, sql.replace(table, f"{DB}.plain"))
        saved = n % 4 == 1
        text, explanation = rewritten(spark, sql, saved=saved)
        got = _run(spark, text)
        used += bool(explanation is not None and explanation.used)
        why = _same(plain, got, meta, sizes)
        if why:
            wrong += 1
            failures.append(f"{sql}  [ANSI {ansi}, {'saved' if saved else 'planner.sql'}]: {why}\n  ran: {text}")
    spark.conf.set("spark.sql.ansi.enabled", "true")
    print(f"aggregate differential: seed {SEED}, {QUERIES} queries, {used} took cells from the index, {wrong} differ")
    assert wrong == 0, f"{wrong} of {QUERIES} differ (seed {SEED}):\n" + "\n".join(failures[:5])
    assert used >= USED_SHARE * QUERIES, f"only {used} of {QUERIES} queries took cells from the index"


def test_named_paths_agree(spark, table):
    """Q6's shape, a GROUP BY with HAVING and ORDER BY, an empty box, no WHERE at all: through
    planner.sql, the saved rewrite and the CLI's statement processing, each equal to the plain table."""
    from planner.cli.rewrite import process

    queries = [
        f"SELECT sum(d * i) AS revenue FROM {table} WHERE dt >= DATE '2020-03-01' AND dt < DATE '2021-03-01' "
        "AND d BETWEEN 10 AND 30 AND i < 40",
        f"SELECT s, g, count(*), avg(d) AS ad, min(dt), max(s) FROM {table} WHERE i >= 20 GROUP BY s, g "
        "HAVING count(*) > 5 ORDER BY s, g",
        f"SELECT count(*), sum(d), avg(z), avg(w) FROM {table} WHERE dt > DATE '2030-01-01'",
        f"SELECT count(*), sum(h), avg(h), avg(i), avg(z) FROM {table}",
        f"SELECT g, sum(b) FROM {table} WHERE d >= 0 GROUP BY g",  # sum(b) might overflow: not from the index
    ]
    sizes = _tolerances(spark, table)
    for sql in queries:
        plain = _run(spark, sql.replace(table, f"{DB}.plain"))
        for saved in (False, True):
            text, _ = rewritten(spark, sql, saved=saved)
            assert _same(plain, _run(spark, text), None, sizes) == "", (sql, text)
        df = planner.sql(spark, sql)
        through = ([(f.name, f.dataType.simpleString()) for f in df.schema.fields],
                   sorted(map(tuple, df.collect()), key=repr))
        assert _same(plain, through, None, sizes) == "", sql
    path = f"{spark.conf.get('spark.sql.warehouse.dir').removeprefix('file:')}/../named.sql"
    with open(path, "w") as fh:
        fh.write(";\n".join(queries) + ";\n")
    results = process(path, SparkCatalogLayouts(spark), dialect="spark", database=DB, explain=True)
    assert results[0].aggregate is not None and results[0].aggregate.used, results[0].aggregate
    assert results[-1].aggregate is not None and not results[-1].aggregate.used  # the overflow guard
    for sql, res in zip(queries, results):
        plain = _run(spark, sql.replace(table, f"{DB}.plain"))
        assert _same(plain, _run(spark, res.rewritten), None, sizes) == "", res.rewritten


def _copy(spark, name: str, index: AggregateIndex | None = None) -> str:
    src = f"{DB}.{name}"
    spark.sql(f"DROP TABLE IF EXISTS {src}")
    spark.sql(f"CREATE TABLE {src} STORED AS PARQUET AS SELECT * FROM {DB}.plain")
    apply_layout(SparkRunner(spark), _layout(src, index or _index()), drop_old=True)
    return src


Q = "SELECT g, count(*), sum(d), avg(d) FROM {t} WHERE dt >= DATE '2020-02-10' AND d BETWEEN 5 AND 60 GROUP BY g"


def _answer(spark, sql: str):
    return sorted(map(tuple, spark.sql(sql).collect()), key=repr)


def test_stale_index_is_never_used(spark, table):
    """A plain INSERT (bypassing the planner) changes the table's snapshot: planner.sql scans.
    ``planner append`` points the build's view at the table first: SQL saved before it computes
    the cells from the rows, and the rebuilt index answers again. A re-apply under another layout: the saved SQL reads every
    partition of it and takes nothing from the index."""
    src = _copy(spark, "stale")
    q = Q.format(t=src)
    saved_text, explanation = rewritten(spark, q, saved=True)
    assert explanation is not None and explanation.used
    stamp = explanation.stamp
    spark.sql(f"INSERT INTO {src} PARTITION (planner_pid) SELECT k + 100000, i, d, dt, s, g, x, f, b, z, w, h, "
              f"planner_pid FROM {src} WHERE d BETWEEN 10 AND 20")
    want = _answer(spark, f"SELECT g, count(*), sum(d), avg(d) FROM (SELECT * FROM {src}) "
                          "WHERE dt >= DATE '2020-02-10' AND d BETWEEN 5 AND 60 GROUP BY g")
    text, explanation = rewritten(spark, q)
    assert explanation is not None and not explanation.used and "changed" in explanation.reason
    assert _answer(spark, text) == want
    # `planner append`'s steps (planner/cli/append.py): invalidate, insert through the layout's CASE, rebuild
    from hive_integration.spark.cells import after_write, invalidate
    from planner.emit.apply_sql import append_statements

    runner = SparkRunner(spark)
    spark.sql(f"CREATE TABLE {DB}.batch STORED AS PARQUET AS SELECT k + 200000 AS k, i, d, dt, s, g, x, f, b, z, w, h "
              f"FROM {DB}.plain WHERE i < 20")
    layout = SparkCatalogLayouts(spark).lookup(DB, "stale").layout
    status = _status(spark, src, layout)  # `planner status`: the INSERT above bypassed the planner
    assert not status.used and "changed" in status.why_not and status.view == f"{src}__cells_{stamp}"
    invalidate(runner.execute, src)
    files = spark.sql(f"SELECT * FROM {src}__cells_{stamp}").inputFiles()  # the view reads the table now
    assert files and all("/stale/" in f and "/stale__cells/" not in f for f in files), files
    assert _answer(spark, saved_text) == _answer(spark, text)  # the view computes the cells from the rows
    for stmt in append_statements(layout, {c: t for c, t in COLUMNS.items()}, f"{DB}.batch", src, dialect="spark"):
        runner.execute(stmt)
    assert after_write(runner, layout, lambda m: None) is not None
    want = _answer(spark, f"SELECT g, count(*), sum(d), avg(d) FROM (SELECT * FROM {src}) "
                          "WHERE dt >= DATE '2020-02-10' AND d BETWEEN 5 AND 60 GROUP BY g")
    assert _answer(spark, saved_text) == want  # the old build's view computes its cells from the rows
    text, explanation = rewritten(spark, q)
    assert explanation is not None and explanation.used  # rebuilt after the append
    assert _status(spark, src, layout).used
    assert _answer(spark, text) == want
    newer = rewritten(spark, q, saved=True)[0]
    apply_layout(SparkRunner(spark), _layout(src, _index(), cuts=(25, 75)), drop_old=True)  # a new generation
    assert _answer(spark, newer) == want
    assert _answer(spark, rewritten(spark, q)[0]) == want
    # dropped by hand and made again without the layout: the cells table and its views stay behind,
    # and the last build's view cannot compute its cells from the new table (no planner_pid). The
    # apply drops that view: SQL saved against it fails loudly instead of reading old cells.
    latest = rewritten(spark, q, saved=True)[0]
    spark.sql(f"DROP TABLE {src}")
    spark.sql(f"CREATE TABLE {src} STORED AS PARQUET AS SELECT * FROM {DB}.plain")
    apply_layout(SparkRunner(spark), _layout(src, _index()), drop_old=True)
    with pytest.raises(Exception, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql(latest).collect()
    text, explanation = rewritten(spark, q)
    assert explanation is not None and explanation.used
    assert _answer(spark, text) == _answer(spark, Q.format(t=f"{DB}.plain"))
    spark.sql(f"DROP TABLE IF EXISTS {DB}.batch")


def _status(spark, table: str, layout):
    """``planner status``'s section on the index (``planner.cli.status._index``), with the table's
    properties as ``read_window`` reads them."""
    from types import SimpleNamespace

    from planner.cli.status import _index

    db, short = table.split(".", 1)
    properties = dict(SparkCatalogLayouts(spark).lookup(db, short).properties or {})
    return _index(SimpleNamespace(spark=spark, table=table, current=layout, properties=properties))


def test_a_query_run_at_once_checks_the_head_itself(spark, table):
    """``planner.sql``'s text carries no head check of its own (nor does the saved text, which reads
    the build's view): the edge reads the head row, again whenever the cells' files change. An invalidation cut short after it dropped
    the head and before the table's property (a crash between the two), or a cells table dropped by
    hand: ``planner.sql`` scans."""
    src = _copy(spark, "heads")
    q = Q.format(t=src)
    want = _answer(spark, q.replace(src, f"{DB}.plain"))
    head = "`planner_part` = 'head'"
    text, explanation = rewritten(spark, q)
    assert explanation is not None and explanation.used and head not in text
    saved, _ = rewritten(spark, q, saved=True)
    # saved SQL reads the build's view, which the planner points at the table before it writes
    assert head not in saved and f"__cells_{explanation.stamp}`" in saved
    assert _answer(spark, text) == want == _answer(spark, saved)
    spark.sql(f"ALTER TABLE {src}__cells DROP IF EXISTS PARTITION (planner_stamp = '{explanation.stamp}', "
              "planner_part = 'head')")
    text, explanation = rewritten(spark, q)
    assert explanation is not None and not explanation.used and "head row is gone" in explanation.reason
    assert _answer(spark, text) == want == _answer(spark, saved)
    spark.sql(f"DROP TABLE {src}__cells")  # gone altogether: planner.sql still answers, by a scan
    text, explanation = rewritten(spark, q)
    assert explanation is not None and not explanation.used
    assert _answer(spark, text) == want


def test_a_date_dimension_grouped_by_value_builds_the_same_cells(spark, table):
    """The staged build of a range dimension (``GridDim.grouped``: the rows grouped by the date, the
    month buckets searched on the groups) writes the cells of the search on every row: every column
    equal, except that a DOUBLE sum adds the groups' partial sums, in another order, so its last bits
    may differ (as they do between two runs of Spark's own aggregation): within 1e-9 of it."""
    from dataclasses import replace

    from hive_integration.spark.cells import build
    from planner.model.aggregate_index import cells_table

    src = _copy(spark, "grouped")
    layout = SparkCatalogLayouts(spark).lookup(DB, "grouped").layout

    def cells() -> list:
        rows = spark.table(cells_table(src)).where("planner_part = 'cells'").drop("planner_stamp").collect()
        return sorted(map(tuple, rows), key=repr)

    searched = cells()
    index = layout.aggregate_index
    grouped = replace(index, dims=tuple(replace(d, grouped=True) if d.column == "dt" else d for d in index.dims))
    assert not any(d.grouped for d in index.dims) and all(d.staged for d in grouped.dims)
    assert build(spark, replace(layout, aggregate_index=grouped)) is not None
    again = cells()
    assert searched and len(again) == len(searched)
    for a, b in zip(searched, again):
        assert all(math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9) if isinstance(x, float) else x == y and type(x) is type(y)
                   for x, y in zip(a, b)), (a, b)
    spark.sql(f"DROP TABLE IF EXISTS {src}")
    spark.sql(f"DROP TABLE IF EXISTS {cells_table(src)}")

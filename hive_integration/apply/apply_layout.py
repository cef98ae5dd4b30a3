"""Apply a layout to a live table: lease, create, fill, verify, swap, in steps that survive a crash.

    <t>                      the source; holds the lease (planner.apply.owner / .since) while we work
    <t>__planner_new         created from the emitted DDL; planner.apply.state = created|loaded|verified
    <t>__before_<UTC stamp>  the source after the swap (planner.previous on the new table names it)

Why properties and not a lock service: the metastore is the one thing every engine that can run
this shares. Like Hyperspace's operation log the lease is optimistic: write our owner id, read it
back, and read it again right before the swap; SQL gives no compare-and-set on table parameters,
so two runs that write within the same instant could both believe they won until that last check.

Every step can be re-run. A later run reads the state property of ``<t>__planner_new``:

    <t> exists, new table absent or ``created``      -> (drop and) create, fill, verify, swap
    <t> exists, new table ``loaded``/``verified``    -> verify again; reuse it if it matches, else redo
    <t> missing, new table ``verified``, previous P  -> a crash between the two renames: finish the swap
    <t> missing, new table not verified, previous P  -> rename P back to <t>, then start over

One pass over the source. On Spark the INSERT reads the source through ``DataFrame.observe``, which
computes the source's count and checksum from the rows the INSERT reads, so verification reads
only the new table. A resumed run (new table already loaded), another engine, or an observed
checksum that does not match (a retried stage may count twice) read the source again for it.
The same scan of the new table counts the truth of the filtered-query probe that follows
(``hive_integration.apply.probe_check``), whose questions come from the new table's footers.
The write plan (``planner.model.write_plan``) is sized by the source's bytes on disk.

Fault injection: ``fail_at=`` (or ``PLANNER_FAIL_AT``) raises ApplyError at a step and lets the
normal clean-up run; ``crash_at=`` raises ``SimulatedCrash`` (a BaseException) that skips every
clean-up, like a killed process.
"""
from __future__ import annotations

import os
import re
import time
import uuid
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from typing import Callable, Iterator, Mapping, Protocol, Sequence

import sqlglot
from sqlglot import exp

from hive_integration.apply.probe_check import probe_check, probe_items
from hive_integration.spark.catalog_cache import forget
from hive_integration.spark.cells import after_write, invalidate
from hive_integration.spark.step_clock import StepClock
from planner.emit.apply_sql import apply_statements, backup_name
from planner.emit.ddl import (
    TableMetadata,
    create_table_sql,
    layout_from_properties,
    left_out_text,
    replaced_text,
    table_expr,
)
from planner.emit.probe_sql import truth_counts
from planner.errors import ApplyError, Interrupted, LayoutError, LeaseError
from planner.model.layout import Layout, clashing_ids
from planner.model.write_plan import write_plan

OWNER, SINCE = "planner.apply.owner", "planner.apply.since"
STATE, PREVIOUS = "planner.apply.state", "planner.previous"
DEFAULT_LEASE_TTL = 6 * 3600  # seconds
FAULT_POINTS = ("after_create", "before_insert", "after_insert", "after_verify", "between_renames")
NEW_SUFFIX, BACKUP_INFIX = "__planner_new", "__before_"


class SimulatedCrash(BaseException):
    """Test hook: the process 'dies' here; no except-Exception clean-up runs."""


# ---- runners ------------------------------------------------------------------------------------
class Runner(Protocol):
    dialect: str         # how emitted SQL is printed for this engine
    hash_function: str   # a row hash both tables are checked with

    def execute(self, sql: str) -> list[tuple]: ...


class SparkRunner:
    """Statements on a SparkSession (embedded Derby, or a thrift metastore via ``metastore_uri``)."""

    dialect = "spark"
    hash_function = "xxhash64"

    def __init__(self, spark):
        self.spark = spark

    def execute(self, sql: str) -> list[tuple]:
        from hive_integration.spark.spark_errors import spark_errors

        with spark_errors(f"running `{' '.join(sql.split())[:300]}`"):
            return [tuple(r) for r in self.spark.sql(sql).collect()]

    def table_bytes(self, table: str) -> int | None:
        """Bytes of the table's data files (None if they cannot be listed)."""
        from hive_integration.spark.statistics_pass import table_files

        try:
            return sum(size for _, size, _ in table_files(self.spark, table))
        except Exception:  # noqa: BLE001 - only a sizing hint: without it the plan is size-agnostic
            return None

    def column_extremes(self, table: str, columns: Sequence[str]) -> dict[str, tuple]:
        """(min, max) of each of ``columns`` over the table's Parquet footers (no Spark job), for
        the columns every row group of every file gives statistics for; ``{}`` where the files
        cannot be read here. A column of NULLs alone is ``(None, None)``."""
        from hive_integration.spark.footers import table_footers
        from hive_integration.spark.statistics_pass import table_files

        try:
            files = table_footers(self.spark, table, [uri for uri, _, _ in table_files(self.spark, table)])
        except Exception:  # noqa: BLE001 - only a shortcut: the probe scans for its facts instead
            return {}
        if any(f.row_groups is None for f in files):
            return {}
        out: dict[str, tuple] = {}
        for c in columns:
            stats = [g.columns.get(c.lower()) for f in files for g in f.row_groups]
            if any(s is None for s in stats):
                continue  # a row group without statistics: its values are unknown here
            lows = [s.min for s in stats if s.min is not None]
            highs = [s.max for s in stats if s.max is not None]
            out[c] = (min(lows), max(highs)) if lows and highs else (None, None)
        return out

    @contextmanager
    def settings_restored(self, keys: Sequence[str]) -> Iterator[None]:
        """Put the session's values of ``keys`` back afterwards (the emitted SETs are per-write)."""
        saved = {k: self.spark.conf.get(k, None) for k in keys}
        try:
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    self.spark.conf.unset(k)
                else:
                    self.spark.conf.set(k, v)

    def execute_observed(self, sql: str, aggregates: Sequence[exp.Expression], source: str) -> tuple:
        """Run the INSERT ``sql`` and return ``aggregates`` over the rows it read from ``source``,
        computed in the same pass (``DataFrame.observe``): the source is read once. Other tables the
        INSERT reads (a sideways cut's joined tables) are read as they are."""
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        from hive_integration.spark.spark_errors import spark_errors

        tree = sqlglot.parse_one(sql, read="spark")
        wanted = table_expr(source, "spark")
        key = lambda t: (t.name.lower(), t.db.lower())  # noqa: E731
        reads = [t for t in tree.expression.find_all(exp.Table) if key(t) == key(wanted)]
        if not reads:
            raise ApplyError(f"the INSERT does not read {source}")
        view = f"planner_source_{uuid.uuid4().hex}"
        observed = Observation(view)
        names = [f"m{i}" for i in range(len(aggregates))]
        with spark_errors(f"reading {source}"):
            df = self.spark.table(wanted.sql(dialect="spark")).observe(
                observed, *[F.expr(a.sql(dialect="spark")).alias(n) for a, n in zip(aggregates, names)])
            df.createOrReplaceTempView(view)
        for t in reads:
            t.replace(exp.Table(this=exp.to_identifier(view, quoted=True), alias=t.args.get("alias")))
        try:
            self.execute(tree.sql(dialect="spark"))
            got = observed.get
        finally:
            self.spark.catalog.dropTempView(view)
        return tuple(got[n] for n in names)


class HiveServer2Runner:
    """Statements on one HiveServer2 session (SETs persist across ``execute`` calls). ``metastore``:
    the thrift metastore the server's catalog is, when known (the aggregate index and join ranges
    need it, to list the tables' files)."""

    def __init__(self, host: str, port: int, *, dialect: str = "hive", hash_function: str = "hash",
                 metastore: str | None = None, **kw):
        from hive_integration.metastore.hiveserver2 import HiveServer2Client

        self.client = HiveServer2Client(host, port, **kw)
        self.dialect, self.hash_function, self.metastore = dialect, hash_function, metastore

    def execute(self, sql: str) -> list[tuple]:
        return self.client.execute(sql)

    def build_engine(self):
        """Where the aggregate index is built through this session (None without a metastore)."""
        from hive_integration.metastore.hiveserver2_builds import HiveServer2Build

        return None if self.metastore is None else HiveServer2Build(self, self.metastore)

    def ranges_engine(self):
        """Where join ranges are computed through this session (None without a metastore)."""
        from hive_integration.metastore.hiveserver2_builds import HiveServer2Ranges

        return None if self.metastore is None else HiveServer2Ranges(self, self.metastore)

    def close(self) -> None:
        self.client.close()


# ---- catalog reads and writes, as SQL any Hive-compatible engine understands -------------------
@dataclass(frozen=True)
class TableNames:
    db: str | None
    source: str

    @classmethod
    def of(cls, table: str) -> "TableNames":
        t = exp.to_table(table, dialect="hive")
        return cls(t.db.lower() or None, t.name.lower())

    def qualified(self, name: str) -> str:
        return f"{self.db}.{name}" if self.db else name

    def expr(self, name: str, dialect: str) -> exp.Table:
        return table_expr(exp.Table(this=exp.to_identifier(name), db=exp.to_identifier(self.db) if self.db else None),
                          dialect)

    @property
    def new(self) -> str:
        return self.source + NEW_SUFFIX


def sibling_location(location: str) -> str:
    """A new folder beside an external table's ``location`` for its laid-out copy: same parent
    (same file system, bucket and permissions), the folder's name with ``__layout_<random>``
    (an earlier layout's suffix replaced, so re-applies do not grow the name)."""
    base = location.rstrip("/")
    parent, _, name = base.rpartition("/")
    if not name or not parent or parent.endswith(":") or parent.endswith(":/") or parent.endswith("//"):
        raise ApplyError(f"the external table's location {location} has no parent folder to write the laid-out "
                         "copy beside it; move the table into a folder first")
    name = re.sub(r"__layout_[0-9a-f]+$", "", name)
    return f"{parent}/{name}__layout_{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True)
class SourceTable:
    """What a laid-out copy of a table keeps of it, from one ``DESCRIBE FORMATTED`` and its
    properties: its file format (``PARQUET``/``ORC``, None for others), whether it is external and
    where, its comments and its users' properties."""

    file_format: str | None
    external: bool
    location: str | None
    metadata: TableMetadata

    def copy_location(self) -> str | None:
        """Where an external table's laid-out copy goes (a new folder beside it); None: managed."""
        return sibling_location(self.location) if self.external and self.location else None


def describe_source(runner: "Runner", table: str) -> SourceTable:
    """``SourceTable`` of ``table`` (``db.t`` or ``t``)."""
    names = TableNames.of(table)
    return Catalog(runner, names).source_table(names.source)


class Catalog:
    def __init__(self, runner: Runner, names: TableNames):
        self.runner, self.names = runner, names

    def sql(self, name: str) -> str:
        return self.names.expr(name, self.runner.dialect).sql(dialect=self.runner.dialect)

    def run(self, statement: exp.Expression | str) -> list[tuple]:
        text = statement if isinstance(statement, str) else statement.sql(dialect=self.runner.dialect)
        return self.runner.execute(text)

    def tables(self) -> set[str]:
        cmd = "SHOW TABLES" + (f" IN {exp.to_identifier(self.names.db, quoted=True).sql(self.runner.dialect)}"
                               if self.names.db else "")
        # Spark: (namespace, tableName, isTemporary); Hive: (tab_name,)
        return {str(r[1] if len(r) >= 2 else r[0]).strip().lower() for r in self.run(exp.Command(this=cmd))}

    def exists(self, name: str) -> bool:
        return name in self.tables()

    def columns(self, name: str) -> dict[str, str]:
        from hive_integration.spark.columns import (
            columns_from_describe,  # the reader advise uses too
        )

        return columns_from_describe(self.run(exp.Describe(this=self.names.expr(name, self.runner.dialect))))

    def _formatted(self, name: str) -> list[tuple]:
        return self.run(exp.Describe(this=self.names.expr(name, self.runner.dialect), style="FORMATTED"))

    def storage(self, name: str) -> tuple[bool, str | None]:
        """(external?, location as a path string)."""
        from hive_integration.spark.columns import storage_from_describe_formatted

        return storage_from_describe_formatted(self._formatted(name))

    def source_table(self, name: str) -> SourceTable:
        from hive_integration.spark.columns import (
            comment_from_describe_formatted,
            comments_from_describe,
            file_format_of,
            partition_columns_from_describe_formatted,
            storage_from_describe_formatted,
        )

        rows = self._formatted(name)
        metadata = TableMetadata.of(comment_from_describe_formatted(rows), comments_from_describe(rows),
                                    self.properties(name), partition_columns_from_describe_formatted(rows))
        return SourceTable(file_format_of(rows), *storage_from_describe_formatted(rows), metadata)

    def properties(self, name: str) -> dict[str, str]:
        rows = self.run(exp.Command(this=f"SHOW TBLPROPERTIES {self.sql(name)}"))
        return {str(r[0]).strip(): "" if r[1] is None else str(r[1]).strip() for r in rows if len(r) >= 2}

    def set_properties(self, name: str, props: Mapping[str, str]) -> None:
        pairs = [exp.Property(this=exp.Literal.string(k), value=exp.Literal.string(str(v))) for k, v in props.items()]
        self.run(exp.Alter(this=self.names.expr(name, self.runner.dialect), kind="TABLE",
                           actions=[exp.AlterSet(expressions=[exp.Properties(expressions=pairs)])]))

    def unset_properties(self, name: str, keys: list[str]) -> None:
        quoted = ", ".join(exp.Literal.string(k).sql(self.runner.dialect) for k in keys)
        self.run(exp.Command(this=f"ALTER TABLE {self.sql(name)} UNSET TBLPROPERTIES IF EXISTS ({quoted})"))

    def drop(self, name: str) -> None:
        self.run(exp.Drop(tables=[self.names.expr(name, self.runner.dialect)], kind="TABLE", exists=True))

    def rename(self, old: str, new: str) -> None:
        d = self.runner.dialect
        self.run(exp.Alter(this=self.names.expr(old, d), kind="TABLE",
                           actions=[exp.AlterRename(this=self.names.expr(new, d))]))

    def checksum_aggregates(self, columns: Mapping[str, str]) -> list[exp.Expression]:
        """``count(*)``, the sum of a row hash over all columns, and per-column non-NULL counts.

        The sum is order independent, so two tables holding the same multiset of rows agree. The
        per-column counts catch what the hash misses: Spark's hashes skip NULLs, so (NULL, 1) and
        (1, NULL) hash alike. Maps cannot be hashed in Spark and are left to the counts. All of it
        is one aggregate: one scan of a table.

        A 64-bit hash (Spark's ``xxhash64``) is summed in three 21-bit slices, each a BIGINT sum
        that cannot overflow below 2^42 rows: together they are the exact sum, without the DECIMAL
        arithmetic (an object per row) a sum of 64-bit values needs. Hive's 32-bit
        ``hash`` keeps the DECIMAL sum (a BIGINT sum of it overflows from 2^32 rows).
        """
        refs = [exp.column(exp.to_identifier(c, quoted=True)) for c in columns]
        hashable = [r for r, t in zip(refs, columns.values()) if not t.startswith("map")]
        aggs: list[exp.Expression] = [exp.Count(this=exp.Star())]
        if hashable:
            h = exp.Anonymous(this=self.runner.hash_function, expressions=[r.copy() for r in hashable])
            if self.runner.hash_function == "xxhash64":
                aggs += [exp.Sum(this=s) for s in _slices(h, HASH_SLICE_BITS)]
            else:
                aggs.append(exp.Sum(this=exp.Cast(this=h, to=exp.DataType.build("DECIMAL(38,0)"))))
        aggs += [exp.Count(this=r.copy()) for r in refs]
        return aggs

    def checksum(self, name: str, columns: Mapping[str, str], where: exp.Expression | None = None,
                 carried: list | None = None, carry: Sequence[exp.Expression] = ()) -> tuple:
        """``checksum_aggregates`` of table ``name`` (of its rows where ``where`` holds), in one scan.
        ``carry``: more aggregates the same scan computes, their values put into ``carried``."""
        aggs = self.checksum_aggregates(columns)
        query = exp.select(*aggs, *[a.copy() for a in carry]).from_(self.names.expr(name, self.runner.dialect))
        row = self.run(query.where(where) if where is not None else query)[0]
        if carried is not None:
            carried[:] = row[len(aggs):]
        return checksum_values(row[:len(aggs)])

    def bytes(self, name: str) -> int | None:
        sizer = getattr(self.runner, "table_bytes", None)
        return sizer(self.names.qualified(name)) if sizer else None


HASH_SLICE_BITS = 21  # a 64-bit hash in three slices: top (signed, 22 bits), middle, low


def _slices(h: exp.Expression, bits: int) -> list[exp.Expression]:
    """``shiftright(h, 2b)``, ``shiftright(h, b) & m``, ``h & m`` (m = 2^b - 1): a 64-bit ``h`` is
    their sum weighted by 2^2b, 2^b and 1, so the three sums over a table fix the sum of ``h``."""
    mask = exp.Literal.number((1 << bits) - 1)

    def shifted(by: int) -> exp.Expression:
        return exp.Anonymous(this="shiftright", expressions=[h.copy(), exp.Literal.number(by)])

    return [shifted(2 * bits), exp.BitwiseAnd(this=shifted(bits), expression=mask.copy()),
            exp.BitwiseAnd(this=h.copy(), expression=mask.copy())]


def checksum_values(row: Sequence) -> tuple:
    return tuple(None if v is None else Decimal(str(v)) for v in row)


@contextmanager
def write_settings_restored(runner: Runner, statements: Sequence[str]) -> Iterator[None]:
    """The emitted ``SET k = v`` statements last as long as the write (where the runner can)."""
    keys = [s.split("=", 1)[0].split(None, 1)[1].strip() for s in statements if s.upper().startswith("SET ")]
    restore = getattr(runner, "settings_restored", None)
    if restore is None or not keys:
        yield
    else:
        with restore(keys):
            yield


# ---- the report ---------------------------------------------------------------------------------
@dataclass
class ApplyReport:
    table: str
    backup: str
    layout: str
    rows: int = 0
    statements: int = 0
    seconds: float = 0.0
    dropped_old: bool = False
    resumed: str | None = None
    already_applied: bool = False  # the table had this layout already: nothing was done
    steps: list[str] = field(default_factory=list)
    step_seconds: dict[str, float] = field(default_factory=dict)  # where the time went, step by step (StepClock)
    join_range_seconds: dict[str, float] = field(default_factory=dict)  # the join ranges' step, part by part

    def to_json(self) -> dict:
        return asdict(self)

    def text(self) -> str:
        if self.already_applied:
            kept = f"; the previous table is kept as {self.backup}" if self.backup else ""
            return f"{self.table} already has this layout ({self.layout}){kept}: nothing to do"
        lines = [f"applied {self.layout} to {self.table}: {self.rows:,} rows verified in {self.seconds:.1f} s"]
        if self.step_seconds:
            lines.append("steps: " + ", ".join(f"{k} {v:.1f} s" for k, v in self.step_seconds.items()))
        if self.resumed:
            lines.append(f"resumed: {self.resumed}")
        lines.append(f"previous table {'dropped' if self.dropped_old else 'kept as'} {self.backup}")
        return "\n".join(lines)


# ---- lease --------------------------------------------------------------------------------------
# what a lease's holder is doing to the table (the owner id starts with it), for the refusal's message
LEASE_PURPOSES = {"apply": "applied", "relayout": "laid out again", "append": "appended to"}


def acquire_lease(cat: Catalog, table: str, *, ttl: float = DEFAULT_LEASE_TTL, break_lease: bool = False,
                  owner: str | None = None, purpose: str = "apply") -> str:
    """Take ``table``'s lease for ``purpose`` (a key of ``LEASE_PURPOSES``); returns the owner id.
    Apply, relayout and append each hold it while they change the table, so none of them loses
    the others' rows."""
    owner = owner or f"{purpose}-{uuid.uuid4().hex}"
    _check_lease(cat, table, None, ttl, break_lease)
    cat.set_properties(table, {OWNER: owner, SINCE: str(int(time.time()))})
    _check_lease(cat, table, owner, ttl, break_lease=False)
    return owner


def _check_lease(cat: Catalog, table: str, owner: str | None, ttl: float, break_lease: bool) -> None:
    props = cat.properties(table)
    held, since = props.get(OWNER), props.get(SINCE, "0")
    if not held or held == owner or break_lease:
        return
    try:
        age = time.time() - float(since)
    except ValueError:
        age = float("inf")
    if owner is not None or age < ttl:
        doing = LEASE_PURPOSES.get(held.split("-", 1)[0], "applied")
        raise LeaseError(f"{cat.names.qualified(table)} is being {doing} by another run (owner {held}, "
                         f"since {int(age)} s ago; leases expire after {int(ttl)} s). If that run crashed, "
                         "re-run with --break-lease")


def release_lease(cat: Catalog, table: str, owner: str) -> None:
    if cat.exists(table) and cat.properties(table).get(OWNER) == owner:
        cat.unset_properties(table, [OWNER, SINCE])


# ---- the steps ----------------------------------------------------------------------------------
def _attributes_columns(layout: Layout) -> set[str]:
    joined = dict(layout.joined)
    cols = {a for a in layout.attributes if a not in dict(layout.derived) and a not in joined}
    cols |= {c.path.hops[0].column for c in joined.values()}  # where a sideways cut's join starts
    for _, pair in layout.derived:
        cols |= {pair.left, pair.right}
    return {c.lower() for c in cols | set(layout.order.columns) if c not in dict(layout.derived)}


def source_columns(cat: Catalog, layout: Layout, expected: Mapping[str, str] | None = None) -> dict[str, str]:
    """The source's columns, checked against the layout (and the advice's DDL when given)."""
    name = cat.names.source
    cols = cat.columns(name)
    pcol = layout.partition_column.lower()
    if pcol in cols and "planner.layout.parts" in cat.properties(name):
        cols.pop(pcol)  # re-laying out a table this planner laid out before
    missing = sorted(_attributes_columns(layout) - set(cols))
    if missing:
        raise ApplyError(f"{cat.names.qualified(name)} has no column(s) {', '.join(missing)} that the layout uses; "
                         "was the layout made for another table?")
    if expected is not None:
        want = {k.lower(): v.lower().replace(" ", "") for k, v in expected.items()}
        have = {k: v.replace(" ", "") for k, v in cols.items()}
        if want != have:
            diff = sorted(set(want.items()) ^ set(have.items()))
            raise ApplyError(f"{cat.names.qualified(name)} no longer has the schema the advice was made for "
                             f"(differences: {diff}); run `planner advise` again")
    return cols


def check_sideways_keys(cat: Catalog, layout: Layout) -> None:
    """A layout with sideways cuts joins every row along its joined attributes' paths
    (``planner.emit.apply_sql.joined_source``): every hop must join a unique key today, or rows
    would be written more than once. Checked before any write (apply, append, re-layout)."""
    from planner.emit.join_sql import key_counts

    seen = set()
    for _, column in layout.joined:
        for hop in column.path.hops:
            if (hop.table, hop.key) in seen:
                continue
            seen.add((hop.table, hop.key))
            try:
                total, distinct = cat.run(key_counts(hop.table, hop.key))[0]
            except Exception as e:  # gone or unreadable: the write cannot compute the cut
                raise ApplyError(f"the layout cuts on {column.describe()}, but {hop.table} cannot be read: "
                                 f"{str(e).splitlines()[0][:200]}") from None
            if total != distinct:
                raise ApplyError(f"the layout cuts on {column.describe()}, but {hop.table}.{hop.key} is no longer "
                                 f"unique ({total:,} rows, {distinct:,} keys): joining it would repeat rows; "
                                 "advise again")


def _check_ids(cat: Catalog, layout: Layout) -> None:
    """Refuse a layout whose partition ids name other regions in the table or one of its backups:
    SQL rewritten for one would read a wrong subset of the other (``planner.model.layout``)."""
    src = cat.names.source
    for name in [src] + sorted(t for t in cat.tables() if t.startswith(src + BACKUP_INFIX)):
        props = cat.properties(name)
        if "planner.layout.parts" not in props:
            continue
        try:
            old = layout_from_properties(props)
        except LayoutError:
            continue
        clash = clashing_ids(layout, old)
        if clash:
            raise ApplyError(f"partition ids {clash[:5]} of this layout name other regions in "
                             f"{cat.names.qualified(name)}; run `planner advise` again for a new generation")


def _is_ours(props: Mapping[str, str], layout: Layout) -> bool:
    if "planner.layout.parts" not in props:
        return False
    try:  # not ``planner.source``: Spark may redact it (a table named ``url_log``)
        return layout_from_properties(props).table.lower() == layout.table.lower()
    except LayoutError:
        return False


def _same_layout(props: Mapping[str, str], layout: Layout) -> bool:
    try:
        return layout_from_properties(props) == layout
    except LayoutError:
        return False


def apply_layout(runner: Runner, layout: Layout, *, drop_old: bool = False,
                 progress: Callable[[str], None] | None = None, fail_at: str | None = None,
                 crash_at: str | None = None, lease_ttl: float = DEFAULT_LEASE_TTL, break_lease: bool = False,
                 expected_columns: Mapping[str, str] | None = None, file_format: str | None = None,
                 replace_partitioning: bool = False) -> ApplyReport:
    """Rewrite ``layout.table`` into ``layout``, verified, swapped in; resumable after any failure.

    A table partitioned by columns of its own (a ``ds`` date, say) is refused unless
    ``replace_partitioning``: the laid-out table is partitioned by the layout's column instead, so
    writers that name those partitions would stop working (``replaced_text``).

    ``file_format``: ``PARQUET`` or ``ORC``; by default the table's own when it is one of them, else
    Parquet (a text or Avro file has no statistics a scan could skip by)."""
    fail_at = fail_at or os.environ.get("PLANNER_FAIL_AT") or None
    for point in (fail_at, crash_at):
        if point is not None and point not in FAULT_POINTS:
            raise ApplyError(f"unknown fault point {point!r}; use one of {', '.join(FAULT_POINTS)}")
    names = TableNames.of(layout.table)
    cat = Catalog(runner, names)
    started = time.monotonic()
    report = ApplyReport(table=names.qualified(names.source), backup="", layout=layout.describe())
    clock = StepClock(report.step_seconds)
    clock.start("checks")

    def say(msg: str) -> None:
        report.steps.append(msg)
        if progress:
            progress(f"[{time.monotonic() - started:6.1f}s] {msg}")

    def fault(point: str) -> None:
        if crash_at == point:
            raise SimulatedCrash(point)
        if fail_at == point:
            raise ApplyError(f"injected failure at {point}")

    src, new = names.source, names.new
    if not cat.exists(src):
        if _resume_missing_source(cat, layout, report, say, lease_ttl, break_lease, drop_old):
            report.seconds = time.monotonic() - started
            return report

    # everything that can be checked is, before the lease and before any write
    current = cat.properties(src)
    backup = backup_name(cat.sql(src), dialect=runner.dialect, layout=layout).name
    if _same_layout(current, layout):
        report.already_applied = True
        report.backup = names.qualified(backup) if cat.exists(backup) else ""
        say(f"{names.qualified(src)} already has this layout: nothing to do")
        report.seconds = time.monotonic() - started
        return report
    if cat.exists(backup):
        raise ApplyError(f"{names.qualified(backup)}, the name the previous table would be kept under, already "
                         f"exists, and {names.qualified(src)} does not hold this layout (was the table laid out again "
                         "since?); nothing was changed: drop or rename it, or advise again")
    columns = source_columns(cat, layout, expected_columns)
    _check_ids(cat, layout)
    check_sideways_keys(cat, layout)
    source = cat.source_table(src)
    replaced = source.metadata.replaced_partitioning(layout)
    if replaced and not replace_partitioning:
        raise ApplyError(f"{names.qualified(src)} is partitioned by ({', '.join(replaced)}): {replaced_text(layout, replaced)}. "
                         "Nothing was changed; apply with --replace-partitioning to accept this")
    chosen = None
    if file_format is None:
        own = source.file_format
        file_format = own or "PARQUET"
        chosen = (f"writing {file_format}: the format {names.qualified(src)} is stored in" if own else
                  f"writing PARQUET: {names.qualified(src)} is stored in a format without statistics to skip by")
    owner = acquire_lease(cat, src, ttl=lease_ttl, break_lease=break_lease)
    say(f"lease on {names.qualified(src)} taken ({owner})")
    if chosen:
        say(chosen)
    if replaced:
        say(f"{names.qualified(src)} was partitioned by ({', '.join(replaced)}): {replaced_text(layout, replaced)}")
    step = "create"
    try:
        reused = False
        if cat.exists(new):
            props = cat.properties(new)
            if not _is_ours(props, layout):
                raise ApplyError(f"{names.qualified(new)} exists and was not made by the planner for "
                                 f"{layout.table}; drop or rename it first")
            state = props.get(STATE)
            if state in ("loaded", "verified") and _same_layout(props, layout):
                step = "verify"
                clock.start("verify")
                say(f"{names.qualified(new)} left {state} by an earlier run: verifying it")
                reused = _verify(cat, columns, report, say, drop_on_mismatch=False)
            if not reused:
                say(f"dropping {names.qualified(new)} left {state or 'incomplete'} by an earlier run"
                    + _files_kept(cat, new))
                cat.drop(new)
            else:
                report.resumed = f"reused {names.qualified(new)} verified by an earlier run"
        plan = write_plan(layout, table_bytes=cat.bytes(src))
        stmts = apply_statements(layout, columns, cat.sql(src), cat.sql(new), dialect=runner.dialect,
                                 backup=cat.sql(backup), plan=plan)
        *fill, rename_old, rename_new = stmts
        observed = None
        if not reused:
            step = "create"
            clock.start("create")
            for item in source.metadata.left_out:  # the rest of its comments and properties stay
                say(left_out_text(item))
            place = source.copy_location()
            if place:
                say(f"{names.qualified(src)} is an external table at {source.location}: the laid-out copy is "
                    f"external too, at {place}; the old files stay where they are")
            cat.run(create_table_sql(layout, columns, cat.sql(new), file_format=file_format, dialect=runner.dialect,
                                     metadata=source.metadata, external_location=place))
            cat.set_properties(new, {STATE: "created"})
            say(f"created {names.qualified(new)}")
            fault("after_create")
            step = "insert"
            fault("before_insert")
            clock.start("write")
            say(f"writing: {plan.describe()}")
            observe = getattr(runner, "execute_observed", None)
            with write_settings_restored(runner, fill):
                for i, s in enumerate(fill, 1):
                    t0 = time.monotonic()
                    if observe is not None and s.lstrip().upper().startswith("INSERT"):
                        observed = checksum_values(observe(s, cat.checksum_aggregates(columns), cat.sql(src)))
                    else:
                        cat.run(s)
                    say(f"statement {i}/{len(fill)} done in {time.monotonic() - t0:.1f} s: "
                        f"{' '.join(s.split())[:60]}")
            report.statements = len(fill)
            clock.start("verify")
            cat.set_properties(new, {STATE: "loaded"})
            fault("after_insert")
            step = "verify"
            # the probe's questions from the new table's footers, their truth counted by the verification's scan
            t0 = time.monotonic()
            items = probe_items(cat, columns, layout, new)
            if items:
                say(f"the probe's {len(items)} questions read in {time.monotonic() - t0:.1f} s")
            truth: list = []
            _verify(cat, columns, report, say, drop_on_mismatch=True, observed=observed,
                    carry=truth_counts(items), carried=truth)
            probe_check(cat, columns, layout, new, say, items=items, truth=truth)  # pushdown on (issue 30)
        else:
            probe_check(cat, columns, layout, new, say)
        cat.set_properties(new, {STATE: "verified", PREVIOUS: names.qualified(backup)})
        fault("after_verify")
        step = "swap"
        clock.start("swap")
        _check_lease(cat, src, owner, lease_ttl, break_lease=False)
        if cat.exists(backup):
            raise ApplyError(f"{names.qualified(backup)} already exists (this advice was applied before); drop or "
                             "rename it, or advise again")
        # the cells of the table being replaced describe its rows, not the new table's: no query may
        # take them once the new table is in place (SQL saved earlier included)
        invalidate(runner.execute, names.qualified(src), say)
        cat.run(rename_old)
        try:
            fault("between_renames")
            cat.run(rename_new)
        except Exception as e:
            try:
                cat.rename(backup, src)
            except Exception as e2:
                raise ApplyError(f"renaming {names.qualified(new)} to {names.qualified(src)} failed ({e}) and so "
                                 f"did renaming {names.qualified(backup)} back ({e2}); the data is in "
                                 f"{names.qualified(backup)}: rename it to {names.qualified(src)} by hand") from e
            raise
    except KeyboardInterrupt:
        raise interrupted(cat, owner, step, backup) from None
    except Exception as e:
        try:
            release_lease(cat, src, owner)
        except Exception:
            pass  # the lease expires on its own; the original error matters more
        left = f"; {names.qualified(new)} was kept and a re-run resumes or redoes it" if cat.exists(new) else ""
        raise ApplyError(f"applying the layout to {names.qualified(src)} stopped at step {step}: {e}. "
                         f"{names.qualified(src)} is unchanged{left}") from e
    forget(names.qualified(src))  # planner.sql's caches in this process read the new table
    say(f"swapped: {names.qualified(src)} is the new layout, the old table is {names.qualified(backup)}")
    _after_swap(cat, backup, owner, report, drop_old, say)
    from hive_integration.spark.join_ranges import (
        after_apply,  # issue 13: ranges of joined columns per partition
    )

    clock.start("join ranges")
    after_apply(runner, layout, say, report.join_range_seconds)
    if layout.aggregate_index is not None:
        clock.start("aggregate index")
        after_write(runner, layout, say)
    clock.stop()
    report.seconds = time.monotonic() - started
    return report


def interrupted(cat: Catalog, owner: str, step: str, backup: str) -> Interrupted:
    """Ctrl-C at ``step``: give the lease back and say, in one line, what state the tables are in.
    (Spark cancels the running job itself: pyspark's SIGINT handler; the driver JVM ignores SIGINT.)"""
    names = cat.names
    src, new = names.source, names.new
    try:
        release_lease(cat, src, owner)
        lease = "its lease released"
    except Exception as e:  # noqa: BLE001 - the catalog is out of reach: say so, the state below may be unknown
        lease = f"its lease not released ({str(e).splitlines()[0][:120]}): continue with --break-lease"
    try:
        have_src, have_new = cat.exists(src), cat.exists(new)
        state = cat.properties(new).get(STATE) if have_new else None
    except Exception:  # noqa: BLE001
        return Interrupted(f"applying the layout to {names.qualified(src)} was interrupted at step {step}; the "
                           f"catalog could not be read afterwards ({lease}): run the same command again to resume")
    if not have_src:
        where = f"its rows are in {names.qualified(backup)} and {names.qualified(new)}" if have_new else \
            f"its rows are in {names.qualified(backup)}"
        return Interrupted(f"applying the layout to {names.qualified(src)} was interrupted between the two renames: "
                           f"{names.qualified(src)} is missing for now ({where}); the same command finishes the swap")
    kept = f"; {names.qualified(new)} was kept ({state or 'incomplete'}): the same command resumes or redoes it" \
        if have_new else ""
    return Interrupted(f"applying the layout to {names.qualified(src)} was interrupted at step {step}: "
                       f"{names.qualified(src)} is unchanged, {lease}{kept}")


def _verify(cat: Catalog, columns: Mapping[str, str], report: ApplyReport, say, *, drop_on_mismatch: bool,
            observed: tuple | None = None, carry: Sequence[exp.Expression] = (), carried: list | None = None) -> bool:
    """The new table holds the source's rows: count, checksum, non-NULL counts. ``observed``: the
    source's figures taken while the INSERT read it; the source is scanned only without them, or
    when they differ (then the scan decides). ``carry``: more aggregates for the scan of the new
    table (the probe's truth), their values into ``carried``."""
    names = cat.names
    have = cat.checksum(names.new, columns, carried=carried, carry=carry)
    want = observed if observed is not None else cat.checksum(names.source, columns)
    if want != have and observed is not None:
        say("the checksum observed during the INSERT differs; reading the source again to decide")
        want = cat.checksum(names.source, columns)
    if want != have:
        if not drop_on_mismatch:
            return False
        kept = _files_kept(cat, names.new)
        cat.drop(names.new)
        raise ApplyError(f"verification failed: {names.qualified(names.new)} does not hold the same rows as "
                         f"{names.qualified(names.source)} (count, checksum, non-NULL counts: {have} vs {want}); "
                         f"the new table was dropped{kept}")
    report.rows = int(want[0])
    say(f"verified {report.rows:,} rows (count, checksum and per-column counts match)")
    return True


def _after_swap(cat: Catalog, backup: str, owner: str | None, report: ApplyReport, drop_old: bool, say) -> None:
    names = cat.names
    src = names.source
    report.backup = names.qualified(backup)
    if owner is not None:
        release_lease(cat, backup, owner)
    # the new table was created before the lease was taken on the source, so it has none; the
    # state/previous properties stay as a record of how this table came to be
    if drop_old:
        kept = _files_kept(cat, backup)
        cat.drop(backup)
        report.dropped_old = True
        say(f"dropped {names.qualified(backup)}{kept}")
    if not report.rows:
        report.rows = int(cat.checksum(src, cat.columns(src))[0] or 0)


def _files_kept(cat: Catalog, name: str) -> str:
    """What dropping ``name`` leaves: an external table's files stay (said, with their folder)."""
    external, location = cat.storage(name)
    return f" (an external table: its files stay in {location})" if external else ""


def _resume_missing_source(cat: Catalog, layout: Layout, report: ApplyReport, say, ttl: float,
                           break_lease: bool, drop_old: bool) -> bool:
    """``<t>`` is missing: finish an interrupted swap (True) or put the old table back (False)."""
    names = cat.names
    src, new = names.source, names.new
    props = cat.properties(new) if cat.exists(new) else {}
    previous = TableNames.of(props[PREVIOUS]).source if PREVIOUS in props else None
    if not _is_ours(props, layout) or previous is None or not cat.exists(previous):
        befores = sorted(t for t in cat.tables() if t.startswith(src + BACKUP_INFIX))
        hint = f"; earlier versions: {', '.join(befores)}" if befores else ""
        raise ApplyError(f"table {names.qualified(src)} does not exist{hint}")
    # the lease moved with the source when it was renamed to `previous`
    owner = acquire_lease(cat, previous, ttl=ttl, break_lease=break_lease)
    if props.get(STATE) == "verified":
        say(f"{names.qualified(src)} is missing but {names.qualified(new)} is verified: finishing the swap")
        cat.rename(new, src)
        forget(names.qualified(src))
        report.resumed = f"finished the swap interrupted after renaming {names.qualified(src)} to " \
                         f"{names.qualified(previous)}"
        say(f"swapped: {names.qualified(src)} is the new layout, the old table is {names.qualified(previous)}")
        _after_swap(cat, previous, owner, report, drop_old, say)
        return True
    say(f"{names.qualified(src)} is missing and {names.qualified(new)} is not verified: "
        f"renaming {names.qualified(previous)} back")
    cat.rename(previous, src)
    release_lease(cat, src, owner)
    return False


__all__ = ["ApplyReport", "HiveServer2Runner", "Runner", "SparkRunner", "SimulatedCrash", "FAULT_POINTS",
           "apply_layout", "acquire_lease", "release_lease",
           "LEASE_PURPOSES"]

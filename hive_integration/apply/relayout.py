"""Run a partial re-layout on a live table: stage, verify, swap atomically, keep the old partitions.

    <t>                         the table; holds the lease (as ``apply``) while we work
    <t>__planner_relayout       external staging table, its files under <t>'s folder in
                                ``_planner_relayout_<generation>/`` (a hidden folder Spark never lists
                                as data); planner.relayout.state = created | loaded | verified
    <t>__before_<UTC stamp>     the re-cut partitions as they were (their folders moved there,
                                files untouched), with the old layout; dropped by ``drop_old``

Steps, each safe to re-run:

1. create the staging table, ``INSERT OVERWRITE`` the re-cut partitions' rows into it, cut by the
   new pieces (``planner.emit.relayout_sql``);
2. verify: count, row-hash sum and per-column counts of the staging table equal those of
   ``<t> WHERE planner_pid IN (re-cut ids)``;
3. swap: the pieces are added to ``<t>`` as *empty* partitions (harmless), then one metastore call
   (``alterPartitions``, one transaction) points them at the staged folders and the re-cut
   partitions at empty ones: a query planned before it reads the old rows, one planned after it
   the new; none sees a row twice or misses one;
4. ``<t>``'s layout property becomes the new layout (one ALTER: either layout reads correctly,
   ``planner.advice.relayout_plan``), the emptied partitions are dropped, their old folders move to the backup.

Why not a table rename as ``apply`` does: the untouched partitions would have to be copied (or
shared by two tables, which a later rename of either breaks). Here they are not touched at all.
The atomic swap needs Spark's external catalog (the embedded Derby metastore or a thrift one);
HiveServer2 users get the script (``--print-sql``) instead.
"""
from __future__ import annotations

import datetime as dt
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Mapping

from sqlglot import exp

from hive_integration.spark.cells import after_write, invalidate
from hive_integration.apply.apply_layout import (
    Catalog,
    SimulatedCrash,
    SourceTable,
    SparkRunner,
    TableNames,
    acquire_lease,
    check_sideways_keys,
    release_lease,
    source_columns,
    write_settings_restored,
)
from hive_integration.apply.probe_check import probe_check
from hive_integration.spark.catalog_cache import forget
from planner.advice.relayout_plan import RelayoutPlan
from planner.emit.apply_sql import backup_name, dynamic_partition_settings
from planner.emit.ddl import create_table, layout_from_properties, layout_properties
from planner.emit.relayout_sql import (
    STAGING_SUFFIX,
    add_partitions,
    drop_partitions,
    recut_insert,
    staging_create,
)
from planner.errors import ApplyError, LayoutError

STATE, GENERATION = "planner.relayout.state", "planner.relayout.generation"
FAULT_POINTS = ("after_insert", "after_verify", "after_swap")


@dataclass
class Steps:
    """The log of a run's steps (timed, also sent to ``progress``) and its fault-injection points
    (``fail_at``: an ApplyError the normal clean-up handles; ``crash_at``: ``SimulatedCrash``, which
    skips every clean-up, like a killed process)."""

    log: list[str]
    progress: Callable[[str], None] | None = None
    fail_at: str | None = None
    crash_at: str | None = None
    started: float = field(default_factory=time.monotonic)

    def say(self, message: str) -> None:
        self.log.append(message)
        if self.progress:
            self.progress(f"[{time.monotonic() - self.started:6.1f}s] {message}")

    def fault(self, point: str) -> None:
        if point == self.crash_at:
            raise SimulatedCrash(point)
        if point == self.fail_at:
            raise ApplyError(f"injected failure at {point}")


@dataclass
class RelayoutReport:
    table: str
    recut: list[int]
    new_ids: list[int]
    rows: int = 0
    backup: str = ""
    dropped_old: bool = False
    resumed: str | None = None
    seconds: float = 0.0
    steps: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)

    def text(self) -> str:
        lines = [f"re-cut {len(self.recut)} partitions of {self.table} into {len(self.new_ids)}: "
                 f"{self.rows:,} rows rewritten and verified in {self.seconds:.1f} s"]
        if self.resumed:
            lines.append(f"resumed: {self.resumed}")
        if self.recut:
            lines.append(f"old partitions {'dropped' if self.dropped_old else 'kept in ' + self.backup}")
        return "\n".join(lines)


# ---- the catalog through Spark's JVM ---------------------------------------------------------------
class _Partitions:
    """Partition locations of a table, and the one atomic batch change of them."""

    def __init__(self, spark, db: str, name: str, column: str):
        self.spark, self.db, self.name, self.column = spark, db, name, column.lower()
        self.jvm = spark._jvm
        self.catalog = spark._jsparkSession.sharedState().externalCatalog()

    def _all(self) -> list:
        seq = self.catalog.listPartitions(self.db, self.name, self.jvm.scala.Option.apply(None))
        it = seq.iterator()
        out = []
        while it.hasNext():
            out.append(it.next())
        return out

    def _id(self, part) -> int:
        return int(part.spec().get(self.column).get())

    def locations(self) -> dict[int, str]:
        return {self._id(p): str(p.location()) for p in self._all()}

    def table_location(self) -> str:
        return str(self.catalog.getTable(self.db, self.name).location())

    def relocate(self, moves: Mapping[int, str]) -> None:
        """Point partitions at new folders, all in one metastore transaction."""
        changed = self.jvm.java.util.ArrayList()
        for p in self._all():
            pid = self._id(p)
            if pid in moves:
                storage = _copy(p.storage(), locationUri=self.jvm.scala.Some(self.jvm.java.net.URI(moves[pid])))
                changed.add(_copy(p, storage=storage))
        if changed.size() != len(moves):
            raise ApplyError(f"{self.db}.{self.name}: partitions {sorted(moves)} are not all there to swap")
        seq = self.jvm.scala.jdk.javaapi.CollectionConverters.asScala(changed).toSeq()
        self.catalog.alterPartitions(self.db, self.name, seq)


def _copy(obj, **changes):
    """A Scala case class's ``copy`` with only ``changes`` given: the other fields keep their values
    (read through ``copy$default$N``), so a field Spark adds in a later version needs no change here."""
    method = next(m for m in obj.getClass().getMethods() if m.getName() == "copy")
    fields = [f.getName() for f in obj.getClass().getDeclaredFields()][:len(method.getParameterTypes())]
    args = [changes[f] if f in changes else getattr(obj, f"copy$default${i}")() for i, f in enumerate(fields, 1)]
    missing = set(changes) - set(fields)
    if missing:
        raise ApplyError(f"Spark's {obj.getClass().getSimpleName()} has no field(s) {sorted(missing)}")
    return obj.copy(*args)


class _Files:
    def __init__(self, spark):
        self.jvm = spark._jvm
        self.conf = spark._jsc.hadoopConfiguration()

    def _path(self, uri: str):
        # a URI as the metastore gives it: Path(String) would escape its escapes again
        # ("my%20db" is the folder "my db"; through the string, the folder "my%20db")
        p = self.jvm.org.apache.hadoop.fs.Path(self.jvm.java.net.URI(uri))
        return p, p.getFileSystem(self.conf)

    def location(self, uri: str) -> str:
        """``uri`` as a SQL ``LOCATION`` takes it: a Hadoop path string, not a URI (Spark and Hive
        parse the string with ``Path``, which escapes it)."""
        return str(self._path(uri)[0].toString())

    def exists(self, uri: str) -> bool:
        p, fs = self._path(uri)
        return bool(fs.exists(p))

    def mkdirs(self, uri: str) -> None:
        p, fs = self._path(uri)
        fs.mkdirs(p)

    def move(self, src: str, dst: str) -> None:
        s, fs = self._path(src)
        d, _ = self._path(dst)
        fs.mkdirs(d.getParent())
        if not fs.rename(s, d):
            raise ApplyError(f"could not move {src} to {dst}")

    def delete(self, uri: str) -> None:
        p, fs = self._path(uri)
        fs.delete(p, True)


def _join(base: str, *parts: str) -> str:
    return "/".join([base.rstrip("/"), *parts])


# ---- the steps ----------------------------------------------------------------------------------
def relayout(spark, plan: RelayoutPlan, *, drop_old: bool = False, progress: Callable[[str], None] | None = None,
             fail_at: str | None = None, crash_at: str | None = None, break_lease: bool = False,
             now: dt.datetime | None = None) -> RelayoutReport:
    """Re-cut ``plan.chosen`` of ``plan.current.table`` into ``plan.layout``; resumable."""
    runner = SparkRunner(spark)
    names = TableNames.of(plan.current.table)
    cat = Catalog(runner, names)
    src, staging = names.source, names.source + STAGING_SUFFIX
    db = names.db or spark.catalog.currentDatabase()
    report = RelayoutReport(names.qualified(src), list(plan.chosen), list(plan.new_ids))
    steps = Steps(report.steps, progress, fail_at, crash_at)
    say, fault, started = steps.say, steps.fault, steps.started

    if not cat.exists(src):
        raise ApplyError(f"table {names.qualified(src)} does not exist")
    props = cat.properties(src)
    stored = layout_from_properties(props) if "planner.layout.parts" in props else None
    if stored is None:
        raise ApplyError(f"{names.qualified(src)} has no planner layout; run `planner apply` first")
    gen = str(plan.layout.generation)
    if stored == plan.layout:
        return _finish(spark, cat, plan, report, say, db, drop_old, now, resumed=True)
    if stored != plan.current:
        raise LayoutError(f"{names.qualified(src)} is no longer laid out as this plan assumed "
                          f"({stored.identity}, not {plan.current.identity}); run `planner status` again")
    if not plan.chosen:
        report.seconds = time.monotonic() - started
        say("nothing to re-cut")
        return report
    columns = source_columns(cat, plan.current)
    source = cat.source_table(src)  # its format, and where an external table's backup goes
    file_format = _file_format(source, names.qualified(src))
    owner = acquire_lease(cat, src, break_lease=break_lease, purpose="relayout")
    say(f"lease on {names.qualified(src)} taken ({owner})")
    parts = _Partitions(spark, db, src, plan.layout.partition_column)
    files = _Files(spark)
    folder = _join(parts.table_location(), f"_planner_relayout_{gen}")
    try:
        state = ""
        if cat.exists(staging):
            sp = cat.properties(staging)
            if sp.get(GENERATION) == gen:
                state = sp.get(STATE, "")
            else:
                say(f"dropping {names.qualified(staging)} left by another re-layout")
                cat.drop(staging)  # external: its files stay; they are removed below
                files.delete(_join(parts.table_location(), f"_planner_relayout_{sp.get(GENERATION, '')}"))
        if state in ("loaded", "verified"):
            report.resumed = f"reused {names.qualified(staging)} left {state} by an earlier run"
        else:
            if cat.exists(staging):
                cat.drop(staging)
            files.delete(folder)
            check_sideways_keys(cat, plan.layout)
            cat.run(staging_create(plan, columns, cat.sql(staging), files.location(folder),
                                   file_format=file_format, dialect=runner.dialect))
            cat.set_properties(staging, {STATE: "created", GENERATION: gen})
            say(f"created {names.qualified(staging)} in {folder}")
            sets = [s.sql(dialect=runner.dialect) for s in dynamic_partition_settings(plan.layout, runner.dialect)]
            t0 = time.monotonic()
            with write_settings_restored(runner, sets):
                for s in sets:
                    cat.run(s)
                cat.run(recut_insert(plan, columns, cat.sql(src), cat.sql(staging), dialect=runner.dialect))
            say(f"re-cut {len(plan.chosen)} partitions into {names.qualified(staging)} in "
                f"{time.monotonic() - t0:.1f} s")
            cat.set_properties(staging, {STATE: "loaded"})
        fault("after_insert")
        _verify(cat, plan, columns, staging, report, say)
        probe_check(cat, columns, plan.layout, staging, say)  # issue 30
        cat.set_properties(staging, {STATE: "verified"})
        fault("after_verify")
        staged = parts_of(spark, db, staging, plan)
        unexpected = sorted(set(staged) - set(plan.new_ids))
        if unexpected:
            raise ApplyError(f"rows of the re-cut partitions fell outside every new piece (partitions "
                             f"{unexpected[:5]}); the table is unchanged")
        invalidate(runner.execute, names.qualified(src), say)  # the re-cut moves rows between cells
        _swap(cat, parts, files, plan, staged, folder, say)
    except Exception as e:
        try:
            release_lease(cat, src, owner)
        except Exception:
            pass
        raise ApplyError(f"re-laying out {names.qualified(src)} stopped: {e}. {names.qualified(src)} holds its "
                         "old partitions or its new ones, never both; a re-run resumes") from e
    forget(names.qualified(src))  # planner.sql's caches in this process: the partitions moved
    fault("after_swap")
    report = _finish(spark, cat, plan, report, say, db, drop_old, now, resumed=False, source=source)
    after_write(runner, plan.layout, say)
    release_lease(cat, src, owner)
    report.seconds = time.monotonic() - started
    return report


def parts_of(spark, db: str, name: str, plan: RelayoutPlan) -> dict[int, str]:
    return _Partitions(spark, db, name, plan.layout.partition_column).locations()


def _file_format(source: SourceTable, table: str) -> str:
    """The staged pieces are written as ``table`` stores its files: they become its partitions,
    which the metastore reads with the table's format (Parquet files in an ORC table's partition
    cannot be read)."""
    if source.file_format is None:
        raise ApplyError(f"{table} is not stored as Parquet or ORC; a re-layout writes only those (run "
                         "`planner apply` to lay it out anew)")
    return source.file_format


def _in_chosen(plan: RelayoutPlan) -> exp.Expression:
    col = exp.column(exp.to_identifier(plan.layout.partition_column, quoted=True))
    return exp.In(this=col, expressions=[exp.Literal.number(i) for i in plan.chosen])


def _verify(cat: Catalog, plan: RelayoutPlan, columns: Mapping[str, str], staging: str, report, say) -> None:
    want = cat.checksum(cat.names.source, columns, where=_in_chosen(plan))
    have = cat.checksum(staging, columns)
    if want != have:
        cat.drop(staging)
        raise ApplyError(f"verification failed: the staged pieces do not hold the rows of partitions "
                         f"{list(plan.chosen)[:5]} (count, checksum, non-NULL counts: {have} vs {want})")
    report.rows = int(want[0])
    say(f"verified {report.rows:,} rows (count, checksum and per-column counts match)")


def _swap(cat: Catalog, parts: _Partitions, files: _Files, plan: RelayoutPlan, staged: Mapping[int, str],
          folder: str, say) -> None:
    """Pieces in, re-cut partitions out, in one metastore transaction; then the new layout."""
    names = cat.names
    have = parts.locations()
    if any(have.get(pid) == loc for pid, loc in staged.items()):
        say("the partitions were swapped by an earlier run")
    else:
        empty = {pid: _join(folder, "_empty", f"{plan.layout.partition_column}={pid}")
                 for pid in list(staged) + [p for p in plan.chosen if p in have]}
        for loc in empty.values():
            files.mkdirs(loc)
        missing = {pid: empty[pid] for pid in staged if pid not in have}
        if missing:
            for s in add_partitions(cat.sql(names.source), plan.layout.partition_column,
                                    {pid: files.location(loc) for pid, loc in missing.items()},
                                    dialect=cat.runner.dialect):
                cat.run(s)
        # an append that reached a re-cut partition after the verification would be lost by the swap
        now = cat.run(exp.select(exp.Count(this=exp.Star())).from_(cat.names.expr(names.source, cat.runner.dialect))
                      .where(_in_chosen(plan)))[0][0]
        verified = cat.checksum(names.source + STAGING_SUFFIX, {})[0]
        if int(now) != int(verified):
            raise ApplyError(f"the re-cut partitions now hold {int(now):,} rows, {int(verified):,} were staged "
                             "(an append ran meanwhile); run the re-layout again")
        moves = dict(staged) | {pid: empty[pid] for pid in plan.chosen if pid in have}
        old = {pid: have[pid] for pid in plan.chosen if pid in have}
        cat.set_properties(names.source + STAGING_SUFFIX, {"planner.relayout.old": _encode(old)})
        parts.relocate(moves)
        say(f"swapped {len(staged)} new partitions in and {len(old)} re-cut ones out (one metastore call)")
    cat.set_properties(names.source, layout_properties(plan.layout))
    say(f"{names.qualified(names.source)} is recorded as {plan.layout.identity}")


def _encode(locations: Mapping[int, str]) -> str:
    import json

    return json.dumps({str(k): v for k, v in locations.items()})


def _decode(text: str) -> dict[int, str]:
    import json

    return {int(k): v for k, v in json.loads(text or "{}").items()}


def _finish(spark, cat: Catalog, plan: RelayoutPlan, report: RelayoutReport, say, db: str, drop_old: bool,
            now: dt.datetime | None, resumed: bool, source: SourceTable | None = None) -> RelayoutReport:
    """After the swap: drop the emptied partitions, move their old folders to the backup table.
    ``source``: the table as described before the re-cut (described here when resuming)."""
    names = cat.names
    src, staging = names.source, names.source + STAGING_SUFFIX
    files = _Files(spark)
    old: dict[int, str] = {}
    if cat.exists(staging):
        old = _decode(cat.properties(staging).get("planner.relayout.old", ""))
    if resumed:
        report.resumed = report.resumed or "the swap was done by an earlier run; finishing"
    parts = _Partitions(spark, db, src, plan.layout.partition_column)
    left = [pid for pid in plan.chosen if pid in parts.locations()]
    if left:
        cat.run(drop_partitions(cat.sql(src), plan.layout.partition_column, left, dialect=cat.runner.dialect))
        say(f"dropped the {len(left)} emptied partitions")
    backup = backup_name(cat.sql(src), when=now, dialect=cat.runner.dialect).name
    report.backup = names.qualified(backup)
    keep = {pid: loc for pid, loc in old.items() if files.exists(loc)}
    if keep and not drop_old:
        if not cat.exists(backup):
            columns = {c: t for c, t in cat.columns(src).items() if c != plan.layout.partition_column.lower()}
            # the old partitions' files move into it: the table's own format, and, for an external
            # table, an external folder beside it (a rename stays on the table's file system)
            source = source or cat.source_table(src)
            cat.run(create_table(plan.current, columns, cat.sql(backup), file_format=source.file_format,
                                 dialect=cat.runner.dialect, external_location=source.copy_location()))
        bparts = _Partitions(spark, db, backup, plan.layout.partition_column)
        home = bparts.table_location()
        moved = {pid: _join(home, f"{plan.layout.partition_column}={pid}") for pid in keep}
        for pid, loc in keep.items():
            files.move(loc, moved[pid])
        for s in add_partitions(cat.sql(backup), plan.layout.partition_column,
                                {pid: files.location(loc) for pid, loc in moved.items()}, dialect=cat.runner.dialect):
            cat.run(s)
        say(f"kept the re-cut partitions as they were in {names.qualified(backup)}")
    elif keep:
        for loc in keep.values():
            files.delete(loc)
        report.dropped_old = True
        say("deleted the re-cut partitions' old files (--drop-old)")
    if cat.exists(staging):
        cat.drop(staging)  # external: the files now belong to the table's new partitions
    forget(names.qualified(src))
    return report

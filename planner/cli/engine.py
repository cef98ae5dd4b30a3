"""The outside world the commands need: workload text (a file or Spark event logs), a metastore
check, and the one Spark session of a command.

Everything a command can check without a JVM is checked before Spark starts: the workload is read
and parsed, and a ``--metastore`` must answer over thrift (a wrong address is one line, exit 1,
not a page of Java frames blaming a missing table).
"""
from __future__ import annotations

from pathlib import Path

import click

from planner.cli.console import Console
from planner.errors import Location, MetastoreError, WorkloadError


def workload_text(workload: str | None, eventlog: str | None, window, dialect: str,
                  console: Console) -> tuple[str, str]:
    """The workload's SQL text and the name it is reported under."""
    from planner.workload.reader import read_text

    if bool(workload) == bool(eventlog):
        raise click.UsageError("give a workload file or --from-eventlog DIR (one of them)")
    if workload:
        if window.narrowed:
            raise click.UsageError("--since, --until, --last and --min-count apply to --from-eventlog only")
        return read_text(workload), workload
    from planner.workload.eventlog import EventLogSummary, read_executions
    from planner.workload.eventlog import workload_text as eventlog_text

    summary = EventLogSummary()
    text = eventlog_text(read_executions(eventlog, summary), window, dialect=dialect, summary=summary)
    if not text.strip():
        raise WorkloadError(f"no statements left in the event logs ({summary.executions} read, "
                            f"{summary.outside_window} outside --since/--until/--last, {summary.below_min_count} of "
                            f"shapes run fewer than --min-count {window.min_count} times)", Location(eventlog))
    sources = ", ".join(f"{n} {k}" for k, n in sorted(summary.by_source.items()))
    console.say(f"event logs in {eventlog}: {summary.files} files, {summary.executions} statements ({sources}); "
                f"{summary.outside_window} outside the window, {summary.below_min_count} of shapes run fewer "
                f"than {window.min_count} times")
    return text, f"eventlog:{eventlog}"


def check_metastore(uri: str) -> None:
    """Raise ``MetastoreError`` (one line) unless ``uri`` answers as a Hive metastore."""
    import logging

    from hive_integration.metastore.thrift_client import MetastoreClient

    log = logging.getLogger("thrift.transport.TSocket")  # it logs "Could not connect …" before raising
    level, log.level = log.level, logging.CRITICAL
    try:
        with MetastoreClient(uri, timeout=15) as client:
            client.list_databases()
    except MetastoreError as e:
        raise MetastoreError(f"--metastore {uri}: {e}") from None
    finally:
        log.setLevel(level)


def start_spark(state_dir: str | None, metastore: str | None, console: Console, *, verbose: bool = False):
    """The command's Spark session (started once; quiet unless ``--verbose``) and its state dir."""
    if metastore:
        check_metastore(metastore)  # before pyspark is even imported
    from hive_integration.spark.session import build_spark_session, default_state_dir

    state = Path(state_dir).resolve() if state_dir else default_state_dir()
    console.say("starting Spark …")
    return build_spark_session(state, metastore_uri=metastore, quiet=not verbose), state


def verbose(ctx: click.Context | None = None) -> bool:
    ctx = ctx or click.get_current_context(silent=True)
    while ctx is not None:
        if ctx.obj and ctx.obj.get("verbose"):
            return True
        ctx = ctx.parent
    return False

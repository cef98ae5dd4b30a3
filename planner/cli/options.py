"""Options shared by the subcommands: one spelling, one default, one check everywhere.

* ``--dialect`` (hive, the language of workload files and of what a DBA runs; spark also reads),
  ``--on-error`` (fail or skip), ``--format`` (text or json).
* ``--metastore thrift://HOST:PORT`` is checked for its form when the command line is read (a
  usage error, exit 2), and for being reachable before any Spark starts (exit 1).
* Inputs must exist when the command line is read: no JVM is started for a typo in a path.
* Outputs say what they are: ``--out-dir`` is a folder (advise), ``--output``/``-o`` a file
  (rewrite). The old spelling ``--out`` still works for both.
"""
from __future__ import annotations

import functools
from datetime import datetime, timezone
from urllib.parse import urlparse

import click

DIALECTS = ("hive", "spark")
DEFAULT_DIALECT = "hive"


def dialect_option(fn):
    return click.option("--dialect", type=click.Choice(DIALECTS), default=DEFAULT_DIALECT, show_default=True,
                        help="SQL dialect of the input files.")(fn)


def on_error_option(fn):
    return click.option("--on-error", type=click.Choice(["fail", "skip"]), default="fail", show_default=True,
                        help="Stop at the first bad statement, or skip it and report how many were skipped.")(fn)


def format_option(fn):
    return click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
                        help="Output for people (text, with progress on a terminal) or for scripts (json).")(fn)


def break_lease_option(fn):
    return click.option("--break-lease", is_flag=True,
                        help="Take over the lease left on the table by a crashed run.")(fn)


def workload_options(fn):
    """``--dialect``, ``--on-error`` and ``--format``, as every command reading SQL files has them."""
    return dialect_option(on_error_option(format_option(fn)))


def metastore_uri(ctx, param, value):
    if value is None:
        return None
    parsed = urlparse(value)
    if parsed.scheme != "thrift" or not parsed.hostname:
        raise click.BadParameter(f"must look like thrift://host:port, not {value!r}")
    try:
        port = parsed.port
    except ValueError:
        port = None
    if not port:
        raise click.BadParameter(f"must name a port (thrift://host:port), not {value!r}")
    return value


def metastore_options(fn):
    fn = click.option("--metastore", metavar="thrift://HOST:PORT", callback=metastore_uri,
                      help="A standalone Hive Metastore (default: the embedded one in --state-dir).")(fn)
    fn = click.option("--state-dir", type=click.Path(file_okay=False), default=None,
                      help="Where the embedded metastore, warehouse and caches live (default: the checkout's "
                           ".planner/, or $PLANNER_HOME).")(fn)
    return fn


def calibration_option(fn):
    """``--calibration FILE``: the time model's coefficients (``planner calibrate`` writes them to the
    state directory, where they are used by default; a team can share one file for its cluster)."""
    return click.option("--calibration", type=click.Path(exists=True, dir_okay=False, readable=True), default=None,
                        help="Time model coefficients to price layouts with (default: what `planner calibrate` "
                             "stored in the state directory, else the defaults for a 2-core local Spark).")(fn)


def input_file(name: str, **kw):
    """A positional argument naming a file that must exist (checked before anything starts)."""
    return click.argument(name, type=click.Path(exists=True, dir_okay=False, readable=True), **kw)


def out_dir_option(default: str = "advice"):
    """``--out-dir DIR`` (a folder the command fills), with the older ``--out`` as a hidden alias."""
    def deco(fn):
        @click.option("--out-dir", "out_dir", type=click.Path(file_okay=False), default=None,
                      help=f"Folder to write into (default: {default}).")
        @click.option("--out", "out_dir_old", type=click.Path(file_okay=False), default=None, hidden=True)
        @functools.wraps(fn)
        def wrapper(*args, out_dir=None, out_dir_old=None, **kwargs):
            if out_dir and out_dir_old and out_dir != out_dir_old:
                raise click.UsageError("give --out-dir once (--out is its old name)")
            return fn(*args, out_dir=out_dir or out_dir_old or default, **kwargs)

        return wrapper

    return deco


def output_file_option(fn):
    """``--output FILE``/``-o`` (one file; default stdout), with the older ``--out`` as a hidden alias."""
    @click.option("--output", "-o", "output", type=click.Path(dir_okay=False, writable=True), default=None,
                  help="Write the result to this file (default: standard output).")
    @click.option("--out", "output_old", type=click.Path(dir_okay=False), default=None, hidden=True)
    @functools.wraps(fn)
    def wrapper(*args, output=None, output_old=None, **kwargs):
        if output and output_old and output != output_old:
            raise click.UsageError("give --output once (--out is its old name)")
        return fn(*args, output=output or output_old, **kwargs)

    return wrapper


def _when(ctx, param, value):
    if value is None:
        return None
    text = value.strip()
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"expected a date or time like 2024-05-01 or 2024-05-01T12:00, not {value!r}")
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def eventlog_options(fn):
    """``--from-eventlog DIR`` and its window (one ``window`` argument, an ``EventWindow``): the
    workload is read from Spark event logs instead of a file."""
    from planner.workload.eventlog import EventWindow

    @click.option("--from-eventlog", "eventlog", type=click.Path(exists=True), metavar="DIR",
                  help="Read the workload from Spark event logs (spark.eventLog.dir): the SQL of every "
                       "execution, e.g. of the Thrift Server or spark.sql calls.")
    @click.option("--since", callback=_when, metavar="TIME",
                  help="With --from-eventlog: executions started at or after this time (UTC unless given).")
    @click.option("--until", callback=_when, metavar="TIME",
                  help="With --from-eventlog: executions started before this time (UTC unless given).")
    @click.option("--last", type=click.IntRange(min=1), metavar="N",
                  help="With --from-eventlog: only the N most recent queries (of those in --since/--until): a "
                       "sliding window, e.g. for `planner relayout` run on a schedule.")
    @click.option("--min-count", type=click.IntRange(min=1), default=1, show_default=True,
                  help="With --from-eventlog: keep only query shapes executed at least this often.")
    @functools.wraps(fn)
    def wrapper(*args, since=None, until=None, last=None, min_count=1, **kwargs):
        return fn(*args, window=EventWindow(since, until, min_count, last), **kwargs)

    return wrapper

"""Options shared by the subcommands: one spelling, one default, one check everywhere.

* ``--dialect`` (hive, the language of workload files and of what a DBA runs; spark also reads),
  ``--on-error`` (fail or skip), ``--format`` (text or json).
* ``--metastore thrift://HOST:PORT`` is checked for its form when the command line is read (a
  usage error, exit 2), and for being reachable before any Spark starts (exit 1). With it come
  ``--state-dir``, ``--master`` and ``--conf KEY=VALUE`` (every command that may start Spark has
  them), their defaults in planner.toml (``planner.cli.config``).
* ``--hiveserver2 HOST:PORT`` (apply, append) and how to log in: ``--hs2-auth``, ``--hs2-user``,
  ``--hs2-password-env``, ``--hs2-kerberos-service``. A password is never an option's value (it
  would show in ``ps``): it comes from an environment variable or the terminal.
* Inputs must exist when the command line is read: no JVM is started for a typo in a path.
* Outputs say what they are: ``--out-dir`` is a folder (advise), ``--output``/``-o`` a file
  (rewrite). The old spelling ``--out`` still works for both.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime, timezone
from urllib.parse import urlparse

import click

from planner.cli.config import AUTH_MODES

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


EMBEDDED = "embedded"


def thrift_uris(value: str) -> str:
    """``value`` checked to be ``thrift://host:port`` (or Hive's comma-separated list of them)."""
    for one in value.split(","):
        parsed = urlparse(one.strip())
        if parsed.scheme != "thrift" or not parsed.hostname:
            raise click.BadParameter(f"must look like thrift://host:port, not {value!r}")
        try:
            port = parsed.port
        except ValueError:
            port = None
        if not port:
            raise click.BadParameter(f"must name a port (thrift://host:port), not {value!r}")
    return value


def metastore_uri(ctx, param, value):
    if value is None:
        return None
    return thrift_uris(value)


def engine_metastore(ctx, param, value):
    if value is None or value.strip().lower() == EMBEDDED:
        return value and EMBEDDED
    return thrift_uris(value)


def _conf_pairs(ctx, param, values) -> tuple[tuple[str, str], ...]:
    out = []
    for v in values:
        key, eq, val = v.partition("=")
        if not eq or not key.strip():
            raise click.BadParameter(f"must look like key=value (e.g. spark.executor.memory=8g), not {v!r}")
        out.append((key.strip(), val.strip()))
    return tuple(out)


@dataclass(frozen=True)
class EngineOptions:
    """Where a command's Spark runs and which catalog it reads, as its command line says (None: not
    given; ``planner.cli.engine.resolve_engine`` fills in planner.toml, the user's Hive and Spark
    configuration, then the defaults)."""

    metastore: str | None = None  # thrift://…, or "embedded"
    state_dir: str | None = None
    master: str | None = None
    conf: tuple[tuple[str, str], ...] = ()

    def given(self) -> list[str]:
        """The options given, as spelled on the command line."""
        return [name for name, v in (("--metastore", self.metastore), ("--state-dir", self.state_dir),
                                     ("--master", self.master), ("--conf", self.conf)) if v]


def metastore_options(fn):
    """``--metastore``, ``--state-dir``, ``--master`` and ``--conf``, passed on as one ``engine``
    argument (an ``EngineOptions``)."""
    @click.option("--metastore", metavar="thrift://HOST:PORT", callback=engine_metastore,
                  help="The Hive metastore: thrift://HOST:PORT, or 'embedded' (a Derby in --state-dir). Default: "
                       "planner.toml's, else hive.metastore.uris of the hive-site.xml in SPARK_CONF_DIR or "
                       "HADOOP_CONF_DIR, else embedded.")
    @click.option("--state-dir", type=click.Path(file_okay=False), default=None,
                  help="Where the embedded metastore, warehouse, caches and calibration live (default: "
                       "$PLANNER_HOME, else planner.toml's, else ~/.local/state/planner).")
    @click.option("--master", metavar="URL", default=None,
                  help="Spark master: local[N], spark://HOST:PORT, yarn, k8s://… (default: planner.toml's, else "
                       "spark.master of spark-defaults.conf, else local[2]).")
    @click.option("--conf", "conf", multiple=True, metavar="KEY=VALUE", callback=_conf_pairs,
                  help="A Spark setting, as spark-submit's --conf (repeatable); beats planner.toml's [conf] and "
                       "spark-defaults.conf.")
    @functools.wraps(fn)
    def wrapper(*args, metastore=None, state_dir=None, master=None, conf=(), **kwargs):
        return fn(*args, engine=EngineOptions(metastore, state_dir, master, conf), **kwargs)

    return wrapper


@dataclass(frozen=True)
class HiveServer2Options:
    """``--hiveserver2`` and its ``--hs2-*`` options as given (None: not given)."""

    address: str | None = None  # host:port, or "off"
    auth: str | None = None
    user: str | None = None
    password_env: str | None = None
    kerberos_service: str | None = None


def hiveserver2_options(fn):
    """``--hiveserver2 HOST:PORT`` and how to log in to it, passed on as one ``hs2`` argument."""
    @click.option("--hiveserver2", metavar="HOST:PORT",
                  help="Run the statements on HiveServer2 instead of an in-process Spark ('off': in-process even "
                       "when planner.toml names one). With --metastore (or hive.metastore.uris) naming the server's "
                       "metastore, the aggregate index is built too.")
    @click.option("--hs2-auth", type=click.Choice(AUTH_MODES, case_sensitive=False), default=None,
                  help="HiveServer2's hive.server2.authentication (default: planner.toml's, else NOSASL, what "
                       "`python -m devtools.servers thriftserver` starts; Hive's own default is NONE).")
    @click.option("--hs2-user", metavar="NAME", default=None, help="The user to log in as (default: yours).")
    @click.option("--hs2-password-env", metavar="VAR", default=None,
                  help="With LDAP or CUSTOM: the environment variable holding the password (default: "
                       "PLANNER_HS2_PASSWORD); unset, the password is asked for on the terminal.")
    @click.option("--hs2-kerberos-service", metavar="NAME", default=None,
                  help="With KERBEROS: the service name of HiveServer2's principal (default: hive).")
    @functools.wraps(fn)
    def wrapper(*args, hiveserver2=None, hs2_auth=None, hs2_user=None, hs2_password_env=None,
                hs2_kerberos_service=None, **kwargs):
        hs2 = HiveServer2Options(hiveserver2, hs2_auth.upper() if hs2_auth else None, hs2_user, hs2_password_env,
                                 hs2_kerberos_service)
        return fn(*args, hs2=hs2, **kwargs)

    return wrapper


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

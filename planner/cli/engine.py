"""The outside world the commands need: workload text (a file or Spark event logs), a metastore
check, and the one Spark session of a command.

Everything a command can check without a JVM is checked before Spark starts: the workload is read
and parsed, a remote metastore must answer over thrift (a wrong address is one line, exit 1,
not a page of Java frames blaming a missing table), and an embedded one must not be in use by
another process.

Which Spark and which metastore (``resolve_engine``): the command line, else planner.toml, else
what the user's Spark and Hive configuration says (``hive.metastore.uris`` of a ``hive-site.xml``
in ``SPARK_CONF_DIR``/``HADOOP_CONF_DIR``, ``spark.master`` of ``spark-defaults.conf``), else the
local default: ``local[2]`` on an embedded Derby in the per-user state folder.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import click

from planner.cli.config import DEFAULT_PASSWORD_ENV, PlannerConfig, load_config
from planner.cli.console import Console
from planner.cli.options import EMBEDDED, EngineOptions, HiveServer2Options, thrift_uris
from planner.errors import InputError, Location, MetastoreError, WorkloadError


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


def check_metastore(uri: str, where: str | None = None) -> str:
    """The first of ``uri``'s metastores (one, or Hive's comma-separated list) that answers; else
    ``MetastoreError`` (one line, naming ``where`` the address came from: ``--metastore`` by default)."""
    import logging

    from hive_integration.metastore.thrift_client import MetastoreClient

    log = logging.getLogger("thrift.transport.TSocket")  # it logs "Could not connect …" before raising
    level, log.level = log.level, logging.CRITICAL
    errors = []
    try:
        for one in [u.strip() for u in uri.split(",") if u.strip()]:
            try:
                with MetastoreClient(one, timeout=15) as client:
                    client.list_databases()
                return one
            except MetastoreError as e:
                errors.append(str(e))
    finally:
        log.setLevel(level)
    raise MetastoreError(f"{where or '--metastore ' + uri}: {'; '.join(errors)}")


@dataclass(frozen=True)
class Engine:
    """Where a command's Spark runs and which catalog it reads, every default filled in."""

    state_dir: Path
    metastore: str | None  # thrift://…; None: the embedded Derby in state_dir
    metastore_from: str  # where the metastore was named, for messages
    master: str | None  # None: spark.master of spark-defaults.conf, else local[2]
    conf: dict = field(default_factory=dict, hash=False)
    calibration: str | None = None  # planner.toml's calibration file

    @property
    def remote(self) -> bool:
        return self.metastore is not None


def resolve_engine(options: EngineOptions, config: PlannerConfig | None = None, env=None) -> Engine:
    """``options`` with planner.toml and the user's Hive configuration filled in (see
    ``planner.cli.config`` for the order)."""
    import os

    from hive_integration.spark.user_conf import default_state_dir, metastore_uris

    env = os.environ if env is None else env
    config = load_config(env) if config is None else config
    if options.state_dir:
        state = Path(options.state_dir).expanduser().resolve()
    elif env.get("PLANNER_HOME") or not config.state_dir:
        state = default_state_dir(env)
    else:
        state = Path(config.state_dir).resolve()
    if options.metastore:
        metastore, where = options.metastore, f"--metastore {options.metastore}"
    elif config.metastore:
        metastore, where = config.metastore, f"metastore {config.metastore} (from {config.where()})"
        if metastore.lower() != EMBEDDED:
            try:
                thrift_uris(metastore)
            except click.BadParameter as e:
                raise InputError(f"{config.where()}: metastore {e.message}") from None
    else:
        uris, site = metastore_uris(env)
        metastore, where = (uris, f"hive.metastore.uris {uris} (from {site})") if uris else (None, "embedded")
    if metastore and metastore.lower() == EMBEDDED:
        metastore, where = None, "embedded"
    conf = dict(config.conf) | dict(options.conf)
    return Engine(state, metastore, where, options.master or config.master, conf, config.calibration)


def start_spark(options: EngineOptions, console: Console, *, verbose: bool = False):
    """The command's Spark session (started once; quiet unless ``--verbose``) and its ``Engine``.
    A remote metastore must answer first, and an embedded one must be free (one line each, and no
    JVM started for either failure)."""
    engine = resolve_engine(options)
    metastore = check_metastore(engine.metastore, engine.metastore_from) if engine.remote else None
    from hive_integration.spark.session import build_spark_session

    where = f" on {engine.master}" if engine.master else ""
    console.say(f"starting Spark{where} …")
    spark = build_spark_session(engine.state_dir, metastore_uri=engine.metastore if metastore else None,
                                master=engine.master, conf=engine.conf, quiet=not verbose)
    return spark, engine


@dataclass(frozen=True)
class HiveServer2Login:
    host: str
    port: int
    auth: str
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    kerberos_service: str | None = None

    def client_options(self) -> dict:
        return {"auth": self.auth, "username": self.user, "password": self.password,
                "kerberos_service_name": self.kerberos_service}


def hiveserver2_address(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise InputError(f"--hiveserver2 must look like host:port, not {value!r}")
    return host, int(port)


def hiveserver2_login(hs2: HiveServer2Options, engine: EngineOptions | None = None,
                      config: PlannerConfig | None = None, env=None) -> HiveServer2Login | None:
    """How to log in to the HiveServer2 the options or planner.toml name; None: run in-process.

    The password of LDAP/CUSTOM comes from an environment variable (``--hs2-password-env``, else
    planner.toml's ``password_env``, else ``PLANNER_HS2_PASSWORD``), else from a prompt on the
    terminal; a command without a terminal fails in one line instead of waiting for input."""
    import os
    import sys

    env = os.environ if env is None else env
    config = load_config(env) if config is None else config
    saved = config.hiveserver2
    address = hs2.address or saved.address
    given = [o for o, v in (("--hs2-auth", hs2.auth), ("--hs2-user", hs2.user),
                            ("--hs2-password-env", hs2.password_env),
                            ("--hs2-kerberos-service", hs2.kerberos_service)) if v]
    if not address or address.lower() == "off":
        if given and not (address or "").lower() == "off":
            raise InputError(f"{given[0]} applies to --hiveserver2 HOST:PORT, which was not given")
        return None
    # --metastore may name the server's own metastore (the aggregate index lists the files through it)
    conflicting = [o for o in engine.given() if o != "--metastore"] if engine is not None else []
    if conflicting:
        source = "--hiveserver2" if hs2.address else f"{config.where()} (hiveserver2.address)"
        raise InputError(f"{source} runs everything on HiveServer2 {address}; drop {'/'.join(conflicting)}"
                         + ("" if hs2.address else ", or give --hiveserver2 off to run in-process"))
    host, port = hiveserver2_address(address)
    auth = (hs2.auth or saved.auth or "NOSASL").upper()
    user = hs2.user or saved.user
    kerberos = hs2.kerberos_service or saved.kerberos_service
    if kerberos and auth != "KERBEROS":
        raise InputError(f"--hs2-kerberos-service applies to --hs2-auth KERBEROS, not {auth}")
    password = None
    if auth in ("LDAP", "CUSTOM"):
        var = hs2.password_env or saved.password_env or DEFAULT_PASSWORD_ENV
        password = env.get(var)
        if password is None:
            if not sys.stdin.isatty():
                raise InputError(f"HiveServer2 {address} with auth={auth} needs a password: set ${var} "
                                 "(or run on a terminal to be asked)")
            password = click.prompt(f"password of {user or 'your user'} on HiveServer2 {address}",
                                    hide_input=True, err=True)
    elif hs2.password_env:
        raise InputError(f"--hs2-password-env applies to --hs2-auth LDAP or CUSTOM, not {auth}")
    if auth == "KERBEROS":
        kerberos = kerberos or "hive"
    return HiveServer2Login(host, port, auth, user, password, kerberos)


def verbose(ctx: click.Context | None = None) -> bool:
    ctx = ctx or click.get_current_context(silent=True)
    while ctx is not None:
        if ctx.obj and ctx.obj.get("verbose"):
            return True
        ctx = ctx.parent
    return False

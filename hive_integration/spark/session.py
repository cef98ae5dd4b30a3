"""Build the one SparkSession (with Hive support) the planner talks to.

Why a builder of our own: a default ``enableHiveSupport()`` session scatters state
into the current directory (``metastore_db/``, ``derby.log``, ``spark-warehouse/``)
and into /tmp (``/tmp/hive``, ``/tmp/<user>``, ``blockmgr-*``).  Here every piece
of state lives under one ``state_dir``: per user by default (``default_state_dir``),
a tmp dir in the tests.

The session is the user's Spark, not a fixed one: ``master`` (default ``local[2]``, the demo's),
the user's ``spark-defaults.conf`` and ``hive-site.xml`` (``hive_integration.spark.user_conf``) and
any ``conf`` given. The planner's own settings are defaults where the user set nothing; a few that
the planner's correctness rests on are always its own (``FORCED``). On a cluster master the
settings that only suit a 2-core local driver (driver memory, 8 shuffle partitions, a driver bound
to 127.0.0.1, no UI, a local Hive scratch folder) are left out.

Traps (found by hand, Spark 4.3 / Hive 2.3.10 jars):
- JVM options (``-Dderby.system.home``, ``-Djava.io.tmpdir``) only take effect
  when the driver JVM is launched, i.e. on the *first* session of the process.
  ``getOrCreate()`` silently returns an existing session and ignores static
  confs, so we refuse a second session with a different warehouse or master instead of
  quietly writing to the wrong place.
- Two JVMs cannot open the same embedded Derby (``ERROR XSDB6``).  To share a
  catalog between processes pass ``metastore_uri`` (a StandaloneMetastore); a second JVM on
  the embedded one is refused before it starts (``hive_integration.spark.derby_lock``).
- A ``hive-site.xml`` on the driver's class path (``SPARK_CONF_DIR``, ``HADOOP_CONF_DIR``) with
  ``hive.metastore.uris`` beats the embedded Derby's connection URL: the embedded session sets
  ``hive.metastore.uris`` to "" to stay embedded.
- A ``--conf spark.driver.extraJavaOptions`` replaces the one in spark-defaults.conf, so the
  planner's ``-D`` options are prepended to the user's, never dropped or dropping theirs.
- ``hive.exec.scratchdir`` defaults to ``/tmp/hive`` even on the local file
  system; ``hive.exec.local.scratchdir`` / ``hive.downloaded.resources.dir`` /
  ``hive.querylog.location`` default under ``java.io.tmpdir``: set them all.
- With a remote metastore, tables in ``default`` land in the *metastore's*
  warehouse dir (the database's locationUri), not in our ``spark.sql.warehouse.dir``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from pyspark.sql import SparkSession

from hive_integration.spark.user_conf import default_state_dir as default_state_dir  # re-exported
from planner.errors import MetastoreError, PlannerError

#: Shuffle partitions for a 2-core box: the default 200 makes tiny tasks dominate.
DEFAULT_SHUFFLE_PARTITIONS = 8

# Log4j2 config that keeps the driver quiet from the first line of start-up
# (``setLogLevel`` only applies after the context exists).
_LOG4J2 = """\
rootLogger.level = {level}
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{HH:mm:ss}} %p %c{{1}}: %m%n
# Hive/DataNucleus are noisy at WARN about things that are fine locally.
logger.datanucleus.name = DataNucleus
logger.datanucleus.level = error
logger.hive.name = org.apache.hadoop.hive
logger.hive.level = error
logger.nativeload.name = org.apache.hadoop.util.NativeCodeLoader
logger.nativeload.level = error
logger.hivelog.name = hive.log
logger.hivelog.level = error
logger.sparkconf.name = org.apache.spark.SparkConf
logger.sparkconf.level = error
# "SET hive.exec.dynamic.partition … might not work": the emitted SQL carries these SETs for Hive;
# the session already has them (spark.hadoop.*), so the warning only looks like a failure.
logger.setcommand.name = org.apache.spark.sql.execution.command.SetCommand
logger.setcommand.level = error
# The embedded metastore logs every exception it hands back, frames and all, at ERROR
# (AlreadyExistsException for CREATE DATABASE IF NOT EXISTS, NoSuchObjectException for a lookup);
# the caller gets the exception itself, and the planner reports what matters in one line.
logger.hmshandler.name = org.apache.hadoop.hive.metastore.RetryingHMSHandler
logger.hmshandler.level = fatal
logger.createnamespace.name = org.apache.spark.sql.execution.datasources.v2.CreateNamespaceExec
logger.createnamespace.level = error
"""


def write_log4j2_config(directory: Path, level: str = "WARN") -> Path:
    """Write a log4j2.properties at ``level`` into ``directory`` and return its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "log4j2.properties"
    path.write_text(_LOG4J2.format(level=level))
    return path


def state_dirs(state_dir: Path) -> dict[str, Path]:
    """The sub-directories of ``state_dir`` used by Spark/Hive (created on demand)."""
    dirs = {
        "warehouse": state_dir / "warehouse",
        "tmp": state_dir / "tmp",
        "spark_local": state_dir / "tmp" / "spark-local",
        "hive_scratch": state_dir / "tmp" / "hive-scratch",
        "hive_local_scratch": state_dir / "tmp" / "hive-local-scratch",
        "hive_resources": state_dir / "tmp" / "hive-resources",
        "hive_querylog": state_dir / "tmp" / "hive-querylog",
        "conf": state_dir / "conf",
    }
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    return dirs


def hive_state_conf(state_dir: Path) -> dict[str, str]:
    """Hive settings that keep Hive's scratch/resource folders inside ``state_dir``.

    Returned without the ``spark.hadoop.`` prefix so servers can reuse them as
    ``--hiveconf`` / hive-site.xml entries.
    """
    d = state_dirs(state_dir)
    return {
        "hive.exec.scratchdir": str(d["hive_scratch"]),
        "hive.exec.local.scratchdir": str(d["hive_local_scratch"]),
        "hive.downloaded.resources.dir": str(d["hive_resources"]),
        "hive.querylog.location": str(d["hive_querylog"]),
        # Dynamic-partition INSERTs on the Hive write path need these; Spark's own
        # writer ignores them, so setting them is harmless.
        "hive.exec.dynamic.partition": "true",
        "hive.exec.dynamic.partition.mode": "nonstrict",
        "hive.exec.max.dynamic.partitions": "100000",
        "hive.exec.max.dynamic.partitions.pernode": "100000",
    }


def java_options(state_dir: Path, *, log_level: str = "WARN") -> str:
    """``-D`` options for a JVM whose tmp/derby/log state must stay in ``state_dir``."""
    d = state_dirs(state_dir)
    log4j = write_log4j2_config(d["conf"], log_level)
    return " ".join(
        [
            f"-Djava.io.tmpdir={d['tmp']}",
            # hsperfdata goes to /tmp/hsperfdata_<user> whatever java.io.tmpdir says.
            "-XX:-UsePerfData",
            f"-Dderby.system.home={state_dir}",
            f"-Dlog4j2.configurationFile=file:{log4j}",
            f"-Dhive.log.dir={state_dir / 'logs'}",
        ]
    )


LOCAL_MASTER = "local[2]"

#: Settings the planner's correctness rests on: a user's value never replaces these.
#: ``partitionOverwriteMode=dynamic``: INSERT OVERWRITE ... PARTITION (p) replaces only the
#: partitions written, like Hive does; "static" would first wipe every partition of the table.
FORCED = ("spark.sql.catalogImplementation", "spark.sql.sources.partitionOverwriteMode")

#: Settings that suit only a local driver on a small machine; left out on a cluster master.
LOCAL_ONLY = ("spark.driver.host", "spark.driver.bindAddress", "spark.ui.enabled", "spark.sql.shuffle.partitions",
              "spark.driver.memory", "spark.hadoop.hive.exec.scratchdir")

_JAVA_OPTIONS = "spark.driver.extraJavaOptions"


def is_local(master: str) -> bool:
    return master.strip().lower().startswith("local")


def spark_conf(
    state_dir: Path, *, metastore_uri: str | None = None, log_level: str = "WARN"
) -> dict[str, str]:
    """The planner's own Spark settings for a local driver (also used by SparkThriftServer)."""
    state_dir = Path(state_dir).resolve()
    d = state_dirs(state_dir)
    conf = {
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(d["warehouse"]),
        "spark.local.dir": str(d["spark_local"]),
        _JAVA_OPTIONS: java_options(state_dir, log_level=log_level),
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": str(DEFAULT_SHUFFLE_PARTITIONS),
        "spark.sql.sources.partitionOverwriteMode": "dynamic",
        "spark.driver.memory": "2g",
    }
    for k, v in hive_state_conf(state_dir).items():
        conf[f"spark.hadoop.{k}"] = v
    conf.update(metastore_conf(state_dir, metastore_uri))
    return conf


def metastore_conf(state_dir: Path, metastore_uri: str | None) -> dict[str, str]:
    """The settings that name the metastore: ``metastore_uri``, or the embedded Derby in
    ``state_dir`` (with ``hive.metastore.uris`` empty, so no ``hive-site.xml`` overrides it)."""
    if metastore_uri:
        return {"spark.hadoop.hive.metastore.uris": metastore_uri}
    db = Path(state_dir).resolve() / "metastore_db"
    return {"spark.hadoop.hive.metastore.uris": "",
            "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={db};create=true"}


def session_settings(state_dir: Path, *, metastore_uri: str | None = None, master: str | None = None,
                     conf: dict | None = None, env=None) -> dict[str, str]:
    """Every setting of the session ``build_spark_session`` starts, ``spark.master`` included.

    Precedence, lowest first: the planner's defaults (``spark_conf``; on a cluster master without
    ``LOCAL_ONLY``), the user's ``spark-defaults.conf``, ``conf`` (``--conf``/planner.toml), then
    ``FORCED`` and the metastore the planner was told to use. ``master``: given, else
    ``spark.master`` of ``conf`` or of ``spark-defaults.conf``, else ``local[2]``. The warehouse
    folder is the user's where ``spark-defaults.conf``/``conf`` or the ``hive-site.xml``
    (``hive.metastore.warehouse.dir``) of a remote metastore names one."""
    from hive_integration.spark.user_conf import hive_site, spark_defaults

    user = spark_defaults(env)
    explicit = {k: str(v) for k, v in (conf or {}).items()}
    master = master or explicit.get("spark.master") or user.get("spark.master") or LOCAL_MASTER
    ours = spark_conf(state_dir, metastore_uri=metastore_uri)
    if not is_local(master):
        for key in LOCAL_ONLY:
            ours.pop(key, None)
    if metastore_uri and "hive.metastore.warehouse.dir" in hive_site(env):
        ours.pop("spark.sql.warehouse.dir")  # Spark takes the hive-site's, as it would without the planner
    settings = {**ours, **user, **explicit}
    java = [ours[_JAVA_OPTIONS]] + [v for v in (user.get(_JAVA_OPTIONS), explicit.get(_JAVA_OPTIONS)) if v]
    settings[_JAVA_OPTIONS] = " ".join(java)  # later -D options win in the JVM: the user's
    settings.update({k: ours[k] for k in FORCED})
    settings.update(metastore_conf(state_dir, metastore_uri))
    settings["spark.master"] = master
    return settings


def build_spark_session(
    state_dir: Path,
    *,
    metastore_uri: str | None = None,
    master: str | None = None,
    app_name: str = "planner",
    conf: dict | None = None,
    quiet: bool = True,
) -> SparkSession:
    """A Hive-enabled SparkSession on ``master`` with the planner's state under ``state_dir``.

    ``metastore_uri`` (``thrift://host:port``) points at a standalone metastore;
    without it the catalog is an embedded Derby in ``state_dir/metastore_db``, refused at once
    (``MetastoreError``) when another process has it. ``conf`` entries override ours and the
    user's ``spark-defaults.conf`` (``session_settings``). Start-up takes ~7-10 s locally, plus ~8 s
    at the first catalog call when Derby creates its schema.  ``quiet`` drops the JVM's start-up
    notice about incubator modules (see ``NOISE``); ``--verbose`` in the CLI turns it off.
    """
    state_dir = Path(state_dir).resolve()
    settings = session_settings(state_dir, metastore_uri=metastore_uri, master=master, conf=conf)

    # getActiveSession() is per thread; _instantiatedSession is the process-wide one.
    active = SparkSession.getActiveSession() or SparkSession._instantiatedSession
    if active is not None:
        current = active.conf.get("spark.sql.warehouse.dir", None)
        wanted = settings.get("spark.sql.warehouse.dir")
        if current and wanted and Path(current.removeprefix("file:")).resolve() != Path(wanted):
            raise PlannerError(
                f"a SparkSession is already running with warehouse {current}; "
                f"stop it before building one for {state_dir}"
            )
        running = active.sparkContext.master
        if (master or (conf or {}).get("spark.master")) and running != settings["spark.master"]:
            raise PlannerError(f"a SparkSession is already running on {running}; stop it before starting one "
                               f"on {settings['spark.master']}")
        return active

    from hive_integration.spark.user_conf import check_spark_home

    check_spark_home()
    if not metastore_uri:
        refuse_shared_derby(state_dir)
    # Python workers must be this interpreter (the venv), not whatever is on PATH.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if is_local(settings["spark.master"]):
        # Without it Spark resolves the hostname and may pick a non-loopback NIC.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

    if quiet:
        _launch_quiet_gateway(settings)
        _quiet_query_context_loggers()
    builder = SparkSession.builder.master(settings["spark.master"]).appName(app_name)
    for k, v in settings.items():
        builder = builder.config(k, v)
    spark = builder.enableHiveSupport().getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def refuse_shared_derby(state_dir: Path) -> None:
    """Raise ``MetastoreError`` (one line) when another process uses ``state_dir``'s embedded
    metastore; else hold the folder (``planner.pid``) for this process's life, so that a planner
    starting in the same instant waits its turn the same way."""
    from hive_integration.spark.derby_lock import derby_holder, hold_state_dir

    holder = hold_state_dir(state_dir) or derby_holder(Path(state_dir) / "metastore_db")
    if holder is not None:
        raise MetastoreError(
            f"the embedded metastore in {state_dir} is in use by {holder.describe()}; it boots in one process "
            "at a time: wait for that one to finish, give this command its own --state-dir, or share a "
            "standalone metastore between commands with --metastore thrift://HOST:PORT (docs/production.md)")


# Lines the JVM prints that are not problems: Spark 4 runs with ``--add-modules
# jdk.incubator.vector``, and Java says so on stderr before any logging is configured.
NOISE = ("WARNING: Using incubator modules",)


def _launch_quiet_gateway(settings: dict[str, str]) -> None:
    """Start the driver JVM with its stderr read through a filter that drops ``NOISE`` lines and
    passes everything else on (so real errors still show). Spark then reuses this gateway."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return
    conf = SparkConf(loadDefaults=False).setAll(list(settings.items()))
    gateway = launch_gateway(conf, popen_kwargs={"stderr": subprocess.PIPE})
    threading.Thread(target=_forward_stderr, args=(gateway.proc.stderr,), daemon=True,
                     name="jvm-stderr").start()
    SparkContext._gateway = gateway
    SparkContext._jvm = gateway.jvm


def _quiet_query_context_loggers() -> None:
    """PySpark logs every SQL error it raises to Python, as a JSON ERROR record on stderr, before
    the caller can catch it (``SparkCatalogLayouts`` asks for tables that may not exist); the
    planner reports the errors that matter itself, in one line."""
    import logging

    from pyspark.logger import PySparkLogger

    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL)


def _forward_stderr(pipe) -> None:
    for raw in iter(pipe.readline, b""):
        line = raw.decode("utf-8", errors="replace")
        if line.startswith(NOISE):
            continue
        try:
            sys.stderr.write(line)
            sys.stderr.flush()
        except (ValueError, OSError):  # stderr closed at interpreter exit
            return

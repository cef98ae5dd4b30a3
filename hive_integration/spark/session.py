"""Build the one local SparkSession (with Hive support) the planner talks to.

Why a builder of our own: a default ``enableHiveSupport()`` session scatters state
into the current directory (``metastore_db/``, ``derby.log``, ``spark-warehouse/``)
and into /tmp (``/tmp/hive``, ``/tmp/<user>``, ``blockmgr-*``).  Here every piece
of state lives under one ``state_dir`` so tests can use a tmp dir and the CLI a
project-local ``.planner/``.

Traps (found by hand, Spark 4.3 / Hive 2.3.10 jars):
- JVM options (``-Dderby.system.home``, ``-Djava.io.tmpdir``) only take effect
  when the driver JVM is launched, i.e. on the *first* session of the process.
  ``getOrCreate()`` silently returns an existing session and ignores static
  confs, so we refuse a second session with a different warehouse instead of
  quietly writing to the wrong place.
- Two JVMs cannot open the same embedded Derby (``ERROR XSDB6``).  To share a
  catalog between processes pass ``metastore_uri`` (a StandaloneMetastore).
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

from planner.errors import PlannerError

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


def default_state_dir() -> Path:
    """The project-local ``.planner/`` directory (``$PLANNER_HOME`` overrides)."""
    env = os.environ.get("PLANNER_HOME")
    if env:
        return Path(env).expanduser().resolve()
    repo = Path(__file__).resolve().parents[1]
    if (repo / "setup.cfg").exists():  # running from a checkout / editable install
        return repo / ".planner"
    return Path.home() / ".planner"


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


def spark_conf(
    state_dir: Path, *, metastore_uri: str | None = None, log_level: str = "WARN"
) -> dict[str, str]:
    """All Spark settings ``build_spark_session`` uses (also used by SparkThriftServer)."""
    state_dir = Path(state_dir).resolve()
    d = state_dirs(state_dir)
    conf = {
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(d["warehouse"]),
        "spark.local.dir": str(d["spark_local"]),
        "spark.driver.extraJavaOptions": java_options(state_dir, log_level=log_level),
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": str(DEFAULT_SHUFFLE_PARTITIONS),
        # INSERT OVERWRITE ... PARTITION (p) replaces only the partitions written,
        # like Hive does; "static" would first wipe every partition of the table.
        "spark.sql.sources.partitionOverwriteMode": "dynamic",
        "spark.driver.memory": "2g",
    }
    for k, v in hive_state_conf(state_dir).items():
        conf[f"spark.hadoop.{k}"] = v
    if metastore_uri:
        conf["spark.hadoop.hive.metastore.uris"] = metastore_uri
    else:
        db = state_dir / "metastore_db"
        conf["spark.hadoop.javax.jdo.option.ConnectionURL"] = (
            f"jdbc:derby:;databaseName={db};create=true"
        )
    return conf


def build_spark_session(
    state_dir: Path,
    *,
    metastore_uri: str | None = None,
    app_name: str = "planner",
    conf: dict | None = None,
    quiet: bool = True,
) -> SparkSession:
    """A local[2] Hive-enabled SparkSession with all state under ``state_dir``.

    ``metastore_uri`` (``thrift://host:port``) points at a standalone metastore;
    without it the catalog is an embedded Derby in ``state_dir/metastore_db``.
    ``conf`` entries override ours.  Start-up takes ~7-10 s, plus ~8 s at the
    first catalog call when Derby creates its schema.  ``quiet`` drops the JVM's start-up
    notice about incubator modules (see ``NOISE``); ``--verbose`` in the CLI turns it off.
    """
    state_dir = Path(state_dir).resolve()
    settings = spark_conf(state_dir, metastore_uri=metastore_uri)
    settings.update({k: str(v) for k, v in (conf or {}).items()})

    # getActiveSession() is per thread; _instantiatedSession is the process-wide one.
    active = SparkSession.getActiveSession() or SparkSession._instantiatedSession
    if active is not None:
        current = active.conf.get("spark.sql.warehouse.dir", None)
        wanted = settings["spark.sql.warehouse.dir"]
        if current and Path(current.removeprefix("file:")).resolve() != Path(wanted):
            raise PlannerError(
                f"a SparkSession is already running with warehouse {current}; "
                f"stop it before building one for {state_dir}"
            )
        return active

    # Python workers must be this interpreter (the venv), not whatever is on PATH.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # Without it Spark resolves the hostname and may pick a non-loopback NIC.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

    if quiet:
        _launch_quiet_gateway(settings)
        _quiet_query_context_loggers()
    builder = SparkSession.builder.master("local[2]").appName(app_name)
    for k, v in settings.items():
        builder = builder.config(k, v)
    spark = builder.enableHiveSupport().getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


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

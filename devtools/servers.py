"""Start a standalone Hive Metastore, a Spark Thrift Server (HiveServer2) or a Spark
standalone cluster (a master and workers) locally.

Why: end-to-end tests and demos need a real catalog shared between processes
(embedded Derby allows one JVM only), a real HiveServer2 endpoint, and a real
cluster to show that a layout's INSERT and the statistics pass are ordinary
Spark jobs that scale out (``--master spark://…``).  All are started from the
jars that ship inside the pyspark wheel, so nothing else needs installing.  Each
server:

- listens on a free port of 127.0.0.1 and keeps all state under ``state_dir``
  (Derby db, warehouse, tmp, logs);
- is ready when its port accepts a TCP connection; if it dies or times out the
  error carries the tail of its log file;
- runs in its own process group and is stopped by PID (SIGTERM, then SIGKILL
  of the group), also at interpreter exit if the caller forgot, and on SIGTERM
  or SIGINT of the process that started it once ``stop_servers_on_signals()``
  was called (the test suite does: a CI time limit's SIGTERM must not leave
  JVMs behind, and being in their own group they do not get the signal).

Measured on 2 cores: metastore ready in ~6 s, thrift server in ~12-17 s, a
master and two workers in ~10 s.

Traps:
- Hive 2.3's metastore has no bind-host setting (``hive.metastore.thrift.bind.host``
  arrived in Hive 3): it listens on the wildcard address.  We *connect* only via
  127.0.0.1, but the port is reachable from other interfaces while it runs.
- Without ``hive.async.log.enabled=false`` the metastore dies at start-up with
  ``NoClassDefFoundError: com/lmax/disruptor/EventTranslatorVararg``.
- pyspark has no ``start-thriftserver.sh``; spark-submit accepts ``--hiveconf``
  only because the launcher special-cases the HiveThriftServer2 main class.
- ``spark-submit`` runs ``spark-class``, which ``exec``s the JVM, so the PID we
  hold is the JVM itself; the group kill catches the launcher helper anyway.
- A worker's port opens before it has registered with the master: the cluster
  is ready when the master's ``/json`` page lists every worker ALIVE.
- Master and workers bind to 127.0.0.1 (``--host``, ``SPARK_LOCAL_IP``); their
  web UIs get free ports too (the defaults 8080/8081 may be taken).
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

import pyspark

from hive_integration.spark.session import hive_state_conf, java_options, spark_conf
from planner.errors import PlannerError

HOST = "127.0.0.1"


class ServerStartError(PlannerError):
    """A local server process exited or did not open its port in time."""


def pyspark_home() -> Path:
    """The installed pyspark package dir; it is a complete SPARK_HOME (bin/, jars/)."""
    return Path(pyspark.__file__).resolve().parent


def java_executable() -> str:
    """``$JAVA_HOME/bin/java`` if set, else ``java`` from PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise ServerStartError("no java executable found (set JAVA_HOME or put java on PATH)")
    return found


def free_port(host: str = HOST) -> int:
    """A port that is free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def log_tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def hive_site_xml(properties: dict[str, str]) -> str:
    """A hive-site.xml document holding ``properties``."""
    body = "\n".join(
        f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>"
        for k, v in properties.items()
    )
    return f'<?xml version="1.0"?>\n<configuration>\n{body}\n</configuration>\n'


_RUNNING: dict[int, "_LocalServer"] = {}  # id() -> every server this process started and has not stopped


def stop_all(timeout: float = 20.0) -> None:
    """Stop every server this process started and has not stopped yet, the newest first."""
    for server in reversed(list(_RUNNING.values())):
        server.stop(timeout=timeout)


def stop_servers_on_signals(signals=(signal.SIGTERM, signal.SIGINT)) -> None:
    """On each of ``signals``: stop every running server, then do what the signal did before
    (die of it, or raise ``KeyboardInterrupt`` for SIGINT)."""
    for sig in signals:
        previous = signal.getsignal(sig)

        def handler(signum, frame, previous=previous):
            stop_all(timeout=5.0)
            if callable(previous):
                previous(signum, frame)
            elif previous != signal.SIG_IGN:
                signal.signal(signum, signal.SIG_DFL)
                os.kill(os.getpid(), signum)

        signal.signal(sig, handler)


class _LocalServer:
    """A JVM server process on a loopback port; subclasses give the command."""

    name = "server"
    default_timeout = 60.0

    def __init__(
        self, state_dir: Path, *, port: int | None = None, startup_timeout: float | None = None
    ):
        self.state_dir = Path(state_dir).resolve()
        self.host = HOST
        self.port = port or free_port()
        self.startup_timeout = startup_timeout or self.default_timeout
        self.log_path = self.state_dir / "logs" / f"{self.name}.log"
        self.startup_seconds: float | None = None
        self._proc: subprocess.Popen | None = None

    # -- subclass hooks ------------------------------------------------------
    def _command(self) -> list[str]:
        raise NotImplementedError

    def _env(self) -> dict[str, str]:
        return dict(os.environ)

    # -- lifecycle -----------------------------------------------------------
    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def uri(self) -> str:
        return f"thrift://{self.host}:{self.port}"

    def start(self):
        """Launch the process and block until its port accepts connections."""
        if self._proc is not None:
            return self
        # Readiness is "the port accepts connections", so a port someone else
        # already listens on would look ready at once: refuse it up front.
        if port_open(self.host, self.port):
            raise ServerStartError(f"{self.name}: port {self.host}:{self.port} is already in use")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        with open(self.log_path, "ab") as log:
            self._proc = subprocess.Popen(
                self._command(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self._env(),
                cwd=self.state_dir,  # anything written relative lands in state_dir
                start_new_session=True,  # own process group, so stop() can kill it whole
            )
        atexit.register(self.stop)
        _RUNNING[id(self)] = self
        try:
            self._wait_ready(started)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - started
        return self

    def _wait_ready(self, started: float) -> None:
        deadline = started + self.startup_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise ServerStartError(
                    f"{self.name} exited with code {self._proc.returncode} during start-up; "
                    f"log {self.log_path}:\n{log_tail(self.log_path)}"
                )
            if port_open(self.host, self.port):
                return
            time.sleep(0.25)
        raise ServerStartError(
            f"{self.name} did not open {self.host}:{self.port} within "
            f"{self.startup_timeout:.0f} s; log {self.log_path}:\n{log_tail(self.log_path)}"
        )

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM the PID, wait, then SIGKILL its whole process group."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        _RUNNING.pop(id(self), None)
        atexit.unregister(self.stop)
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
        try:  # leftovers (or a JVM that ignored SIGTERM): the group id is the PID
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(uri={self.uri!r}, pid={self.pid})"


class StandaloneMetastore(_LocalServer):
    """Hive 2.3 metastore (thrift) over an embedded Derby in ``state_dir/hms_db``."""

    name = "metastore"
    default_timeout = 90.0

    def __init__(self, state_dir: Path, *, port: int | None = None,
                 startup_timeout: float | None = None, heap: str = "512m"):
        super().__init__(state_dir, port=port, startup_timeout=startup_timeout)
        self.heap = heap
        self.conf_dir = self.state_dir / "conf-metastore"
        self.warehouse = self.state_dir / "warehouse"

    def site_properties(self) -> dict[str, str]:
        props = {
            "javax.jdo.option.ConnectionURL":
                f"jdbc:derby:;databaseName={self.state_dir / 'hms_db'};create=true",
            "javax.jdo.option.ConnectionDriverName": "org.apache.derby.jdbc.EmbeddedDriver",
            "datanucleus.schema.autoCreateAll": "true",
            "hive.metastore.schema.verification": "false",
            "hive.metastore.warehouse.dir": str(self.warehouse),
            # Without this: NoClassDefFoundError com/lmax/disruptor/EventTranslatorVararg.
            "hive.async.log.enabled": "false",
        }
        props.update(hive_state_conf(self.state_dir))
        return props

    def _command(self) -> list[str]:
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        self.warehouse.mkdir(parents=True, exist_ok=True)
        (self.conf_dir / "hive-site.xml").write_text(hive_site_xml(self.site_properties()))
        classpath = f"{self.conf_dir}:{pyspark_home() / 'jars'}/*"
        return [
            java_executable(),
            f"-Xmx{self.heap}",
            *java_options(self.state_dir, log_level="INFO").split(),
            "-cp", classpath,
            "org.apache.hadoop.hive.metastore.HiveMetaStore",
            "-p", str(self.port),
        ]


class SparkThriftServer(_LocalServer):
    """Spark's HiveServer2 (local[2], NOSASL), optionally on a shared metastore."""

    name = "thriftserver"
    default_timeout = 120.0

    def __init__(self, state_dir: Path, *, metastore_uri: str | None = None,
                 port: int | None = None, startup_timeout: float | None = None,
                 conf: dict | None = None, hiveconf: dict | None = None, jars: tuple[Path, ...] = ()):
        super().__init__(state_dir, port=port, startup_timeout=startup_timeout)
        self.metastore_uri = metastore_uri
        self.conf = dict(conf or {})
        self.hiveconf = dict(hiveconf or {})  # e.g. hive.server2.authentication=CUSTOM and its class
        self.jars = tuple(jars)  # on the driver's class path (an authentication provider)

    @property
    def uri(self) -> str:
        return f"jdbc:hive2://{self.host}:{self.port}/default"

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["SPARK_HOME"] = str(pyspark_home())
        env.setdefault("SPARK_LOCAL_IP", HOST)
        env.setdefault("PYSPARK_PYTHON", sys.executable)
        # spark-class first runs a small launcher JVM; keep it off /tmp too.
        env["SPARK_LAUNCHER_OPTS"] = (
            f"-XX:-UsePerfData -Djava.io.tmpdir={self.state_dir / 'tmp'}"
        )
        return env

    def _command(self) -> list[str]:
        settings = spark_conf(self.state_dir, metastore_uri=self.metastore_uri, log_level="INFO")
        settings["spark.driver.memory"] = "1g"
        settings.update({k: str(v) for k, v in self.conf.items()})
        hiveconf = {
            "hive.server2.thrift.port": str(self.port),
            "hive.server2.thrift.bind.host": self.host,
            "hive.server2.authentication": "NOSASL",
            "hive.server2.transport.mode": "binary",
            **self.hiveconf,
        }
        cmd = [
            str(pyspark_home() / "bin" / "spark-submit"),
            "--master", "local[2]",
            "--name", "planner-thriftserver",
            "--class", "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
        ]
        if self.jars:
            cmd += ["--driver-class-path", os.pathsep.join(str(j) for j in self.jars)]
        for k, v in settings.items():
            cmd += ["--conf", f"{k}={v}"]
        for k, v in hiveconf.items():
            cmd += ["--hiveconf", f"{k}={v}"]
        cmd.append("spark-internal")
        return cmd


def file_auth_jar(folder: Path) -> Path:
    """HiveServer2 CUSTOM authentication for tests (``devtools/testauth``: users and passwords of a
    ``user:password`` file named by ``--hiveconf planner.testauth.file``), compiled with javac
    against pyspark's thrift-server jar into ``folder/file-auth.jar``. pyhive's ``LDAP`` and
    ``CUSTOM`` logins both send the user and password as SASL PLAIN, so this checks the client side
    of an LDAP login without an LDAP server."""
    jars = pyspark_home() / "jars"
    cp = [next(jars.glob("spark-hive-thriftserver_*.jar")), next(jars.glob("hadoop-client-api-*.jar"))]
    src = Path(__file__).resolve().parent / "testauth" / "src" / "planner" / "testauth" / "FileAuthProvider.java"
    classes = Path(folder) / "classes"
    classes.mkdir(parents=True, exist_ok=True)
    javac = Path(java_executable()).with_name("javac")
    subprocess.run([str(javac if javac.exists() else "javac"), "--release", "17", "-d", str(classes), "-cp",
                    os.pathsep.join(map(str, cp)), str(src)], check=True, capture_output=True, timeout=120)
    jar = Path(folder) / "file-auth.jar"
    with zipfile.ZipFile(jar, "w") as z:
        for f in classes.rglob("*.class"):
            z.write(f, f.relative_to(classes).as_posix())
    return jar


class _SparkDaemon(_LocalServer):
    """A daemon started by ``spark-class`` from pyspark's own jars, on loopback."""

    default_timeout = 90.0
    main_class = ""

    def __init__(self, state_dir: Path, *, port: int | None = None, startup_timeout: float | None = None,
                 heap: str = "256m"):
        super().__init__(state_dir, port=port, startup_timeout=startup_timeout)
        self.heap = heap
        self.webui_port = free_port()

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        tmp = self.state_dir / "tmp"
        tmp.mkdir(parents=True, exist_ok=True)
        env.update({
            "SPARK_HOME": str(pyspark_home()),
            "SPARK_LOCAL_IP": HOST,
            "SPARK_LOCAL_DIRS": str(tmp),
            "SPARK_LOG_DIR": str(self.state_dir / "logs"),
            "SPARK_DAEMON_MEMORY": self.heap,
            "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable),
            "SPARK_LAUNCHER_OPTS": f"-XX:-UsePerfData -Djava.io.tmpdir={tmp}",
            "SPARK_DAEMON_JAVA_OPTS": f"-XX:-UsePerfData -Djava.io.tmpdir={tmp}",
        })
        return env

    def _args(self) -> list[str]:
        raise NotImplementedError

    def _command(self) -> list[str]:
        return [str(pyspark_home() / "bin" / "spark-class"), self.main_class, *self._args()]


class SparkMaster(_SparkDaemon):
    """A standalone cluster's master (``org.apache.spark.deploy.master.Master``)."""

    name = "spark-master"
    main_class = "org.apache.spark.deploy.master.Master"

    @property
    def uri(self) -> str:
        return f"spark://{self.host}:{self.port}"

    def _args(self) -> list[str]:
        return ["--host", self.host, "--port", str(self.port), "--webui-port", str(self.webui_port)]

    def status(self) -> dict:
        """The master's ``/json`` page: workers, cores, memory, applications."""
        with urllib.request.urlopen(f"http://{self.host}:{self.webui_port}/json/", timeout=5) as r:
            return json.loads(r.read().decode())

    def alive_workers(self) -> int:
        try:
            return sum(1 for w in self.status().get("workers", []) if w.get("state") == "ALIVE")
        except OSError:
            return 0


class SparkWorker(_SparkDaemon):
    """A standalone cluster's worker (``org.apache.spark.deploy.worker.Worker``) of ``master``."""

    main_class = "org.apache.spark.deploy.worker.Worker"

    def __init__(self, state_dir: Path, master: str, *, index: int = 1, cores: int = 1, memory: str = "1g",
                 port: int | None = None, startup_timeout: float | None = None):
        self.name = f"spark-worker-{index}"
        super().__init__(state_dir, port=port, startup_timeout=startup_timeout)
        self.master, self.cores, self.memory = master, cores, memory
        self.work_dir = self.state_dir / f"work-{index}"

    @property
    def uri(self) -> str:
        return f"spark-worker://{self.host}:{self.port}"

    def _args(self) -> list[str]:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        return ["--host", self.host, "--port", str(self.port), "--webui-port", str(self.webui_port),
                "--cores", str(self.cores), "--memory", self.memory, "--work-dir", str(self.work_dir), self.master]


class StandaloneCluster:
    """A Spark standalone cluster on loopback: one master and ``workers`` workers, stopped by PID.

    Applications connect with ``--master`` / ``spark.master`` = ``cluster.uri``. Every executor of
    a worker gets at most ``memory`` (e.g. ``spark.executor.memory=768m`` under ``memory="1g"``).
    """

    def __init__(self, state_dir: Path, *, workers: int = 2, cores: int = 1, memory: str = "1g",
                 startup_timeout: float = 120.0):
        self.state_dir = Path(state_dir).resolve()
        self.master = SparkMaster(self.state_dir / "master", startup_timeout=startup_timeout)
        self.workers = [SparkWorker(self.state_dir / f"worker-{i}", self.master.uri, index=i, cores=cores,
                                    memory=memory, startup_timeout=startup_timeout) for i in range(1, workers + 1)]
        self.startup_timeout = startup_timeout
        self.startup_seconds: float | None = None

    @property
    def uri(self) -> str:
        return self.master.uri

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in (self.master, *self.workers) if p.pid is not None]

    def start(self) -> "StandaloneCluster":
        started = time.monotonic()
        try:
            self.master.start()
            for w in self.workers:
                w.start()
            deadline = started + self.startup_timeout
            while self.master.alive_workers() < len(self.workers):
                if time.monotonic() > deadline:
                    raise ServerStartError(
                        f"only {self.master.alive_workers()} of {len(self.workers)} workers registered with "
                        f"{self.uri} within {self.startup_timeout:.0f} s; logs under {self.state_dir}")
                for w in self.workers:
                    if w._proc is not None and w._proc.poll() is not None:
                        raise ServerStartError(f"{w.name} exited; log {w.log_path}:\n{log_tail(w.log_path)}")
                time.sleep(0.25)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - started
        return self

    def stop(self) -> None:
        for w in self.workers:
            w.stop()
        self.master.stop()

    def __enter__(self) -> "StandaloneCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"StandaloneCluster(uri={self.uri!r}, pids={self.pids})"


def main(argv: list[str] | None = None) -> int:
    """``python -m devtools.servers metastore|thriftserver|cluster --dir D``: run one in the foreground."""
    parser = argparse.ArgumentParser(prog="python -m devtools.servers", description=main.__doc__)
    parser.add_argument("kind", choices=["metastore", "thriftserver", "cluster"])
    parser.add_argument("--dir", required=True, type=Path, help="state directory")
    parser.add_argument("--port", type=int, default=None)
    parser.add_argument("--metastore-uri", default=None, help="thriftserver only: thrift://host:port")
    args = parser.parse_args(argv)
    args.dir.mkdir(parents=True, exist_ok=True)
    if args.kind == "cluster":
        cluster = StandaloneCluster(args.dir)
        return _serve(cluster, (cluster.master, *cluster.workers), lambda: (
            f"cluster ready at {cluster.uri} (pids {cluster.pids}, {cluster.startup_seconds:.1f} s); Ctrl-C stops it"),
            f"a cluster process exited; logs under {cluster.state_dir}")
    if args.kind == "metastore":
        server = StandaloneMetastore(args.dir, port=args.port)
    else:
        server = SparkThriftServer(args.dir, port=args.port, metastore_uri=args.metastore_uri)
    return _serve(server, (server,), lambda: (
        f"{server.name} ready at {server.uri} (pid {server.pid}, {server.startup_seconds:.1f} s); "
        f"log {server.log_path}; Ctrl-C stops it"), f"{server.name} exited; log {server.log_path}")


def _serve(running, processes, ready, gone: str) -> int:
    """Start ``running`` (a server or the cluster), say ``ready()``, and wait until Ctrl-C or until
    one of ``processes`` exits."""
    try:
        with running:
            print(ready(), flush=True)
            while all(p._proc is not None and p._proc.poll() is None for p in processes):
                time.sleep(1)
            print(gone, file=sys.stderr)
            return 1
    except KeyboardInterrupt:
        return 0
    except ServerStartError as e:
        print(e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

"""Issue 34's "done when", end to end: a fresh clone, the user's own Spark cluster and metastore.

* ``planner advise … --master spark://… --conf spark.executor.memory=1g`` and ``planner apply …
  --master spark://…`` run on the suite's standalone cluster (one worker), and Spark's status store
  shows their tasks on the cluster's executor, none on the driver;
* the clone has no ``planner.toml`` and no state of its own: the only configuration is a
  ``hive-site.xml`` in ``HADOOP_CONF_DIR`` naming the suite's standalone metastore, and no
  command is given ``--metastore`` or ``--state-dir``; ``explain`` afterwards reads the layout
  from that metastore with no flag at all, over thrift: it starts no JVM.

The commands run in processes of their own (``tests/production_job.py``): the run's shared
session is ``local[2]``, and a JVM cannot change its master.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.spark, pytest.mark.servers]

WORKLOAD = """\
-- one year of shipments
SELECT sum(l_extendedprice) FROM prod.lineitem WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01';
-- another year
SELECT count(*) FROM prod.lineitem WHERE l_shipdate >= DATE '1996-01-01' AND l_shipdate < DATE '1997-01-01';
SELECT avg(l_quantity) FROM prod.lineitem WHERE l_shipdate >= DATE '1993-03-01' AND l_shipdate < DATE '1993-09-01';
SELECT count(*) FROM prod.lineitem WHERE l_shipdate >= DATE '1997-06-01' AND l_shipdate < DATE '1998-01-01';
"""


def fresh_user(tmp_path: Path, metastore_uri: str) -> tuple[dict, Path]:
    """The environment of a user with a fresh clone and a hive-site.xml; the folder they stand in."""
    conf = tmp_path / "hadoop-conf"
    conf.mkdir()
    (conf / "hive-site.xml").write_text(textwrap.dedent(f"""\
        <?xml version="1.0"?>
        <configuration>
          <property><name>hive.metastore.uris</name><value>{metastore_uri}</value></property>
        </configuration>
        """))
    env = {k: v for k, v in os.environ.items()
           if k not in ("PLANNER_HOME", "PLANNER_CONFIG", "SPARK_HOME", "SPARK_CONF_DIR", "YARN_CONF_DIR")}
    env.update(HADOOP_CONF_DIR=str(conf), HOME=str(tmp_path / "home"), XDG_STATE_HOME=str(tmp_path / "state"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), PYTHONPATH=str(ROOT), PLANNER_PLAIN="1",
               SPARK_LOCAL_IP="127.0.0.1")  # one machine: the driver on loopback, as the cluster
    here = tmp_path / "work"
    here.mkdir()
    return env, here


def job(env: dict, cwd: Path, *args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "tests" / "production_job.py"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_advise_and_apply_run_on_the_users_cluster_and_metastore(metastore, standalone_cluster, tpch_small,
                                                                   tmp_path):
    env, here = fresh_user(tmp_path, metastore.uri)
    loaded = job(env, here, "load", str(tpch_small), "prod.lineitem")
    assert loaded.returncode == 0, loaded.stderr[-4000:]
    (here / "workload.sql").write_text(WORKLOAD)
    tmp = tmp_path / "executor-tmp"
    tmp.mkdir()
    master = standalone_cluster.uri
    run = job(env, here, "cli",
              "advise", "workload.sql", "--table", "prod.lineitem", "--out-dir", "advice", "--min-partition-mb", "0.25",
              "--master", master, "--conf", "spark.executor.memory=1g",
              "--conf", f"spark.executor.extraJavaOptions=-Djava.io.tmpdir={tmp}",
              "--", "apply", "advice", "--master", master)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-4000:]
    reports = [json.loads(line) for line in run.stdout.splitlines() if line.startswith('{"command"')]
    assert [r["command"] for r in reports] == ["advise", "apply"], run.stdout[-3000:]
    advised, applied = reports
    assert advised["master"] == master and advised["executor_memory"] == "1g"
    # the work ran on the cluster's executor: tasks after advise, more after apply's INSERT
    assert list(advised["executors"]) == ["0"] and advised["executors"]["0"] > 0, advised
    assert applied["executors"]["0"] > advised["executors"]["0"], applied
    assert (here / "advice" / "layout.json").exists()
    assert not (here / "metastore_db").exists() and not (ROOT / ".planner" / "prod").exists()
    # the state went to the user's folder, not the checkout's or the current one
    assert (tmp_path / "state" / "planner").is_dir()

    # no flag at all: the hive-site.xml names the metastore, the layout is read from it over thrift
    explained = subprocess.run([sys.executable, "-X", "importtime", "-m", "planner.cli", "explain", "workload.sql"],
                               cwd=here, env=env, capture_output=True, text=True, timeout=300)
    assert explained.returncode == 0, explained.stderr[-3000:]
    # issue 34: every Spark-backed command started a JVM of its own (explain: 75 s); this one reads thrift
    imported = {ln.split("|")[-1].strip().split(".")[0] for ln in explained.stderr.splitlines()
                if ln.startswith("import time:")}
    assert not imported & {"pyspark", "py4j"}
    # the applied layout was found in the metastore (without it: "no laid-out table read")
    read = re.search(r"prod\.lineitem: reads (\d+) of (\d+) partitions?", explained.stdout)
    assert read and int(read[1]) <= int(read[2]), explained.stdout
    # and the cluster's own UI (the master's /json/) lists the planner's application as finished
    finished = [a for a in standalone_cluster.master.status().get("completedapps", []) if a.get("name") == "planner"]
    assert finished and finished[-1].get("state") == "FINISHED", standalone_cluster.master.status()


# ---- HiveServer2 with a user and a password -------------------------------------------------------
@pytest.fixture(scope="module")
def password_server(tmp_path_factory):
    """A Spark Thrift Server that checks passwords (``hive.server2.authentication=CUSTOM`` with the
    test provider of ``devtools/testauth``, users in a file). pyhive sends the same SASL PLAIN login
    for ``LDAP`` and ``CUSTOM``, so this is the client's LDAP login without an LDAP server; the
    server's own LDAP lookup is not what is tested."""
    from devtools.servers import SparkThriftServer, file_auth_jar

    folder = tmp_path_factory.mktemp("hs2-auth")
    users = folder / "users.txt"
    users.write_text("alice:s3cret\n")
    hiveconf = {"hive.server2.authentication": "CUSTOM",
                "hive.server2.custom.authentication.class": "planner.testauth.FileAuthProvider",
                "planner.testauth.file": str(users)}
    with SparkThriftServer(folder / "sts", hiveconf=hiveconf, jars=(file_auth_jar(folder),)) as server:
        yield server


def _advice_folder(path: Path) -> Path:
    from planner.cnf.valueset import ValueSet
    from planner.emit.advice_folder import write_advice_folder
    from planner.model.layout import Layout, Partition
    from planner.semantics.kinds import Kind

    r = ValueSet.range(Kind.INTEGER, None, 10, True, False)
    layout = Layout("db.t", "hand", (Partition(1, (("k", r),)), Partition(2, (("k", r.complement()),))),
                    kinds=(("k", Kind.INTEGER),))
    return write_advice_folder(path, layout, {"k": "int"})


def test_hiveserver2_logs_in_with_a_user_and_a_password_from_the_environment(password_server, tmp_path,
                                                                               monkeypatch):
    from click.testing import CliRunner

    from planner.cli.apply import runner_for
    from planner.cli.console import Console
    from planner.cli.main import cli
    from planner.cli.options import EngineOptions, HiveServer2Options

    address = f"{password_server.host}:{password_server.port}"
    monkeypatch.setenv("PLANNER_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("")
    monkeypatch.setenv("ALICE_PW", "s3cret")
    runner, spark = runner_for(HiveServer2Options(address, "LDAP", "alice", "ALICE_PW"), EngineOptions(),
                               Console("text"))
    try:
        assert spark is None and runner.execute("SELECT current_user()") == [("alice",)]
    finally:
        runner.close()
    advice = _advice_folder(tmp_path / "advice")
    monkeypatch.setenv("PLANNER_HS2_PASSWORD", "wrong")
    refused = CliRunner().invoke(cli, ["apply", str(advice), "--hiveserver2", address, "--hs2-auth", "LDAP",
                                       "--hs2-user", "alice"])
    assert refused.exit_code == 1
    assert refused.output.strip() == (f"error: HiveServer2 {address} refused the login of alice (auth=LDAP): "
                                      "wrong user or password"), refused.output
    nosasl = CliRunner().invoke(cli, ["apply", str(advice), "--hiveserver2", address])
    assert nosasl.exit_code == 1 and "Traceback" not in nosasl.output
    assert "give its hive.server2.authentication as --hs2-auth" in nosasl.output, nosasl.output

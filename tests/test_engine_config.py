"""Where a command's Spark runs and which metastore it reads (issue 34), without a JVM:

* the command line, else ``planner.toml``, else the user's ``hive-site.xml`` / ``spark-defaults.conf``,
  else the local default (``local[2]`` on an embedded Derby in the per-user state folder);
* the session's settings: the user's Spark settings honoured, the planner's local-only ones left
  out on a cluster master, the embedded metastore opted out of a ``hive-site.xml``;
* a second process on an embedded Derby refused before any JVM starts, naming the holder;
* HiveServer2 logins: the password from an environment variable, never an option.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from hive_integration.spark.session import LOCAL_MASTER, session_settings
from hive_integration.spark.user_conf import default_state_dir, metastore_uris
from planner.cli.config import read_config
from planner.cli.engine import hiveserver2_login, resolve_engine
from planner.cli.options import EngineOptions, HiveServer2Options
from planner.errors import InputError, MetastoreError

ROOT = Path(__file__).resolve().parent.parent


def hive_site(folder: Path, uris: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hive-site.xml").write_text(textwrap.dedent(f"""\
        <?xml version="1.0"?>
        <configuration>
          <property><name>hive.metastore.uris</name><value>{uris}</value></property>
        </configuration>
        """))
    return folder


def user_env(tmp_path: Path, **extra) -> dict:
    """A user with nothing configured: no planner.toml, no Spark or Hive configuration."""
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_STATE_HOME": str(tmp_path / "state"), **extra}


def resolve(tmp_path, options=EngineOptions(), **env):
    from planner.cli.config import load_config

    e = user_env(tmp_path, **env)
    return resolve_engine(options, load_config(e, cwd=tmp_path), e)


def test_the_default_state_folder_is_the_users_not_the_checkouts(tmp_path):
    """Issue 34: the default state directory was the checkout's .planner/, wherever the user stood."""
    assert default_state_dir(user_env(tmp_path)) == (tmp_path / "state" / "planner").resolve()
    assert default_state_dir({"HOME": str(tmp_path)}) == (Path.home() / ".local/state/planner").resolve()
    assert default_state_dir({"PLANNER_HOME": str(tmp_path / "p")}) == (tmp_path / "p").resolve()
    assert ROOT not in default_state_dir(user_env(tmp_path)).parents


def test_a_hive_site_xml_names_the_metastore_with_no_flag(tmp_path):
    conf = hive_site(tmp_path / "hadoop-conf", "thrift://127.0.0.1:9083")
    engine = resolve(tmp_path, HADOOP_CONF_DIR=str(conf))
    assert engine.metastore == "thrift://127.0.0.1:9083" and engine.remote
    assert "hive-site.xml" in engine.metastore_from
    assert engine.master is None  # spark-defaults.conf's, else local[2], decided with the session
    # SPARK_CONF_DIR comes first on the driver's class path, so its hive-site.xml wins
    first = hive_site(tmp_path / "spark-conf", "thrift://10.0.0.1:9083")
    assert metastore_uris({"SPARK_CONF_DIR": str(first), "HADOOP_CONF_DIR": str(conf)})[0] == "thrift://10.0.0.1:9083"
    # the command line beats it, and "embedded" opts out of it
    assert resolve(tmp_path, EngineOptions(metastore="embedded"), HADOOP_CONF_DIR=str(conf)).metastore is None
    assert resolve(tmp_path, EngineOptions(metastore="thrift://h:1"),
                   HADOOP_CONF_DIR=str(conf)).metastore == "thrift://h:1"


def test_planner_toml_holds_a_teams_defaults_and_the_command_line_beats_it(tmp_path):
    (tmp_path / "planner.toml").write_text(textwrap.dedent("""\
        master = "spark://cluster:7077"
        metastore = "thrift://hms:9083"
        state_dir = "state"
        [conf]
        "spark.executor.memory" = "8g"
        "spark.dynamicAllocation.enabled" = true
        """))
    engine = resolve(tmp_path)
    assert (engine.master, engine.metastore) == ("spark://cluster:7077", "thrift://hms:9083")
    assert engine.state_dir == (tmp_path / "state").resolve()
    assert engine.conf == {"spark.executor.memory": "8g", "spark.dynamicAllocation.enabled": "true"}
    given = EngineOptions(master="yarn", conf=(("spark.executor.memory", "1g"),))
    engine = resolve(tmp_path, given)
    assert engine.master == "yarn" and engine.conf["spark.executor.memory"] == "1g"


def test_a_mistake_in_planner_toml_is_one_line_naming_the_file_and_key(tmp_path):
    path = tmp_path / "planner.toml"
    path.write_text('[hiveserver2]\naddress = "h:1"\npassword = "secret"\n')
    with pytest.raises(InputError, match=r"planner.toml: unknown key hiveserver2.password; .*environment variable"):
        read_config(path)
    path.write_text('metastore = "hms:9083"\n')
    with pytest.raises(InputError, match=r"planner.toml: metastore must look like thrift://host:port"):
        resolve(tmp_path)


def test_the_session_honours_the_users_spark_settings(tmp_path):
    conf_dir = tmp_path / "spark-conf"
    conf_dir.mkdir()
    (conf_dir / "spark-defaults.conf").write_text("spark.master  yarn\nspark.executor.memory 4g\n"
                                                  "spark.driver.extraJavaOptions -Dtheirs=1\n")
    env = {"SPARK_CONF_DIR": str(conf_dir)}
    s = session_settings(tmp_path / "st", env=env)
    assert s["spark.master"] == "yarn" and s["spark.executor.memory"] == "4g"
    # on a cluster the local driver's settings are left to the user's Spark
    assert "spark.driver.memory" not in s and "spark.driver.host" not in s and "spark.ui.enabled" not in s
    assert s["spark.driver.extraJavaOptions"].endswith("-Dtheirs=1")  # theirs kept, after ours
    assert s["spark.hadoop.hive.metastore.uris"] == ""  # embedded: a hive-site.xml does not take over
    explicit = session_settings(tmp_path / "st", master="spark://m:7077", conf={"spark.executor.memory": "1g",
                                "spark.sql.sources.partitionOverwriteMode": "static"}, env=env)
    assert explicit["spark.master"] == "spark://m:7077" and explicit["spark.executor.memory"] == "1g"
    assert explicit["spark.sql.sources.partitionOverwriteMode"] == "dynamic"  # correctness is not a setting
    local = session_settings(tmp_path / "st", env={})
    assert local["spark.master"] == LOCAL_MASTER and local["spark.driver.memory"] == "2g"


def test_every_spark_command_takes_master_and_conf():
    """Issue 34: `--master yarn` → "No such option", `--conf k=v` → "No such option"."""
    from planner.cli.main import cli

    for command in ("advise", "apply", "status", "relayout", "explain", "rewrite", "calibrate", "append"):
        out = CliRunner().invoke(cli, [command, "--help"]).output
        assert "--master URL" in out and "--conf KEY=VALUE" in out, command
    bad = CliRunner().invoke(cli, ["calibrate", "--conf", "spark.executor.memory"])
    assert bad.exit_code == 2 and "must look like key=value" in bad.output


HOLD = """
import sys, time
from hive_integration.spark.derby_lock import hold_state_dir
assert hold_state_dir(sys.argv[1]) is None
print("held", flush=True)
time.sleep(60)
"""


def test_a_second_process_on_the_embedded_metastore_is_refused_before_spark_starts(tmp_path):
    """Issue 34: a second advise printed 25,133 lines of Derby traces, then called every table
    "not a table in the metastore" and exited 0."""
    from hive_integration.spark.session import refuse_shared_derby

    child = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                             env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    try:
        assert child.stdout.readline().strip() == "held"
        with pytest.raises(MetastoreError) as info:
            refuse_shared_derby(tmp_path)
        message = str(info.value)
        assert f"the embedded metastore in {tmp_path} is in use by pid {child.pid}" in message
        assert "\n" not in message and "--metastore thrift://HOST:PORT" in message
    finally:
        child.kill()
        child.wait()
    refuse_shared_derby(tmp_path)  # the holder is gone (even killed): free again


def test_a_derby_booted_by_another_process_is_named_by_its_lock(tmp_path):
    """Derby's own files stay after every run; the POSIX lock on dbex.lck is what says it is in use."""
    from hive_integration.spark.derby_lock import derby_holder

    db = tmp_path / "metastore_db"
    db.mkdir()
    (db / "dbex.lck").write_bytes(b"\0\0\0\1")
    assert derby_holder(db) is None  # stale files of a finished JVM
    lock = ("import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR); "
            "fcntl.lockf(fd, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(60)")
    child = subprocess.Popen([sys.executable, "-c", lock, str(db / "dbex.lck")], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "locked"
        holder = derby_holder(db)
        assert holder is not None and holder.pid == child.pid
    finally:
        child.kill()
        child.wait()


def test_hiveserver2_passwords_come_from_the_environment(tmp_path, monkeypatch):
    env = user_env(tmp_path, PLANNER_HS2_PASSWORD="s3cret")
    from planner.cli.config import load_config

    config = load_config(env, cwd=tmp_path)
    login = hiveserver2_login(HiveServer2Options("h:10000", "LDAP", "alice"), None, config, env)
    assert (login.auth, login.user, login.password) == ("LDAP", "alice", "s3cret")
    assert "s3cret" not in repr(login)
    assert hiveserver2_login(HiveServer2Options("h:10000"), None, config, env).auth == "NOSASL"
    monkeypatch.setattr(sys, "stdin", open("/dev/null"))  # no terminal to ask on
    with pytest.raises(InputError, match=r"needs a password: set \$HS2_PW"):
        hiveserver2_login(HiveServer2Options("h:10000", "CUSTOM", "alice", "HS2_PW"), None, config, env)
    with pytest.raises(InputError, match="runs everything on HiveServer2 h:10000; drop --master"):
        hiveserver2_login(HiveServer2Options("h:10000"), EngineOptions(master="yarn"), config, env)
    # the server's own metastore may be named beside it (apply builds the aggregate index through it)
    assert hiveserver2_login(HiveServer2Options("h:10000"), EngineOptions(metastore="thrift://m:9083"), config, env)
    with pytest.raises(InputError, match="--hs2-user applies to --hiveserver2 HOST:PORT"):
        hiveserver2_login(HiveServer2Options(user="alice"), None, config, env)

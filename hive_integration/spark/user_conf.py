"""The Spark and Hive configuration a user already has: ``SPARK_HOME``, ``SPARK_CONF_DIR`` with its
``spark-defaults.conf``, and the ``hive-site.xml`` in ``SPARK_CONF_DIR``/``HADOOP_CONF_DIR``.

Spark's launcher (``spark-submit``, which pyspark runs to start the driver JVM) reads these by
itself: ``spark-defaults.conf`` becomes the driver's settings, and the configuration folders go on
the driver's class path, where Hive finds ``hive-site.xml``. The planner reads them too, for three
reasons:

* settings it gives explicitly would otherwise override the user's silently (a ``--conf`` beats
  ``spark-defaults.conf``): its local defaults (``spark.driver.memory``, shuffle partitions, the
  warehouse) apply only where the user set nothing;
* ``hive.metastore.uris`` in a ``hive-site.xml`` beats the embedded Derby's connection URL: the
  planner names the metastore it talks to, and opts out explicitly (``hive.metastore.uris=""``)
  when it uses the embedded one;
* the commands that need no JVM (``rewrite``, ``explain``, ``analyze``) talk to that metastore
  over thrift themselves.

Class-path order decides which ``hive-site.xml`` Hive reads when there are several: the Spark
configuration folder first (``SPARK_CONF_DIR``, else ``$SPARK_HOME/conf``), then
``HADOOP_CONF_DIR``, then ``YARN_CONF_DIR`` (Spark's ``AbstractCommandBuilder.buildClassPath``).
"""
from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Mapping

from planner.errors import InputError, PlannerError


def default_state_dir(env=None) -> Path:
    """Where the embedded metastore, warehouse, caches and calibration live when no ``--state-dir``
    (or ``state_dir`` in planner.toml) is given: ``$PLANNER_HOME``, else the user's state folder
    (``$XDG_STATE_HOME/planner``, by default ``~/.local/state/planner``). Per user, not per
    checkout or per working folder: every command a user runs, wherever they stand, sees the same
    tables."""
    env = os.environ if env is None else env
    if env.get("PLANNER_HOME"):
        return Path(env["PLANNER_HOME"]).expanduser().resolve()
    base = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return (Path(base).expanduser() / "planner").resolve()


def spark_conf_dir(env: Mapping[str, str] | None = None) -> Path | None:
    """The folder Spark's launcher reads ``spark-defaults.conf`` from, when there is one."""
    env = os.environ if env is None else env
    if env.get("SPARK_CONF_DIR"):
        return Path(env["SPARK_CONF_DIR"]).expanduser()
    if env.get("SPARK_HOME"):
        return Path(env["SPARK_HOME"]).expanduser() / "conf"
    return None


def conf_dirs(env: Mapping[str, str] | None = None) -> list[Path]:
    """The configuration folders on the driver's class path, in the order Hive searches them."""
    env = os.environ if env is None else env
    dirs = [spark_conf_dir(env)] + [Path(env[k]).expanduser() for k in ("HADOOP_CONF_DIR", "YARN_CONF_DIR")
                                    if env.get(k)]
    return [d for d in dirs if d is not None]


def read_properties_file(path: Path) -> dict[str, str]:
    """A Java properties file as Spark reads ``spark-defaults.conf``: ``key value`` or ``key=value``
    per line, ``#`` and ``!`` comments, surrounding whitespace trimmed (no line continuations:
    Spark's own files do not use them)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"{path}: cannot read it: {e.strerror or e}") from None
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        m = re.match(r"([^\s=:]+)\s*[=:\s]\s*(.*)$", line)
        if m:
            out[m.group(1)] = m.group(2).strip()
        else:
            out[line] = ""
    return out


def spark_defaults(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The settings of the user's ``spark-defaults.conf`` ({} when there is none)."""
    folder = spark_conf_dir(env)
    path = folder / "spark-defaults.conf" if folder else None
    return read_properties_file(path) if path is not None and path.is_file() else {}


def hive_site_path(env: Mapping[str, str] | None = None) -> Path | None:
    """The ``hive-site.xml`` Hive would read from the driver's class path, if any."""
    for folder in conf_dirs(env):
        path = folder / "hive-site.xml"
        if path.is_file():
            return path
    return None


def read_hive_site(path: Path) -> dict[str, str]:
    """The ``<property><name>…</name><value>…</value></property>`` pairs of a Hadoop XML file."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        raise InputError(f"{path}: not a Hadoop configuration file ({e})") from None
    out = {}
    for prop in root.iter("property"):
        name, value = prop.findtext("name"), prop.findtext("value")
        if name:
            out[name.strip()] = (value or "").strip()
    return out


def hive_site(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The settings of the ``hive-site.xml`` Hive would read ({} when there is none)."""
    path = hive_site_path(env)
    return read_hive_site(path) if path else {}


def metastore_uris(env: Mapping[str, str] | None = None) -> tuple[str | None, Path | None]:
    """``hive.metastore.uris`` of the user's ``hive-site.xml`` (a comma-separated list, as Hive
    takes it) and the file it came from; (None, None) when no file names a metastore."""
    path = hive_site_path(env)
    if path is None:
        return None, None
    uris = read_hive_site(path).get("hive.metastore.uris", "").strip()
    return (uris or None), path


_CORE_JAR = re.compile(r"^spark-core_[\d.]+-(\d+\.\d+\.\d+[\w.-]*)\.jar$")


def spark_home_version(home: Path) -> str | None:
    """The Spark version of a Spark distribution, from its ``spark-core`` jar's name."""
    jars = home / "jars"
    try:
        names = os.listdir(jars)
    except OSError:
        return None
    for name in names:
        m = _CORE_JAR.match(name)
        if m:
            return m.group(1)
    return None


def check_spark_home(env: Mapping[str, str] | None = None) -> Path | None:
    """The user's ``SPARK_HOME`` (None: unset, pyspark's own jars are used), checked to be a Spark
    of the version the planner was proven with: pyspark talks to the JVM through py4j, and a
    driver of another Spark version fails in ways that name neither."""
    import pyspark

    env = os.environ if env is None else env
    if not env.get("SPARK_HOME"):
        return None
    home = Path(env["SPARK_HOME"]).expanduser()
    if not (home / "bin" / "spark-submit").exists():
        raise PlannerError(f"SPARK_HOME={home} has no bin/spark-submit; point it at a Spark {pyspark.__version__} "
                           "distribution, or unset it to use the Spark that came with the planner")
    found = spark_home_version(home)
    if found is not None and found != pyspark.__version__:
        raise PlannerError(f"SPARK_HOME={home} is Spark {found}, but the planner runs pyspark {pyspark.__version__}; "
                           f"point SPARK_HOME at a Spark {pyspark.__version__}, or unset it to use the Spark that "
                           "came with the planner")
    return home


__all__ = ["check_spark_home", "conf_dirs", "default_state_dir", "hive_site", "hive_site_path", "metastore_uris", "read_hive_site",
           "read_properties_file", "spark_conf_dir", "spark_defaults", "spark_home_version"]

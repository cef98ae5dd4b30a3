"""Shared fixtures: real Spark, a real metastore, a real HiveServer2, TPC-H data.

Everything is started on demand (never skipped), binds to 127.0.0.1 on free
ports, keeps its state under pytest's tmp dirs and is stopped by PID at the end
of the run.  There is ONE in-process SparkSession per test run: a second one
cannot be created with different static settings in the same JVM, and each
start costs ~4-10 s.  It uses an embedded Derby catalog; tests that need a
catalog shared between processes use ``metastore`` + ``thrift_server``.

Isolation between tests: use ``fresh_db`` (a new database, dropped afterwards)
rather than creating tables in ``default``.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from devtools.servers import SparkThriftServer, StandaloneCluster, StandaloneMetastore, stop_servers_on_signals
from devtools.tpch_data import generate_lineitem, load_table
from hive_integration.spark.session import build_spark_session

TPCH_TEST_SCALE = 0.01  # 60,175 lineitem rows, ~2 MB, generated in < 1 s

# Hypothesis: CI runs a deterministic batch (the same examples on every run, so a failure is
# reproducible and the suite's time is steady); PLANNER_TESTS=long draws fresh random examples
# (and tests/sizes.py scales the example counts and input sizes up).
hypothesis_settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
hypothesis_settings.register_profile("long", derandomize=False, deadline=None, print_blob=True)
# The mutation run (devtools/mutate.py) runs the CI batch once per mutant, without the example
# database (the scratch copies are thrown away).
hypothesis_settings.register_profile("mutation", derandomize=True, deadline=None, database=None)
_PROFILES = {"long": "long", "mutation": "mutation"}
hypothesis_settings.load_profile(_PROFILES.get(os.environ.get("PLANNER_TESTS", "").lower(), "ci"))

_db_counter = itertools.count(1)


if os.environ.get("PLANNER_TESTS", "").lower() == "mutation":
    @pytest.fixture(autouse=True)
    def _cold_caches():
        """mutmut forks each mutant's test run from a process that already ran the suite: results
        the planner caches (functools caches) would answer for the unmutated code. Start cold."""
        import sys

        for name, module in list(sys.modules.items()):
            if name.split(".")[0] in ("planner", "hive_integration"):
                for value in list(vars(module).values()):
                    if callable(getattr(value, "cache_clear", None)):
                        value.cache_clear()
        yield


def pytest_configure(config):
    # The metastore, Thrift Server and cluster JVMs run in their own process groups, so a SIGTERM
    # to the test run (a CI time limit, `timeout -s TERM`) or a Ctrl-C does not reach them: stop
    # them first, then let the signal do what it did (tests/test_signals.py sends both).
    stop_servers_on_signals()


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """The one SparkSession of the run (local[2], Hive support, embedded Derby)."""
    # Spark keeps every query's plan and metrics for its SQL tab (1,000 by default); the suite
    # runs thousands, some of them unions of 60 scans, in one 2 GiB driver. The tests read their
    # metrics from the query itself (hive_integration.spark.metrics), never from that store.
    session = build_spark_session(tmp_path_factory.mktemp("spark"), app_name="planner-tests",
                                  conf={"spark.sql.ui.retainedExecutions": "50"})
    yield session
    session.stop()


@pytest.fixture
def fresh_db(spark):
    """A new, empty database name in ``spark``'s catalog; dropped with its tables afterwards."""
    name = f"t{next(_db_counter)}"
    spark.sql(f"CREATE DATABASE {name}")  # name is ours, not user input
    yield name
    spark.sql(f"DROP DATABASE IF EXISTS {name} CASCADE")


@pytest.fixture(scope="session")
def metastore(tmp_path_factory):
    """A StandaloneMetastore (thrift, Derby-backed) for the whole run."""
    with StandaloneMetastore(tmp_path_factory.mktemp("metastore")) as server:
        yield server


@pytest.fixture(scope="session")
def thrift_server(tmp_path_factory, metastore):
    """A Spark Thrift Server (HiveServer2, NOSASL) whose catalog is ``metastore``."""
    with SparkThriftServer(
        tmp_path_factory.mktemp("thriftserver"), metastore_uri=metastore.uri
    ) as server:
        yield server


@pytest.fixture(scope="session")
def standalone_cluster(tmp_path_factory):
    """A Spark standalone cluster on loopback, free ports: a master and ONE worker of 1 core and
    1 GB (the machine is small and shared). Its JVMs are stopped by PID at the end of the run, and
    on SIGTERM/SIGINT (``stop_servers_on_signals``). Applications connect to ``.uri`` from a
    process of their own: the run's shared session is ``local[2]`` and cannot change its master."""
    with StandaloneCluster(tmp_path_factory.mktemp("cluster"), workers=1, cores=1, memory="1g") as cluster:
        yield cluster


@pytest.fixture(scope="session")
def tpch_small(tmp_path_factory) -> Path:
    """Path of a TPC-H lineitem Parquet file at scale factor 0.01."""
    return generate_lineitem(TPCH_TEST_SCALE, tmp_path_factory.mktemp("tpch"))


@pytest.fixture(scope="session")
def lineitem_table(spark, tpch_small) -> str:
    """``tpch.lineitem`` in ``spark``'s catalog: Hive Parquet, ~100 row groups of 64 KiB."""
    spark.sql("CREATE DATABASE IF NOT EXISTS tpch")
    load_table(spark, tpch_small, "tpch.lineitem", row_group_bytes=64 * 1024)
    return "tpch.lineitem"


# Fixtures that start a JVM (Spark, the standalone metastore, the Thrift Server). A test that
# reaches one of them, directly or through another fixture, is marked ``spark`` (and ``servers``
# for the standalone processes), so ``-m "not spark"`` runs only the pure tests, in seconds.
JVM_FIXTURES = frozenset({"spark", "fresh_db", "lineitem_table", "metastore", "thrift_server",
                          "standalone_cluster"})
SERVER_FIXTURES = frozenset({"metastore", "thrift_server", "standalone_cluster"})


def pytest_collection_modifyitems(config, items):
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        if used & JVM_FIXTURES or item.get_closest_marker("servers"):
            item.add_marker(pytest.mark.spark)
        if used & SERVER_FIXTURES:
            item.add_marker(pytest.mark.servers)


def pytest_terminal_summary(terminalreporter):
    """The robustness figures (tests/figures.py): how many cases, faults and hostile inputs ran."""
    from figures import COUNTS

    if COUNTS:
        terminalreporter.section("figures")
        for name, n in COUNTS.items():
            terminalreporter.write_line(f"{name}: {n:,}")

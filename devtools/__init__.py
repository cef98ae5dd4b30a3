"""What developers run beside the planner: loopback servers for tests (a standalone Hive Metastore,
the Spark Thrift Server, a standalone Spark cluster), TPC-H data, the workload generators and the
demo behind ``./dev run``. Nothing in ``planner/`` or ``hive_integration/`` imports it."""

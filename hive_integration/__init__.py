"""The planner's I/O edge: everything that talks to Spark, a Hive metastore or HiveServer2.

    hive_integration/spark/      the Spark session, Spark's errors and metrics, the session catalog,
                                 columns, footers, the statistics pass, join samples and join ranges
    hive_integration/metastore/  layouts kept in table properties (read through Spark, thrift or
                                 files), the thrift client, the HiveServer2 runner
    hive_integration/apply/      apply (write, verify, swap) and re-layout

Rooms import downwards only (apply -> metastore -> spark; ``setup.cfg``'s contracts).
"""

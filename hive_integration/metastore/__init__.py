"""Layouts kept in table properties (through Spark, thrift or files), the thrift client, HiveServer2."""

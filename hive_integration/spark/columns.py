"""A table's columns and their full types: the one place both advise and apply read them from.

Spark 4.3 reports a CHAR(10) or VARCHAR(10) column as ``string`` in ``DataFrame.schema``
(the declared type survives only in the field's ``__CHAR_VARCHAR_TYPE_STRING`` metadata), but as
``char(10)`` in ``DESCRIBE``. Advise read the first and apply the second, so a table with a CHAR
column could not be laid out at all ("no longer has the schema the advice was made for"). Both
now read ``DESCRIBE`` through this module, which works on any runner: a Spark session or
HiveServer2. The type decides how the planner compares the column (``planner.semantics``): a
CHAR(n) value is padded to n.
"""
from __future__ import annotations

from typing import Callable, Iterable

from sqlglot import exp

Run = Callable[[str], Iterable[tuple]]

CHAR_VARCHAR_KEY = "__CHAR_VARCHAR_TYPE_STRING"  # Spark's field metadata holding a CHAR/VARCHAR's declared type


def columns_from_describe(rows: Iterable[tuple]) -> dict[str, str]:
    """Column name (lower case) -> type, from ``DESCRIBE t`` rows (the partition section left out,
    since it repeats the partition columns)."""
    cols: dict[str, str] = {}
    for row in rows:
        name = str(row[0] or "").strip()
        if not name or name.startswith("#"):
            break  # "# Partition Information" repeats the partition columns
        cols[name.lower()] = str(row[1]).strip().lower()
    return cols


def comments_from_describe(rows: Iterable[tuple]) -> dict[str, str]:
    """Column name (lower case) -> its comment, for the columns ``DESCRIBE t`` shows one for."""
    out: dict[str, str] = {}
    for row in rows:
        name = str(row[0] or "").strip()
        if not name or name.startswith("#"):
            break
        note = str(row[2]).strip() if len(row) > 2 and row[2] is not None else ""
        if note:
            out[name.lower()] = note
    return out


def partition_columns_from_describe_formatted(rows: Iterable[tuple]) -> tuple[str, ...]:
    """The table's partition columns (lower case, in order) from ``DESCRIBE FORMATTED`` rows: the
    names under ``# Partition Information`` (Spark and Hive), after its ``# col_name`` header, up to
    the next blank or ``#`` row."""
    out: list[str] = []
    inside = False
    for row in rows:
        name = str(row[0] or "").strip() if row else ""
        if name.startswith("# Partition Information"):
            inside = True
            continue
        if inside:
            if name.startswith("# col_name"):
                continue
            if not name or name.startswith("#"):
                break
            out.append(name.lower())
    return tuple(out)


def comment_from_describe_formatted(rows: Iterable[tuple]) -> str | None:
    """The table's comment in ``DESCRIBE FORMATTED`` rows: Spark's ``Comment`` row, or Hive's
    ``comment`` among the table parameters (a row ``('', 'comment', text)``)."""
    for row in rows:
        key = str(row[0] or "").strip().rstrip(":").strip()
        if key == "Comment" and len(row) > 1 and row[1]:
            return str(row[1])
        if not key and len(row) > 2 and str(row[1] or "").strip() == "comment" and row[2]:
            return str(row[2]).strip()
    return None


def file_format_of(describe_formatted: Iterable[tuple]) -> str | None:
    """``PARQUET`` or ``ORC`` from the rows of ``DESCRIBE FORMATTED`` (Spark: ``Provider``, or the
    Hive SerDe's ``InputFormat``; Hive: ``InputFormat:``), else None (text, Avro, JSON, …)."""
    from planner.emit.ddl import FILE_FORMATS

    for row in describe_formatted:
        if len(row) < 2 or row[0] is None or row[1] is None:
            continue
        key, value = str(row[0]).strip().rstrip(":").strip().lower(), str(row[1]).strip().lower()
        if key in ("provider", "inputformat", "serde library"):
            for fmt in FILE_FORMATS:
                if fmt.lower() in value:
                    return fmt
    return None


def storage_from_describe_formatted(rows: Iterable[tuple]) -> tuple[bool, str | None]:
    """(external?, location) in ``DESCRIBE FORMATTED`` rows: Spark's ``Type`` and ``Location``,
    Hive's ``Table Type:`` (``EXTERNAL_TABLE``) and ``Location:``. The location is a path string,
    as a ``LOCATION`` clause takes it."""
    external, location = False, None
    for row in rows:
        key = str(row[0] or "").strip().rstrip(":").strip().lower()
        value = str(row[1]).strip() if len(row) > 1 and row[1] is not None else ""
        if key in ("type", "table type"):
            external = value.upper() in ("EXTERNAL", "EXTERNAL_TABLE")
        elif key == "location" and value and location is None:
            location = value
    return external, location


def columns_from_schema_json(schema: str) -> dict[str, str]:
    """Column name (lower case) -> type as ``DESCRIBE`` shows it, from a catalog table's schema JSON
    (``StructType.json()``): a CHAR/VARCHAR column's declared type is in its field's
    ``__CHAR_VARCHAR_TYPE_STRING`` metadata, every other type is pyspark's ``simpleString``, the
    catalog string Spark's ``DESCRIBE`` prints (tests compare the two on Spark)."""
    import json

    from pyspark.sql.types import _parse_datatype_json_value

    cols: dict[str, str] = {}
    for f in json.loads(schema)["fields"]:
        declared = (f.get("metadata") or {}).get(CHAR_VARCHAR_KEY)
        cols[f["name"].lower()] = (declared or _parse_datatype_json_value(f["type"]).simpleString()).strip().lower()
    return cols


def describe_sql(table: str | exp.Table, dialect: str = "spark") -> str:
    """``DESCRIBE db.t`` with every name part quoted."""
    from planner.emit.ddl import table_expr

    return exp.Describe(this=table_expr(table, dialect)).sql(dialect=dialect)


def table_columns(run: Run, table: str | exp.Table, dialect: str = "spark") -> dict[str, str]:
    """The columns of ``table`` with their declared types, read with ``run`` (a SQL runner)."""
    return columns_from_describe(run(describe_sql(table, dialect)))


def spark_columns(spark, table: str | exp.Table) -> dict[str, str]:
    """``table_columns`` on a Spark session."""
    return table_columns(lambda sql: [tuple(r) for r in spark.sql(sql).collect()], table)


__all__ = ["columns_from_describe", "columns_from_schema_json", "table_columns", "spark_columns", "describe_sql"]

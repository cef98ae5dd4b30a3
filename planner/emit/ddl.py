"""``CREATE TABLE`` for a laid-out table, with the layout itself stored in TBLPROPERTIES.

The layout travels with the table, so any session can rewrite queries against it
(``planner.rewrite.query_rewrite.sql``) without the advice folder. Metastore parameter values are short:
Derby's ``TABLE_PARAMS.PARAM_VALUE`` is ``VARCHAR(4000)`` (other backends differ), so the layout is
stored as zlib-compressed JSON in hex and cut into chunks well under that:

    'planner.layout.encoding'='zlib-hex', 'planner.layout.parts'='2',
    'planner.layout.0'='78da…', 'planner.layout.1'='…',
    'planner.layout.sha256'='<hash of the whole hex text>'   (detects a missing or mangled chunk)

Hex, not JSON text: Spark's ``SHOW TBLPROPERTIES`` (and so HiveServer2) replaces a whole value by
``*********(redacted)`` when it matches its redaction regex (``(?i)secret|password|token|url|
credential|access.?key``), and a layout names columns (``page_url``) and string values. Hex digits
spell none of those words. Layouts stored as plain JSON chunks (no ``encoding`` property) are still
read.

sqlglot expresses the whole statement (``exp.Create`` with ``exp.Schema``,
``PartitionedByProperty``, ``FileFormatProperty`` and plain ``Property`` pairs). The one
difference between dialects: for ``spark`` sqlglot moves the partition column into the column list
and prints ``PARTITIONED BY (planner_pid)``; Spark 4.3 accepts both forms for Hive tables.

No dictionary for FLOAT and DOUBLE columns (``floating_point_properties``). A layout changes which
values share a row group, so it can leave a row group holding -0.0 and no +0.0 (or the reverse).
parquet-java's dictionary filter (``DictionaryFilter``, on by default under Spark's
``spark.sql.parquet.filterPushdown``) tests a pushed literal against the chunk's dictionary as a
``HashSet<Double>`` and with ``Double.compare``, both of which tell -0.0 from +0.0 by their bits,
where Spark's SQL counts them equal. So ``x = 0.0``, ``x >= 0.0``, ``x IN (1.5, 0.0)`` drop a row
group of -0.0 rows, and ``x = -0.0D``, ``x <= -0.0D`` one of +0.0 rows: a plain ``SELECT`` on the
laid-out table returns fewer rows than on the source. The table properties
``parquet.enable.dictionary#<column>=false`` make every writer of the table (the apply, a re-layout's
staging table, ``planner append``, Hive's writer) store those columns' pages plain, so the filter has
no dictionary to consult (it reads the row group whenever a chunk has a non-dictionary page). The
values are written bit for bit as before: -0.0 stays -0.0.

Why that is complete, filter by filter, for the reader Spark ships (parquet-java 1.17):

* row-group statistics: the reader widens a zero bound to both signs when it reads them
  (``Statistics`` builders: a min of +0.0 reads as -0.0, a max of -0.0 as +0.0), and a chunk with
  a NaN has no usable statistics, so a range test never drops a zero of the other sign;
* the column index (page statistics): widened the same way when written, and a NaN page
  invalidates the index;
* bloom filters hash a double's bits too; the planner never asks for one on a FLOAT or DOUBLE
  column (``planner.costmodel.bloom.KINDS``), and where the source's own properties ask for bloom
  filters the new table turns them off for those columns;
* the record-level filter (``spark.sql.parquet.recordLevelFilter.enabled``, off by default) compares
  with ``Double.compare`` row by row and is wrong on the source table just as on a laid-out one:
  not a thing a layout can change, and named in the docs as unsupported;
* every other type's dictionary holds values that compare as Spark's SQL does (integers, decimals,
  dates, timestamps, and strings and binaries byte for byte); the reader-edge tests
  (``tests/test_reader_edges_spark.py``) prove each family, and ``apply`` runs a probe of filtered
  queries on both tables before the swap (``hive_integration.apply.probe_check``).

The cost: FLOAT and DOUBLE columns with few distinct values take more bytes (plain 4 or 8 bytes a
value instead of a short dictionary id), and a lookup on such a column no longer drops the row
groups whose dictionary lacks the value (the cost model prices the layout's tables without those
dictionaries). ORC is unaffected: it keeps no dictionary for floating-point columns.
"""
from __future__ import annotations

import hashlib
import json
import zlib
from dataclasses import dataclass
from typing import Mapping, Sequence

from sqlglot import exp

from planner.costmodel.bloom import hinted
from planner.errors import LayoutError
from planner.model.layout import LAYOUT_VERSION, PARTITION_COLUMN_TYPE, Layout

CHUNK_CHARS = 3000  # < 4000, Derby's PARAM_VALUE limit, with room for escaping by a client
PREFIX = "planner.layout"
ENCODING = "zlib-hex"
REDACTED = "*********(redacted)"  # what Spark shows for a property value its redaction regex matches
FILE_FORMATS = ("PARQUET", "ORC")


def table_expr(name: str | exp.Table, dialect: str = "hive") -> exp.Table:
    """A table reference with every part quoted. ``name`` is SQL (``db.t`` or ``db.`odd name```)."""
    table = name.copy() if isinstance(name, exp.Table) else exp.to_table(name, dialect=dialect)
    for key in ("catalog", "db", "this"):
        part = table.args.get(key)
        if isinstance(part, exp.Identifier):
            table.set(key, exp.to_identifier(part.name, quoted=True))
    table.set("alias", None)
    return table


def data_type(type_name: str) -> exp.DataType:
    try:
        return exp.DataType.build(type_name, dialect="hive")
    except Exception as e:  # sqlglot raises ParseError/ValueError for unknown type text
        raise LayoutError(f"cannot read the column type {type_name!r}: {e}") from None


def layout_json_text(layout: Layout) -> str:
    # ``$`` as the JSON escape \u0024: Spark and Hive replace ``${…}`` even inside quoted property
    # values, which would mangle a region value such as '${x}' (and break the checksum).
    text = json.dumps(layout.to_json(), ensure_ascii=True, separators=(",", ":"), sort_keys=False, default=str)
    return text.replace("$", "\\u0024")


def layout_properties(layout: Layout, chunk_chars: int = CHUNK_CHARS) -> dict[str, str]:
    """The table properties that hold ``layout`` (``planner.source`` and ``planner.strategy`` are for
    people: Spark may redact them, so nothing reads them back)."""
    text = zlib.compress(layout_json_text(layout).encode("ascii"), 9).hex()
    chunks = [text[i:i + chunk_chars] for i in range(0, len(text), chunk_chars)] or [""]
    props = {
        "planner.version": str(LAYOUT_VERSION),
        "planner.source": layout.table,
        "planner.strategy": layout.strategy,
        f"{PREFIX}.encoding": ENCODING,
        f"{PREFIX}.parts": str(len(chunks)),
        f"{PREFIX}.sha256": hashlib.sha256(text.encode("ascii")).hexdigest(),
    }
    for i, c in enumerate(chunks):
        props[f"{PREFIX}.{i}"] = c
    return props


def layout_from_properties(props: Mapping[str, str]) -> Layout:
    """Reassemble and validate the layout stored by ``create_table_sql``."""
    if f"{PREFIX}.parts" not in props:
        raise LayoutError("the table has no planner layout (no 'planner.layout.parts' property)")
    try:
        n = int(props[f"{PREFIX}.parts"])
    except ValueError:
        raise LayoutError(f"'planner.layout.parts' is not a number: {props[f'{PREFIX}.parts']!r}") from None
    missing = [i for i in range(n) if f"{PREFIX}.{i}" not in props]
    if missing:
        raise LayoutError(f"the stored layout is missing chunk(s) {missing} of {n}")
    redacted = sorted(k for k, v in props.items() if k.startswith("planner.layout") and v == REDACTED)
    if redacted:
        raise LayoutError(f"Spark redacted the stored layout's properties {redacted} (its redaction regex matched "
                          "them); apply the layout again with this planner version, which stores it in hex")
    text = "".join(props[f"{PREFIX}.{i}"] for i in range(n))
    want = props.get(f"{PREFIX}.sha256")
    if want is not None and hashlib.sha256(text.encode("utf-8")).hexdigest() != want:
        raise LayoutError("the stored layout does not match its checksum (a chunk was changed or truncated)")
    encoding = props.get(f"{PREFIX}.encoding")
    if encoding == ENCODING:
        try:
            text = zlib.decompress(bytes.fromhex(text)).decode("ascii")
        except (ValueError, zlib.error) as e:
            raise LayoutError(f"the stored layout cannot be decoded: {e}") from None
    elif encoding is not None:
        raise LayoutError(f"the stored layout has an unknown encoding {encoding!r}; a newer planner wrote it")
    return Layout.loads(text)


# properties the engines keep for themselves (statistics, timestamps, storage options, Spark's
# schema and statistics) or that the planner sets anew: not carried to the new table
_SYSTEM_PROPERTIES = frozenset({
    "transient_lastddltime", "numfiles", "numrows", "totalsize", "rawdatasize", "numpartitions",
    "numfileserasurecoded", "column_stats_accurate", "last_modified_by", "last_modified_time", "comment",
    "external", "bucketing_version", "stats_generated_via_stats_task", "stats_generated"})
_SYSTEM_PREFIXES = ("spark.sql.", "option.", f"{PREFIX}.", "planner.", "impala_")


@dataclass(frozen=True)
class TableMetadata:
    """What a table says about itself that a new table written from it keeps: its comment, its
    columns' comments and the properties its users set (an owner, a retention, a data class)."""

    comment: str | None = None
    column_comments: tuple[tuple[str, str], ...] = ()  # (column, comment), lower-case names
    properties: tuple[tuple[str, str], ...] = ()
    # what cannot be written as it is: text holding ``${``, which Spark and Hive replace by a
    # variable's value inside quoted strings too (kept on the old table, not on the new one)
    left_out: tuple[str, ...] = ()
    # the table's own partition columns: the new table is partitioned by the layout's column
    # instead and keeps these as ordinary columns (``replaced_partitioning``)
    partitioned_by: tuple[str, ...] = ()

    def replaced_partitioning(self, layout: Layout) -> tuple[str, ...]:
        """Partition columns of the table that ``layout``'s partition column replaces (none when the
        table is laid out by this planner already)."""
        return tuple(c for c in self.partitioned_by if c.lower() != layout.partition_column.lower())

    @classmethod
    def of(cls, comment: str | None, column_comments: Mapping[str, str],
           properties: Mapping[str, str], partitioned_by: Sequence[str] = ()) -> "TableMetadata":
        kept = {k: v for k, v in properties.items()
                if k.lower() not in _SYSTEM_PROPERTIES and not k.lower().startswith(_SYSTEM_PREFIXES)}
        left_out = ["the table comment"] if comment and "${" in comment else []
        left_out += [f"the comment of column {c}" for c, t in column_comments.items() if t and "${" in t]
        left_out += [f"property {k}" for k, v in kept.items() if "${" in k or "${" in v]
        return cls(comment if comment and "${" not in comment else None,
                   tuple(sorted((c.lower(), t) for c, t in column_comments.items() if t and "${" not in t)),
                   tuple(sorted((k, v) for k, v in kept.items() if "${" not in k and "${" not in v)),
                   tuple(left_out), tuple(c.lower() for c in partitioned_by))


def left_out_text(item: str) -> str:
    """Why an item of ``TableMetadata.left_out`` is not on the new table, and what to do."""
    return (f"not carried to the new table: {item} (its text holds a dollar sign and an opening brace, which Hive "
            "and Spark replace by a variable's value); set it on the new table by hand")


def replaced_text(layout: Layout, replaced: Sequence[str]) -> str:
    """What laying out a table partitioned by ``replaced`` changes for the jobs that write it."""
    cols = ", ".join(replaced)
    return (f"the laid-out table is partitioned by {layout.partition_column} instead and keeps {cols} as "
            f"{'an ordinary column' if len(replaced) == 1 else 'ordinary columns'}; statements that name its "
            f"partitions (INSERT ... PARTITION ({replaced[0]}=...), ALTER TABLE ... DROP PARTITION, SHOW PARTITIONS) "
            "stop working on it (load new rows with `planner append`)")


def bloom_filter_properties(layout: Layout, file_format: str = "PARQUET") -> dict[str, str]:
    """The table properties that ask the writer for the layout's bloom filters
    (``planner.costmodel.bloom``). As table properties they reach every write of the table, on
    Spark's own writer and on Hive's, later appends and re-layouts included (a session ``SET`` of
    a key holding ``#`` needs backquotes on Spark and is lost with the session). A column is named
    as the file stores it: lower case in a Hive table."""
    filters = hinted(layout)
    if not filters:
        return {}
    if file_format.upper() == "ORC":
        fpp = min(float(spec.get("fpp", 0.01)) for spec in filters.values())
        return {"orc.bloom.filter.columns": ",".join(c.lower() for c in sorted(filters)),
                "orc.bloom.filter.fpp": repr(fpp)}
    out = {}
    for column, spec in sorted(filters.items()):
        name = column.lower()
        out[f"parquet.bloom.filter.enabled#{name}"] = "true"
        out[f"parquet.bloom.filter.expected.ndv#{name}"] = str(int(spec["ndv"]))
        out[f"parquet.bloom.filter.fpp#{name}"] = repr(float(spec["fpp"]))
    return out


FLOATING_TYPES = ("float", "double", "real")


def _floating_paths(name: str, type_: exp.DataType) -> list[str]:
    """Parquet column paths of the FLOAT/DOUBLE leaves under ``name``: the column itself, or the
    fields of a struct (Spark pushes filters on struct fields to Parquet; never on array elements
    or map values, so those are left alone)."""
    if type_.this in (exp.DataType.Type.FLOAT, exp.DataType.Type.DOUBLE):
        return [name]
    if type_.this == exp.DataType.Type.STRUCT:
        out = []
        for field in type_.expressions:
            kind = field.args.get("kind") if isinstance(field, exp.ColumnDef) else None
            if isinstance(kind, exp.DataType):
                out += _floating_paths(f"{name}.{field.name}", kind)
        return out
    return []


def floating_point_properties(columns: Mapping[str, str], file_format: str = "PARQUET",
                              carried: Mapping[str, str] | None = None) -> dict[str, str]:
    """``parquet.enable.dictionary#<column>=false`` for every FLOAT or DOUBLE column (and struct
    field) of a Parquet table: parquet-java's dictionary filter tells -0.0 from +0.0 (module
    docstring). Where the ``carried`` properties of the source ask for bloom filters, also
    ``parquet.bloom.filter.enabled#<column>=false``: a filter hashes a double's bits alike. A column
    is named as the file stores it: Spark keeps a Hive table's column names as declared, Hive
    lower-cases them, so both spellings are given where they differ."""
    if file_format.upper() != "PARQUET":
        return {}
    blooms = any(k.lower().startswith("parquet.bloom.filter.enabled") and v.strip().lower() == "true"
                 for k, v in (carried or {}).items())
    out = {}
    for column, type_name in columns.items():
        for path in _floating_paths(column, data_type(type_name)):
            for spelling in dict.fromkeys((path, path.lower())):
                out[f"parquet.enable.dictionary#{spelling}"] = "false"
                if blooms:
                    out[f"parquet.bloom.filter.enabled#{spelling}"] = "false"
    return out


def create_table(layout: Layout, columns: Mapping[str, str], new_table: str | exp.Table, *,
                 file_format: str = "PARQUET", dialect: str = "hive",
                 metadata: TableMetadata | None = None, external_location: str | None = None) -> exp.Create:
    """``CREATE TABLE`` for ``layout``; with ``external_location``, an external table there."""
    fmt = file_format.upper()
    if fmt not in FILE_FORMATS:
        raise LayoutError(f"unsupported file format {file_format!r}; use one of {', '.join(FILE_FORMATS)}")
    pcol = layout.partition_column
    if pcol.lower() in {c.lower() for c in columns}:
        raise LayoutError(f"the table already has a column named {pcol!r}; choose another partition column")
    substituted = [c for c in [*columns, pcol] if "${" in c]
    if substituted:
        raise LayoutError(f"column name(s) {', '.join(map(repr, substituted))} contain '${{', which Spark and Hive "
                          "replace by a variable's value in any statement; rename the column first")
    metadata = metadata or TableMetadata()
    notes = dict(metadata.column_comments)

    def column(name: str, type_: str) -> exp.ColumnDef:
        note = notes.get(name.lower())
        return exp.ColumnDef(this=exp.to_identifier(name, quoted=True), kind=data_type(type_),
                             constraints=[exp.ColumnConstraint(kind=exp.CommentColumnConstraint(
                                 this=exp.Literal.string(note)))] if note else None)

    col_defs = [column(c, t) for c, t in columns.items()]
    part = exp.ColumnDef(this=exp.to_identifier(pcol, quoted=True), kind=exp.DataType.build(PARTITION_COLUMN_TYPE))
    # COMMENT first: Hive takes it only before PARTITIONED BY (Spark in any order)
    props: list[exp.Expression] = [exp.SchemaCommentProperty(this=exp.Literal.string(metadata.comment))] \
        if metadata.comment else []
    if external_location:
        props.insert(0, exp.ExternalProperty())
    props += [
        exp.PartitionedByProperty(this=exp.Schema(expressions=[part])),
        exp.FileFormatProperty(this=exp.Var(this=fmt), hive_format=True),
    ]
    if external_location:
        props.append(exp.LocationProperty(this=exp.Literal.string(external_location)))
    carried = dict(metadata.properties)
    props += [exp.Property(this=exp.Literal.string(k), value=exp.Literal.string(v))
              for k, v in {**carried, **bloom_filter_properties(layout, fmt),
                           **floating_point_properties(columns, fmt, carried), **layout_properties(layout)}.items()]
    return exp.Create(this=exp.Schema(this=table_expr(new_table, dialect), expressions=col_defs), kind="TABLE",
                      properties=exp.Properties(expressions=props))


def create_table_sql(layout: Layout, columns: Mapping[str, str], new_table: str | exp.Table, *,
                     file_format: str = "PARQUET", dialect: str = "hive", metadata: TableMetadata | None = None,
                     external_location: str | None = None) -> str:
    return create_table(layout, columns, new_table, file_format=file_format, dialect=dialect, metadata=metadata,
                        external_location=external_location).sql(dialect=dialect)


def columns_of_create(text: str, partition_column: str, where: str = "ddl.sql") -> dict[str, str]:
    """Column -> Hive type of the one ``CREATE TABLE`` in ``text``, the partition column left out."""
    import sqlglot

    try:
        create = sqlglot.parse_one(text, read="spark")
    except sqlglot.errors.ParseError as e:
        raise LayoutError(f"{where}: cannot parse: {str(e).splitlines()[0]}") from None
    if not isinstance(create, exp.Create) or not isinstance(create.this, exp.Schema):
        raise LayoutError(f"{where}: expected one CREATE TABLE statement with a column list")
    pcol = partition_column.lower()
    return {c.name.lower(): c.args["kind"].sql(dialect="hive").lower()
            for c in create.this.expressions
            if isinstance(c, exp.ColumnDef) and c.name.lower() != pcol}

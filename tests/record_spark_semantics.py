"""Record Spark's answers to the differential semantics batch, for the pure suite to check against.

    flock /work/spark.lock python tests/record_spark_semantics.py           everything
    flock /work/spark.lock python tests/record_spark_semantics.py --cases   only the written cases

``tests/test_spark_semantics.py`` proves the planner's model of Spark (constant folding, column
comparisons) against a live Spark; that takes a JVM and minutes. This runs the same deterministic
batch once, on the pinned pyspark, and writes what Spark answered to
``tests/fixtures/spark_semantics.json``: for every constant expression the planner claims a value
or an error for, Spark's value and type (or that Spark fails), and for every column predicate the
planner gives verdicts for, Spark's TRUE/FALSE/NULL on each row of the test table.
``tests/test_semantics_recorded.py`` then checks the planner against those answers in seconds, so
a change to ``planner/semantics`` or ``planner/cnf`` that would disagree with Spark fails without
Spark. Record again when the pinned pyspark changes (``tests/test_versions.py``) or the generator
in ``tests/spark_expressions.py`` does; ``--cases`` after a change to the hand-written cases
(``tests/semantics_cases.py``), which keeps the random batch's answers as they are.
"""
from __future__ import annotations

import datetime as dt
import json
import sys
import tempfile
from decimal import Decimal
from pathlib import Path

TESTS = Path(__file__).resolve().parent
sys.path[:0] = [str(TESTS), str(TESTS.parent)]
OUT = TESTS / "fixtures" / "spark_semantics.json"
EXPRESSIONS = 1000  # the CI batch of test_spark_semantics.py
PREDICATES = 600


def encode(v):
    """A collected value as JSON, its Python type kept (floats by repr: NaN, -0.0)."""
    if v is None or isinstance(v, bool | int):
        return v
    if isinstance(v, float):
        return {"f": repr(v)}
    if isinstance(v, Decimal):
        return {"dec": str(v)}
    if isinstance(v, dt.datetime):
        return {"ts": v.isoformat()}
    if isinstance(v, dt.date):
        return {"d": v.isoformat()}
    if isinstance(v, str):
        return {"s": v}
    if isinstance(v, bytes):
        return {"b": v.hex()}
    raise TypeError(f"cannot record a {type(v).__name__}: {v!r}")


def decode(v):
    if not isinstance(v, dict):
        return v
    (tag, x), = v.items()
    return {"m": lambda: x, "f": lambda: float(x), "dec": lambda: Decimal(x), "ts": lambda: dt.datetime.fromisoformat(x),
            "d": lambda: dt.date.fromisoformat(x), "s": lambda: x, "b": lambda: bytes.fromhex(x)}[tag]()


def spark_answers(spark, texts: list[str]) -> dict:
    """Spark's value and type of each constant expression, or "fails": in batches of 250, a batch
    Spark fails on halved until the failing expression shows."""
    from test_spark_semantics import run_select

    answers = {}
    stack = [texts[i:i + 250] for i in range(0, len(texts), 250)]
    while stack:
        part = stack.pop()
        try:
            got = run_select(spark, part)
        except Exception:  # noqa: BLE001 - halve until the failing expression shows
            if len(part) == 1:
                answers[part[0]] = "fails"
            else:
                stack += [part[:len(part) // 2], part[len(part) // 2:]]
            continue
        for text, (value, typename) in zip(part, got):
            answers[text] = {"value": encode(value), "type": typename}
    return answers


def record_constants(spark, texts, settings) -> list:
    import sqlglot
    from test_spark_semantics import fails

    from planner.semantics.constants import from_sqlglot
    from planner.semantics.evaluate import evaluate
    from planner.semantics.settings import Raises, Typed

    spark.conf.set("spark.sql.ansi.enabled", str(settings.ansi).lower())
    spark.conf.set("spark.sql.session.timeZone", settings.time_zone)
    claims, answers = [], {}
    for text in texts:
        c = from_sqlglot(sqlglot.parse_one("SELECT " + text, read="spark").expressions[0])
        out = evaluate(c, settings) if c is not None else None
        if isinstance(out, Typed):
            claims.append(text)
        elif isinstance(out, Raises):
            answers[text] = "fails" if fails(spark, text) else "does not fail"
    answers.update(spark_answers(spark, claims))
    return [[t, answers[t]] for t in texts if t in answers]


def record_predicates(spark, texts, settings, db) -> dict:
    from spark_expressions import COLUMN_TYPES
    from test_spark_semantics import _domain, bound

    spark.conf.set("spark.sql.ansi.enabled", str(settings.ansi).lower())
    spark.conf.set("spark.sql.session.timeZone", settings.time_zone)
    table = spark.table(f"{db}.t").orderBy("k").toArrow().to_pylist()
    rows = [{c: _domain(r[c], COLUMN_TYPES[c]) for c in COLUMN_TYPES} for r in table]
    claims = [t for t in texts if not bound(t, settings)[1]]
    verdicts = {}
    stack = [claims[i:i + 250] for i in range(0, len(claims), 250)]
    while stack:
        part = stack.pop()
        select = ", ".join(f"({t}) AS p{i}" for i, t in enumerate(part))
        try:
            got = spark.sql(f"SELECT k, {select} FROM {db}.t ORDER BY k").toArrow().to_pylist()
        except Exception:  # noqa: BLE001
            if len(part) == 1:
                verdicts[part[0]] = "fails"
            else:
                stack += [part[:len(part) // 2], part[len(part) // 2:]]
            continue
        for i, text in enumerate(part):
            verdicts[text] = "".join({True: "T", False: "F", None: "N"}[r[f"p{i}"]] for r in got)
    # NaN and the infinities are the markers "top" and "bottom" (test_spark_semantics._domain)
    return {"rows": [{c: {"m": v} if COLUMN_TYPES[c] in ("FLOAT", "DOUBLE") and v in ("top", "bottom") else encode(v)
                      for c, v in r.items()} for r in rows],
            "verdicts": [[t, verdicts[t]] for t in texts if t in verdicts]}


def record_cases(spark, settings, db) -> dict:
    """Spark's answer to every hand-written case (``tests/semantics_cases.py``), whether the planner
    claims one or not, and whether it did when they were recorded."""
    from semantics_cases import constant_outcome, predicate_verdicts, read_cases
    from spark_expressions import COLUMN_TYPES
    from test_spark_semantics import _domain

    spark.conf.set("spark.sql.ansi.enabled", str(settings.ansi).lower())
    spark.conf.set("spark.sql.session.timeZone", settings.time_zone)
    constants, predicates = read_cases()
    answers = spark_answers(spark, constants)
    table = spark.table(f"{db}.t").orderBy("k").toArrow().to_pylist()
    rows = [{c: _domain(r[c], COLUMN_TYPES[c]) for c in COLUMN_TYPES} for r in table]
    verdicts = {}
    for text in predicates:
        try:
            got = spark.sql(f"SELECT k, ({text}) AS p FROM {db}.t ORDER BY k").toArrow().to_pylist()
            verdicts[text] = "".join({True: "T", False: "F", None: "N"}[r["p"]] for r in got)
        except Exception:  # noqa: BLE001 - Spark refuses the predicate
            verdicts[text] = "fails"
    return {"constants": [[t, answers[t], constant_outcome(t, settings) is not None] for t in constants],
            "predicates": [[t, verdicts[t], predicate_verdicts(t, settings, rows) is not None] for t in predicates]}


def main(argv: list[str] | None = None) -> int:
    """Record everything; ``--cases``: only the hand-written cases, the random batch kept as it is."""
    import pyspark
    from spark_expressions import PredicateGenerator
    from test_spark_semantics import SEED, SETTINGS, expressions, quiet_spark_errors, semantics_table

    from hive_integration.spark.session import build_spark_session

    only_cases = "--cases" in (sys.argv[1:] if argv is None else argv)
    kept = json.loads(OUT.read_text(encoding="utf-8")) if only_cases else None
    with tempfile.TemporaryDirectory() as tmp:
        spark = build_spark_session(Path(tmp), app_name="record-spark-semantics")
        try:
            quiet_spark_errors(spark)
            if not only_cases:
                texts = expressions(EXPRESSIONS, SEED)
                gen = PredicateGenerator(SEED + 1)
                preds = [gen.column_predicate() for _ in range(PREDICATES)]
            db = "semantics_record"
            semantics_table(spark, db)
            out = kept or {"pyspark": pyspark.__version__, "seed": SEED, "settings": []}
            if only_cases and out["pyspark"] != pyspark.__version__:
                raise SystemExit(f"the batch was recorded on pyspark {out['pyspark']}: record all again")
            for i, s in enumerate(SETTINGS):
                print(f"recording {s.describe()} ...", flush=True)
                if not only_cases:
                    out["settings"].append({"ansi": s.ansi, "time_zone": s.time_zone,
                                            "constants": record_constants(spark, texts, s),
                                            "predicates": record_predicates(spark, preds, s, db)})
                assert (out["settings"][i]["ansi"], out["settings"][i]["time_zone"]) == (s.ansi, s.time_zone)
                out["settings"][i]["cases"] = record_cases(spark, s, db)
        finally:
            spark.stop()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(TESTS.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

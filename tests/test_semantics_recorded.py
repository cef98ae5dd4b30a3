"""The planner's model of Spark against Spark's recorded answers, without Spark.

``tests/fixtures/spark_semantics.json`` holds what the pinned pyspark answered to the differential
batch of ``tests/test_spark_semantics.py`` (written by ``tests/record_spark_semantics.py``). Here
the planner must still agree with every answer: each constant it claims a value for has Spark's
value and type, each error it claims is an error in Spark, and each column predicate's verdict on
each row of the test table (TRUE, FALSE or UNKNOWN: the rule pruning rests on) is Spark's. It may
claim less than when the answers were recorded, but not much less (reading more is safe, a model
that claims nothing prunes nothing).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlglot
from record_spark_semantics import OUT, decode
from semantics_cases import agrees, constant_outcome, predicate_verdicts, read_cases
from test_spark_semantics import bound, same, truth
from test_versions import proven_pyspark

from planner.semantics.constants import from_sqlglot
from planner.semantics.evaluate import evaluate
from planner.semantics.settings import Raises, Settings, Typed

RECORDED = json.loads(Path(OUT).read_text(encoding="utf-8"))
SETTINGS = [(Settings(s["ansi"], s["time_zone"]), s) for s in RECORDED["settings"]]
IDS = [s.describe() for s, _ in SETTINGS]
KEEP = 0.97  # of the recorded claims the planner must still make


def test_the_answers_come_from_the_proven_spark():
    assert RECORDED["pyspark"] == proven_pyspark(), (
        "tests/fixtures/spark_semantics.json was recorded on another pyspark: record it again "
        "(flock /work/spark.lock python tests/record_spark_semantics.py)")


@pytest.mark.parametrize("settings,recorded", SETTINGS, ids=IDS)
def test_constants_fold_as_spark_answered(settings, recorded):
    wrong, claimed = [], 0
    for text, answer in recorded["constants"]:
        c = from_sqlglot(sqlglot.parse_one("SELECT " + text, read="spark").expressions[0])
        out = evaluate(c, settings) if c is not None else None
        if isinstance(out, Typed):
            claimed += 1
            if not isinstance(answer, dict) or answer["type"] != str(out.type) or \
                    not same(out.value, decode(answer["value"])):
                wrong.append((text, out, answer))
        elif isinstance(out, Raises):
            claimed += 1
            if answer != "fails":
                wrong.append((text, out, answer))
    shown = "\n".join(f"  {t}\n    planner {o}\n    spark   {a}" for t, o, a in wrong[:20])
    assert not wrong, f"{len(wrong)} answers differ from Spark's ({settings.describe()}):\n{shown}"
    assert claimed >= KEEP * len(recorded["constants"]), (claimed, len(recorded["constants"]))


@pytest.mark.parametrize("settings,recorded", SETTINGS, ids=IDS)
def test_column_predicates_give_spark_verdicts(settings, recorded):
    rows = [{c: decode(v) for c, v in r.items()} for r in recorded["predicates"]["rows"]]
    wrong, claimed = [], 0
    symbol = {True: "T", False: "F", None: "N"}
    for text, verdicts in recorded["predicates"]["verdicts"]:
        e, opaque = bound(text, settings)
        if opaque:
            continue
        claimed += 1
        mine = "".join(symbol[truth(e, row)] for row in rows)
        if mine != verdicts:
            wrong.append((text, mine, verdicts))
    shown = "\n".join(f"  {t}\n    planner {m}\n    spark   {v}" for t, m, v in wrong[:20])
    assert not wrong, f"{len(wrong)} predicates differ from Spark's verdicts ({settings.describe()}):\n{shown}"
    assert claimed >= KEEP * len(recorded["predicates"]["verdicts"])


def test_every_case_is_recorded():
    constants, predicates = read_cases()
    for _, recorded in SETTINGS:
        cases = recorded.get("cases", {"constants": [], "predicates": []})
        missing = sorted(set(constants) - {t for t, *_ in cases["constants"]}) + \
            sorted(set(predicates) - {t for t, *_ in cases["predicates"]})
        assert not missing, (f"{len(missing)} cases of tests/fixtures/semantics_cases have no answer from Spark, e.g. "
                             f"{missing[:3]}: record them (flock /work/spark.lock python "
                             "tests/record_spark_semantics.py --cases)")


@pytest.mark.parametrize("settings,recorded", SETTINGS, ids=IDS)
def test_cases_agree_with_spark(settings, recorded):
    """Each hand-written case: where the planner claims a value or an error, it is Spark's; and it
    claims every case it claimed when they were recorded (a case the planner gives up on prunes
    less, which is what these cases pin too)."""
    rows = [{c: decode(v) for c, v in r.items()} for r in recorded["predicates"]["rows"]]
    wrong = []
    for text, answer, claimed in recorded.get("cases", {}).get("constants", []):
        out = constant_outcome(text, settings)
        if (out is None and claimed) or (out is not None and not agrees(out, answer)):
            wrong.append((text, out, answer))
    for text, verdicts, claimed in recorded.get("cases", {}).get("predicates", []):
        mine = predicate_verdicts(text, settings, rows)
        if (mine is None and claimed) or (mine is not None and mine != verdicts):
            wrong.append((text, mine, verdicts))
    shown = "\n".join(f"  {t}\n    planner {o}\n    spark   {a}" for t, o, a in wrong[:20])
    assert not wrong, f"{len(wrong)} cases differ from Spark's answers ({settings.describe()}):\n{shown}"

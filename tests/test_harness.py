"""The benchmark harness (``benchmarks/harness.py``): rounds in rotated order, the fastest run, the
answer check, result tables. Spark's scan metrics are covered by the benchmarks' smoke tests."""
from __future__ import annotations

import json
import math
import sys

import pytest

from benchmarks.harness import (
    Answer,
    Timings,
    default_first,
    markdown_table,
    rotated,
    schedule,
    spearman,
    time_process,
    write_result,
)


def test_every_round_runs_every_set_up_in_a_rotated_order():
    order = list(schedule(["a", "b", "c"], 3))
    assert len(order) == 9
    rounds = [[s for r, _, s in order if r == k] for k in range(3)]
    assert rounds == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]  # none always first


def test_the_rotation_moves_from_query_to_query_and_from_round_to_round():
    order = list(schedule(["a", "b"], 2, items=["q1", "q2"]))
    firsts = [s for i, (_, _, s) in enumerate(order) if i % 2 == 0]
    assert firsts == ["a", "b", "b", "a"]
    # a caller running one round at a time passes the round as ``start``
    assert [s for _, _, s in schedule(["a", "b"], 1, items=["q1", "q2"], start=1)] == ["b", "a", "a", "b"]
    assert rotated([], 3) == []


def test_a_figure_is_the_fastest_run_and_each_run_keeps_its_load():
    t = Timings()
    t.add("copy", 3.0, round=0)
    t.add("copy", 2.0, round=1, value="second")
    t.add("pick", 5.0, item="q1")
    assert t.fastest("copy").seconds == 2.0 and t.fastest("copy").value == "second"
    assert t.seconds("copy") == [3.0, 2.0] and t.of("pick") == [] and t.fastest("pick", "q1").seconds == 5.0
    assert all(isinstance(r.load, float) for r in t.runs)
    assert t.time("fn", lambda: 42) == 42 and t.fastest("fn").seconds >= 0
    with pytest.raises(KeyError):
        t.fastest("nothing")


def test_an_answer_does_not_depend_on_the_order_of_the_rows_but_counts_each_one():
    rows = [(1, "a"), (2, "b"), (2, "b")]
    assert Answer.of(rows) == Answer.of(list(reversed(rows)))
    assert Answer.of(rows).count == 3
    assert Answer.of(rows) != Answer.of(rows[:1])  # the pair of equal rows does not cancel out
    assert Answer.of([(1, "a")]) != Answer.of([(1, "b")])
    assert Answer.of([]) == Answer(0, 0)


def test_result_tables_put_the_default_advice_first_and_write_markdown_and_json(tmp_path):
    rows = [{"k": "as loaded"}, {"k": "allow"}, {"k": "pick"}]
    assert [r["k"] for r in default_first(rows, lambda r: r["k"] == "pick")] == ["pick", "as loaded", "allow"]
    lines = markdown_table(["layout", "rows"], [["pick", "1"], ["copy", "2"]])
    assert lines[:2] == ["| layout | rows |", "|---|---:|"] and lines[2] == "| pick | 1 |"
    with pytest.raises(ValueError):
        markdown_table(["a", "b"], [], align="l")
    paths = write_result("x", "# X", {"a": 1}, tmp_path)
    assert [p.name for p in paths] == ["x.md", "x.json"]
    assert (tmp_path / "x.md").read_text() == "# X\n" and json.loads((tmp_path / "x.json").read_text()) == {"a": 1}
    assert write_result("y", "# Y\n", out_dir=tmp_path) == [tmp_path / "y.md"]


def test_spearman_with_ties():
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [40, 30, 20, 10]) == pytest.approx(-1.0)
    assert spearman([1, 1, 2, 3], [5, 5, 6, 7]) == pytest.approx(1.0)
    assert math.isnan(spearman([1, 2], [1, 2]))


def test_a_process_is_timed_with_its_cpu_and_a_failure_says_why():
    done = time_process([sys.executable, "-c", "print('hi')"])
    assert done.stdout == "hi\n" and done.seconds > 0 and done.cpu >= 0
    with pytest.raises(SystemExit, match="boom"):
        time_process([sys.executable, "-c", "import sys; sys.exit('boom')"])

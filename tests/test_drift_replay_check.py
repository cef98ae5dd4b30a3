"""The drift replay's layouts on Spark, small: every probe of every step answers as on the plain
table, and Spark's rows read are reported next to the model's (``benchmarks.drift_replay_check``)."""
from __future__ import annotations

from benchmarks.drift_replay_check import report, run


def test_the_layouts_partial_held_answer_every_probe_as_the_plain_table(spark, tmp_path):
    r = run(0.01, 3, 8, 4, 20_000, 4.0, 11, {}, log=lambda *_: None, spark=spark, data_dir=tmp_path)
    assert len(r["steps"]) == 6 and r["probes"] >= 6 * 4
    assert r["wrong"] == 0
    assert all(s["spark"] > 0 and s["static_spark"] > 0 for s in r["steps"])
    text = report(r, "cmd")
    assert "| wrong answers (every probe's count and checksum against the plain table) | 0 |" in text
    assert "partial / static, rows read + rewritten" in text

"""``planner calibrate`` on real Spark: it measures its probes, fits the time model and stores the
coefficients where advise, status and relayout read them."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from hive_integration.spark.calibration import DATABASE
from planner.cli.calibrate import CALIBRATION_FILE, load_time_params
from planner.cli.main import cli
from planner.costmodel.timing import TimeParams


def test_calibrate_stores_what_advise_prices_with(spark):
    state = Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")).parent
    stored = state / CALIBRATION_FILE
    assert not stored.exists()  # the other tests price with the shipped defaults
    try:
        got = CliRunner().invoke(cli, ["calibrate", "--rows", "100000", "--rounds", "1", "--state-dir", str(state),
                                       "--format", "json"])
        assert got.exit_code == 0, got.output
        out = json.loads(got.output)
        assert out["calibration"] == str(stored)
        params = load_time_params(state)
        assert params == TimeParams.from_json(out["params"]) and params != TimeParams()
        assert params.cores == spark.sparkContext.defaultParallelism
        assert all(getattr(params, c) >= 0 for c in TimeParams.COEFFICIENTS)
        # what each coefficient comes to at this tiny size on a busy machine is noise; that the fit
        # explains its own probes is not (a benchmark judges the coefficients, not this test)
        assert 0 <= out["median_error"] < 1
        assert len(out["probes"]) >= 40 and all(p["seconds"] > 0 for p in out["probes"])
        assert DATABASE not in {d.name for d in spark.catalog.listDatabases()}  # the scratch tables are gone
    finally:
        stored.unlink(missing_ok=True)


def test_the_scratch_schema_is_dropped_by_its_name():
    """sqlglot renders ``Drop(this=<identifier>)`` without the name, and Spark then drops a schema
    called ``CASCADE`` (a user's, if one exists) and keeps ours."""
    from hive_integration.spark.calibration import _drop_schema, _sql

    assert _sql(_drop_schema()) == f"DROP SCHEMA IF EXISTS {DATABASE} CASCADE"

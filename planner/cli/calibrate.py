"""``planner calibrate``: measure this Spark's time per partition, file, row group, row and byte.

``advise``, ``status`` and ``relayout`` price layouts in seconds (``planner.costmodel.timing``).
The coefficients they use are the ones this command stored in the state directory
(``calibration.json``), else the defaults shipped for a 2-core local driver. Run it once per
cluster (or after changing executors), where the tables live: the probes read a synthetic table
written into a scratch database that is dropped at the end.
"""
from __future__ import annotations

import json

import click

from planner.cli.console import Console
from planner.cli.engine import start_spark, verbose
from planner.cli.options import format_option, metastore_options
from planner.costmodel.timing import TimeParams

CALIBRATION_FILE = "calibration.json"


def load_time_params(state, path: str | None = None) -> TimeParams:
    """The calibration in ``path``, else the one stored in ``state`` (a state directory), else the
    shipped defaults."""
    from pathlib import Path

    path = Path(path) if path else state / CALIBRATION_FILE
    if not path.exists():
        return TimeParams()
    try:
        return TimeParams.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError) as e:
        from planner.errors import InputError

        raise InputError(f"{path}: not a calibration this planner wrote ({e}); run `planner calibrate` again") \
            from None


@click.command("calibrate")
@click.option("--rows", type=click.IntRange(min=100_000), default=2_000_000, show_default=True,
              help="Rows of the synthetic table the probes read.")
@click.option("--rounds", type=click.IntRange(min=1), default=3, show_default=True,
              help="Timed runs per probe (the fastest counts).")
@metastore_options
@format_option
def calibrate_cmd(rows: int, rounds: int, engine, fmt: str) -> None:
    """Measure the time model's coefficients on this Spark and keep them in the state directory."""
    from hive_integration.spark.calibration import calibrate

    console = Console(fmt)
    spark, engine = start_spark(engine, console, verbose=verbose())
    state = engine.state_dir
    result, measured = calibrate(spark, rows=rows, rounds=rounds, say=console.say)
    state.mkdir(parents=True, exist_ok=True)
    path = state / CALIBRATION_FILE
    path.write_text(json.dumps(result.params.to_json(), indent=2) + "\n", encoding="utf-8")
    if fmt == "json":
        click.echo(json.dumps({"calibration": str(path), "params": result.params.to_json(),
                               "median_error": result.median_error,
                               "probes": [{"sql": m.probe.sql, "seconds": m.seconds, "estimated": e}
                                          for m, e in zip(measured, _estimates(result.params, measured))]},
                              indent=2))
        return
    p = result.params
    click.echo(f"calibrated on {p.cores} cores: {len(measured)} probes, median error {result.median_error:.0%}")
    for name in TimeParams.COEFFICIENTS:
        click.echo(f"  {name:<10} {getattr(p, name) * _unit(name)[0]:10.4g} {_unit(name)[1]}")
    click.echo(f"stored in {path}; advise, status and relayout price layouts with it")


def _estimates(params: TimeParams, measured) -> list[float]:
    from planner.costmodel.timing import scan_seconds

    return [scan_seconds(m.work, params) for m in measured]


def _unit(name: str) -> tuple[float, str]:
    return {"row": (1e9, "ns per row"), "byte": (1e9, "ns per byte"), "query": (1e3, "ms per query")}.get(
        name, (1e3, f"ms per {name.replace('_', ' ')}"))

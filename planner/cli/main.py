"""Entry point and the one place where errors become messages and exit codes.

User mistakes (``PlannerError``) print one line naming the file, statement and line, and exit
non-zero with no traceback; ``--verbose`` shows the traceback for bug reports.
"""
from __future__ import annotations

import functools
import sys

import click

from planner.errors import PlannerError


class PlannerGroup(click.Group):
    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except PlannerError as e:
            if ctx.obj and ctx.obj.get("verbose"):
                raise
            click.echo(f"error: {e}", err=True)
            sys.exit(e.exit_code)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)


@click.group(cls=PlannerGroup)
@click.option("--verbose", is_flag=True, help="Show tracebacks and Spark logs.")
@click.version_option(package_name="hive-partition-planner")
@click.pass_context
def cli(ctx: click.Context, verbose: bool) -> None:
    """Recommend and apply Hive partition layouts that let a workload skip data."""
    ctx.ensure_object(dict)
    ctx.obj["verbose"] = verbose


def common_workload_options(fn):
    @click.option("--dialect", type=click.Choice(["hive", "spark"]), default="hive", show_default=True)
    @click.option("--on-error", type=click.Choice(["fail", "skip"]), default="fail", show_default=True,
                  help="Stop at the first bad statement, or skip it and report how many were skipped.")
    @click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


def main(argv=None) -> None:
    from planner.cli import analyze  # noqa: F401  (registers commands)
    for name in ("advise", "apply", "rewrite", "append"):  # rewrite.py also registers explain
        try:
            __import__(f"planner.cli.{name}")
        except ImportError:
            pass
    cli.main(args=argv, prog_name="planner")

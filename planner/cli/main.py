"""Entry point, and the one place where errors become messages and exit codes.

Every command exits with the same codes:

    0    success
    1    the outside world failed: Spark, the JVM, a metastore, HiveServer2, an apply that stopped
    2    the input is wrong: a usage error, a missing or unreadable file, a statement that cannot
         be read, a malformed layout or option value
    130  interrupted (Ctrl-C)

Any error prints one line (``error: …``) naming the file, statement and line where there is one;
``--verbose`` shows the traceback and Spark's logs for bug reports.

Subcommands are imported only when they run (``LazyGroup``): ``planner analyze`` and ``planner
rewrite --layout`` never import pyspark, numpy or pyarrow, and ``planner --help`` imports nothing.
An import error in a subcommand is a bug and is shown as one.
"""
from __future__ import annotations

import importlib
import sys

import click

from planner.errors import PlannerError

EXIT_OK, EXIT_FAILED, EXIT_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130

# name -> (module, function, one-line help); the help is here so that listing costs no import.
COMMANDS = {
    "analyze": ("planner.cli.analyze", "analyze_cmd", "Show each column's filters and CPS candidate conditions."),
    "advise": ("planner.cli.advise", "advise_cmd", "Rank layouts for the tables a workload reads; write advice "
                                                   "folders."),
    "apply": ("planner.cli.apply", "apply_cmd", "Lay a table out as advised: write, verify, swap (resumable)."),
    "rewrite": ("planner.cli.rewrite", "rewrite_cmd", "Add partition predicates to queries on laid-out tables."),
    "explain": ("planner.cli.rewrite", "explain_cmd", "Per scan of a laid-out table: partitions read, and why."),
    "append": ("planner.cli.append", "append_cmd", "Insert a batch into a laid-out table, each row into its "
                                                   "partition."),
    "status": ("planner.cli.status", "status_cmd", "How well a laid-out table's layout serves a recent workload."),
    "relayout": ("planner.cli.status", "relayout_cmd", "Re-cut only the partitions whose gain pays for the "
                                                       "rewrite."),
    "calibrate": ("planner.cli.calibrate", "calibrate_cmd", "Measure this Spark's time per partition, file, row "
                                                            "group, row and byte."),
}


def external_error(e: BaseException) -> str | None:
    """One line for a failure raised by Spark, Py4J (the JVM) or thrift, else None.

    The classes are looked up in ``sys.modules`` only: if pyspark was never imported, no Spark error
    can have been raised, and importing it here would cost a second.
    """
    names = []
    for module, cls in (("py4j.protocol", "Py4JError"), ("pyspark.errors", "PySparkException"),
                        ("thrift.Thrift", "TException"), ("thrift.transport.TTransport", "TTransportException")):
        mod = sys.modules.get(module)
        if mod is not None and isinstance(e, getattr(mod, cls)):
            names.append(cls)
    if not names:
        return None
    return f"{'Spark' if 'Py4JError' in names or 'PySparkException' in names else 'thrift'}: {first_line(e)}"


def first_line(e: BaseException) -> str:
    """The first meaningful line of an error (Java's ``…Exception: message``, not the frames)."""
    text = str(getattr(e, "message", None) or e).strip()
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("at ", "Traceback", "JVM stacktrace")):
            return line[:500]
    return type(e).__name__


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attr, _ = COMMANDS[name]
        return getattr(importlib.import_module(module), attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, help_) for name, (_, _, help_) in COMMANDS.items()])

    def invoke(self, ctx: click.Context):
        verbose = bool(ctx.params.get("verbose"))
        try:
            return super().invoke(ctx)
        except PlannerError as e:
            if verbose:
                raise
            click.echo(f"error: {e}", err=True)
            sys.exit(e.exit_code)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except click.UsageError as e:  # a bad option or a missing input file: one line too
            where = e.ctx.command_path if e.ctx is not None else "planner"
            click.echo(f"error: {e.format_message()} (see '{where} --help')", err=True)
            sys.exit(EXIT_INPUT)
        except (click.ClickException, click.exceptions.Exit, click.Abort, SystemExit):
            raise
        except Exception as e:  # noqa: BLE001 - translated below or re-raised untouched
            message = external_error(e)
            if message is None or verbose:
                raise
            click.echo(f"error: {message}", err=True)
            sys.exit(EXIT_FAILED)


@click.group(cls=LazyGroup, epilog="Exit codes: 0 success, 1 Spark/metastore/HiveServer2 or apply failed, "
                                   "2 bad input or usage, 130 interrupted.")
@click.option("--verbose", is_flag=True, help="Show tracebacks and Spark logs.")
@click.version_option(package_name="hive-partition-planner")
@click.pass_context
def cli(ctx: click.Context, verbose: bool) -> None:
    """Recommend and apply Hive partition layouts that let a workload skip data."""
    ctx.ensure_object(dict)
    ctx.obj["verbose"] = verbose


def main(argv=None) -> None:
    cli.main(args=argv, prog_name="planner")

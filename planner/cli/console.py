"""Where a command's progress goes while Spark works.

On a terminal (``--format text``, stderr a TTY) long Spark work shows a ``rich`` progress bar fed
by Spark's own status tracker (tasks done of the active stages) with the current step's name;
otherwise each step is one plain line on stderr, and with ``--format json`` nothing is printed
but the JSON on stdout. ``rich`` is imported only when a bar is shown.
"""
from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager
from typing import Iterator

import click

POLL_SECONDS = 0.25


class Console:
    def __init__(self, fmt: str = "text", stream=None):
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = fmt == "json"
        self.live = not self.quiet and _is_terminal(self.stream)
        self._status = None  # (progress, task id) while a bar is shown

    def say(self, message: str) -> None:
        """One progress line (a step done, a file written)."""
        if self.quiet:
            return
        if self._status is not None:
            progress, task = self._status
            progress.update(task, description=_short(message))
            progress.console.print(message, highlight=False)
        else:
            click.echo(message, err=True)

    @contextmanager
    def spark_work(self, spark, label: str) -> Iterator[None]:
        """A progress bar of the tasks Spark runs inside the block (plain: one line per step)."""
        if not self.live or spark is None:
            self.say(label + " …")
            yield
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("tasks"), TimeElapsedColumn(), console=_rich_console(self.stream),
                            transient=True)
        task = progress.add_task(_short(label), total=None)
        stop = threading.Event()
        poller = threading.Thread(target=_poll, args=(spark, progress, task, stop), daemon=True)
        with progress:
            self._status = (progress, task)
            poller.start()
            try:
                yield
            finally:
                stop.set()
                poller.join(timeout=2)
                self._status = None
        self.say(f"{label}: done")


def _poll(spark, progress, task, stop: threading.Event) -> None:
    """Tasks done and in total over the stages Spark is running now (a new stage resets the bar)."""
    tracker = spark.sparkContext.statusTracker()
    while not stop.wait(POLL_SECONDS):
        try:
            done = total = 0
            for stage_id in tracker.getActiveStageIds():
                info = tracker.getStageInfo(stage_id)
                if info is not None:
                    done += info.numCompletedTasks
                    total += info.numTasks
        except Exception:  # noqa: BLE001 - the JVM may be busy or stopping; the bar is only a hint
            continue
        progress.update(task, completed=done, total=total or None)


def _short(message: str, width: int = 60) -> str:
    message = " ".join(message.split())
    return message if len(message) <= width else message[:width - 1] + "…"


def _is_terminal(stream) -> bool:
    if os.environ.get("TERM") == "dumb" or os.environ.get("PLANNER_PLAIN"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _rich_console(stream):
    from rich.console import Console as RichConsole

    return RichConsole(file=stream, stderr=stream is sys.stderr)


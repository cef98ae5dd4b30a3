"""The ``planner`` command line: a click group; each command lives in its own module."""
from planner.cli.main import main

__all__ = ["main"]

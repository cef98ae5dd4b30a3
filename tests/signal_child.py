"""Run by tests/test_signals.py as a child pytest (not collected on its own: no ``test_`` prefix).

It starts the standalone metastore through the suite's fixture, writes the JVM's PID where the
parent asked, and waits to be signalled.
"""
from __future__ import annotations

import os
import time
from pathlib import Path


def test_hold_a_metastore_until_signalled(metastore):
    Path(os.environ["PLANNER_SIGNAL_PIDFILE"]).write_text(str(metastore.pid))
    time.sleep(300)

"""Time models for tests whose tables are far smaller than the ones the shipped defaults price.

The planner ranks and guards layouts by estimated seconds (``planner.costmodel.timing``). On a
table of a few thousand rows the fixed costs (planning a query, listing a partition, opening a
file) dwarf the rows, and the default advice rightly keeps such a table as it is. A test that means
to lay a small table out prices it with one of these instead:

* ``ROWS_AS_SECONDS``: a second per row read and nothing else, so estimated seconds are rows;
* ``SLOW_SCANS``: a local driver's fixed costs (the defaults shipped before the first
  calibration) with rows and bytes 1000x slower
  (``tests/data/slow_scans.json``, also passed to the CLI as ``--calibration``), so a table of
  60,000 rows prices like one of 60 million.
"""
from __future__ import annotations

import json
from pathlib import Path

from planner.costmodel.timing import TimeParams

ROWS_AS_SECONDS = TimeParams(query=0.0, partition=0.0, task=0.0, file=0.0, row_group=0.0, row=1.0, byte=0.0, cores=1)
SLOW_SCANS_FILE = Path(__file__).parent / "data" / "slow_scans.json"
SLOW_SCANS = TimeParams.from_json(json.loads(SLOW_SCANS_FILE.read_text(encoding="utf-8")))

"""Where a command's time goes, step by step (``planner apply``'s report, the index build's)."""
from __future__ import annotations

import time


class StepClock:
    """Seconds per step into ``seconds`` (a step lasts from its ``start`` to the next one's, or
    ``stop``); a step started again adds to its time. ``seconds`` None: nothing is kept."""

    def __init__(self, seconds: dict[str, float] | None):
        self.seconds, self.name, self.t0 = seconds, None, 0.0

    def start(self, name: str) -> None:
        self.stop()
        self.name, self.t0 = name, time.monotonic()

    def stop(self) -> None:
        if self.name is not None and self.seconds is not None:
            self.seconds[self.name] = round(self.seconds.get(self.name, 0.0) + time.monotonic() - self.t0, 3)
        self.name = None


__all__ = ["StepClock"]

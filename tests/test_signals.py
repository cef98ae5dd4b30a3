"""A SIGTERM or Ctrl-C to the test run stops the servers it started (no JVM is left behind).

The servers run in their own process groups (so that stopping one kills its helpers too), which
also means a signal to the test run does not reach them; ``tests/conftest.py`` stops them on
SIGTERM and SIGINT. Each case runs a child pytest that starts the standalone metastore, signals
it, and checks that the metastore's JVM and its process group are gone.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)  # the group id is the server's PID (start_new_session)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.servers
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_to_the_run_stops_the_servers(tmp_path, sig):
    pidfile = tmp_path / "metastore.pid"
    jvm = None
    child = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                              "--basetemp", str(tmp_path / "child"), "tests/signal_child.py"],
                             cwd=ROOT, env=dict(os.environ, PLANNER_SIGNAL_PIDFILE=str(pidfile)),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 180
        while not pidfile.exists() or not pidfile.read_text():
            assert child.poll() is None, child.stdout.read()
            assert time.monotonic() < deadline, "the child never started its metastore"
            time.sleep(0.5)
        jvm = int(pidfile.read_text())
        assert _alive(jvm)
        child.send_signal(sig)
        out, _ = child.communicate(timeout=90)
        assert child.returncode == (-signal.SIGTERM if sig == signal.SIGTERM else 2), out
        assert not _alive(jvm), f"the metastore JVM {jvm} survived a {sig.name} to the test run"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if jvm is not None and _alive(jvm):
            os.killpg(jvm, signal.SIGKILL)  # do not leave it to the next test run

"""Who holds an embedded Derby metastore, asked before a JVM boots it.

An embedded Derby database can be booted by one JVM at a time. A second one fails late, at its
first catalog call, with ``XSDB6: Another instance of Derby may have already booted the
database`` buried in pages of Hive and DataNucleus frames; the catalog then looks empty. So the
planner asks first, without a JVM, and refuses in one line naming the holder.

How to tell (Derby 10.16, embedded; measured by hand):

* ``db.lck`` and ``dbex.lck`` in the database folder say nothing: Spark never shuts Derby down, so
  they stay after every run, after ``kill -9`` too, and a failed second booter rewrites the UUID
  in ``db.lck``;
* the holder is whoever has the POSIX (``fcntl``) write lock Derby takes on ``dbex.lck``
  (``FileChannel.tryLock``). The kernel drops it when that process dies, even on ``kill -9``.
  ``/proc/locks`` names its pid; ``F_GETLK`` does too, and takes nothing. ``flock(2)`` locks do not
  interact with POSIX locks on Linux, so they cannot probe it.

The planner's own processes also hold a POSIX lock on ``planner.pid`` in the state folder, for
their whole life, with their pid and command line in the file: two planners starting at the same
moment both pass the Derby check, but only one gets this lock (``hold_state_dir``).

Limits: both locks are seen only on this host and in this pid namespace (another container shows
pid 0 or nothing); on NFS a lock is local to each client.
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import struct
import sys
import time
from dataclasses import dataclass
from pathlib import Path

PID_FILE = "planner.pid"
_FLOCK = "hhqqi"  # struct flock on Linux (x86_64, aarch64): type, whence, start, len, pid


@dataclass(frozen=True)
class Holder:
    """A live process holding a lock: its pid (None: busy, but not visible from here) and what it runs."""

    pid: int | None
    command: str = ""

    def describe(self) -> str:
        if self.pid is None:
            return "a process this machine cannot name (another host or container)"
        return f"pid {self.pid}" + (f" ({self.command})" if self.command else "")


def _proc_locks_pid(path: Path) -> int | None:
    """The pid holding a POSIX or OFD lock on ``path`` according to ``/proc/locks`` (Linux)."""
    try:
        st = path.stat()
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    want = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    for line in lines:
        f = line.split()
        # "1: POSIX  ADVISORY  WRITE 12345 00:2f:1234567 0 EOF"; "->" marks a waiter
        if len(f) < 6 or f[1] == "->" or f[1] not in ("POSIX", "OFDLCK"):
            continue
        try:
            major, minor, inode = f[5].split(":")
            if (int(major, 16), int(minor, 16), int(inode)) == want:
                return int(f[4])
        except ValueError:
            continue
    return None


def _getlk_pid(path: Path) -> int | None:
    """``fcntl(F_GETLK)``: the pid of a lock that would block a write lock on ``path`` (only asks)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return None
    try:
        res = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0))
        kind, _, _, _, pid = struct.unpack(_FLOCK, res)
        return None if kind == fcntl.F_UNLCK else pid
    except OSError:
        return None
    finally:
        os.close(fd)  # no lock was taken, so closing releases nothing


def _busy(path: Path) -> bool:
    """Try the lock and release it at once: for a holder the other probes cannot see."""
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        return e.errno in (errno.EACCES, errno.EAGAIN)
    else:
        fcntl.lockf(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def command_of(pid: int) -> str:
    """What ``pid`` runs, shortened for one line; for a Spark driver JVM, the Python process that
    started it (the planner command, or a notebook)."""
    def cmdline(p: int) -> str:
        try:
            return Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            return ""

    text = cmdline(pid)
    if "SparkSubmit" in text or "pyspark-shell" in text:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            text = f"{cmdline(parent) or '?'}, its Spark driver JVM"
        except (OSError, ValueError, IndexError):
            pass
    elif "HiveMetaStore" in text:
        text = "a Hive metastore"
    return _short(text)


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def derby_holder(db_dir: str | os.PathLike) -> Holder | None:
    """None if no live process has the embedded Derby database in ``db_dir`` booted, else who has."""
    lock = Path(db_dir) / "dbex.lck"
    if not lock.exists():
        return None  # never booted here
    pid = _proc_locks_pid(lock)
    if pid is None:
        pid = _getlk_pid(lock)
    if pid is None or pid <= 0:
        return Holder(None) if _busy(lock) else None  # stale files of a finished JVM: free
    if pid == os.getpid():
        return None  # this process's own JVM (never the case: a JVM is a process of its own)
    return Holder(pid, command_of(pid))


_HELD: dict[Path, int] = {}  # state folder -> fd of the planner.pid this process holds (never closed)


def hold_state_dir(state_dir: str | os.PathLike) -> Holder | None:
    """Take the state folder's ``planner.pid`` lock for the rest of this process's life, writing our
    pid, start time, host and command line into it. Returns None when taken (or already ours), else
    the process that holds it. The fd stays open: closing any fd of a file drops a process's POSIX
    locks on it, so it is opened once per process."""
    folder = Path(state_dir).resolve()
    if folder in _HELD:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / PID_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        os.close(fd)
        if e.errno not in (errno.EACCES, errno.EAGAIN):
            raise
        return _pid_file_holder(path)
    record = {"pid": os.getpid(), "started": int(time.time()), "host": socket.gethostname(),
              "command": command_of(os.getpid()) or " ".join(sys.argv)}
    os.ftruncate(fd, 0)
    os.write(fd, (json.dumps(record) + "\n").encode())
    _HELD[folder] = fd
    return None


def _pid_file_holder(path: Path) -> Holder:
    pid = _proc_locks_pid(path) or _getlk_pid(path)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = {}
    pid = pid or record.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return Holder(None)
    return Holder(pid, command_of(pid) or _short(str(record.get("command", ""))))


__all__ = ["Holder", "PID_FILE", "command_of", "derby_holder", "hold_state_dir"]

"""The code names nothing it does not define, and imports nothing it does not use.

``ruff check --select F`` (pyflakes' rules) over every Python folder: an undefined name in a benchmark
helper reached CI once, because only the one Spark test that ran it could notice. This notices in a
second, with the pure tests.
"""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("planner", "hive_integration", "devtools", "benchmarks", "tests")


def test_pyflakes_rules_pass_everywhere():
    ruff = Path(sys.executable).with_name("ruff")
    done = subprocess.run([str(ruff), "check", "--select", "F", "--no-cache", "--output-format", "concise",
                           *FOLDERS], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr

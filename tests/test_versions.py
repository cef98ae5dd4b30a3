"""The versions the suite was proven with: pyspark pinned, everything else locked.

Spark's semantics (casts, coercions, constant folding, NULL handling) are modelled in
``planner.semantics`` and proven against one Spark release by the differential tests. Another
release may change a coercion rule, and the planner would then prune wrongly without a word; so
the pure suite refuses to pass on any pyspark but the proven one, and says what to re-run.
"""
from __future__ import annotations

import configparser
import re
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
DIFFERENTIAL = "tests/test_spark_semantics.py tests/test_equivalence.py tests/test_issue10_cases.py"


def _install_requires() -> dict[str, Requirement]:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    reqs = [Requirement(x) for x in cfg.get("options", "install_requires").splitlines() if x.strip()]
    return {r.name.lower(): r for r in reqs}


def _locked() -> dict[str, str]:
    out = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, v = line.partition("==")
            out[re.sub(r"[-_.]+", "-", name).lower()] = v.strip()
    return out


def proven_pyspark() -> str:
    (spec,) = _install_requires()["pyspark"].specifier
    assert spec.operator == "==", "setup.cfg must pin pyspark (==) to the version the differential tests proved"
    return spec.version


def test_installed_pyspark_is_the_proven_one():
    proven = proven_pyspark()
    installed = version("pyspark")
    assert installed == proven, (
        f"pyspark {installed} is installed, but the planner's model of Spark's semantics was proven against "
        f"pyspark {proven}. Run the differential tests on {installed} (under the Spark lock): "
        f"python -m pytest {DIFFERENTIAL}; and SEMANTICS_EXPRESSIONS=10000 python -m pytest "
        f"tests/test_spark_semantics.py for the long run. If they pass, pin {installed} in setup.cfg "
        f"and constraints.txt (./dev lock); if not, fix planner/semantics first.")


def test_the_lock_agrees_with_setup_cfg():
    locked = _locked()
    assert locked["pyspark"] == proven_pyspark()
    for name, req in _install_requires().items():
        key = re.sub(r"[-_.]+", "-", name)
        assert key in locked, f"constraints.txt does not lock {name}"
        assert req.specifier.contains(locked[key]), f"constraints.txt locks {name} {locked[key]}, outside {req}"
    assert "hive-partition-planner" not in locked  # the project itself is installed from the tree


def test_the_lock_is_what_is_installed():
    # A fresh machine gets exactly constraints.txt (./dev installs with -c); so must this one, or
    # the suite passes with versions nobody else gets.
    drift = []
    for name, want in _locked().items():
        try:
            have = version(name)
        except PackageNotFoundError:
            continue  # an extra this environment does not have (e.g. mutmut, matplotlib)
        if have != want:
            drift.append(f"{name} {have} (locked {want})")
    assert not drift, "installed versions differ from constraints.txt: " + ", ".join(drift) + \
        "; run ./dev (it reinstalls when the lock changes), or ./dev lock after a deliberate upgrade"

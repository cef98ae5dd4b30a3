"""The pure suite at setup.cfg's lower bounds: ``./dev test-lower-bounds``.

    ./dev test-lower-bounds                  build/lower-bounds/venv, then pytest -m "not spark"
    ./dev test-lower-bounds --venv DIR       another throwaway virtualenv
    ./dev test-lower-bounds --print          only print the lower-bound constraints
    ./dev test-lower-bounds -m "not spark" tests/test_reader.py    other pytest arguments

Every ``>=`` in ``install_requires`` and the ``test`` extra is a claim that the planner works with
that version. This builds a fresh virtualenv in which each such dependency is installed at exactly
its lower bound (``==`` pins, such as pyspark's, stay as they are), installs the project into it,
and runs the pure tests there. A bound that fails here is wrong: raise it in setup.cfg. (The
versions a fresh machine gets are the locked ones in constraints.txt; this checks the other end.)
"""
from __future__ import annotations

import argparse
import configparser
import subprocess
import sys
import venv
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = ("test", "bench")  # the pure suite draws plots too (tests/test_plots.py)


def requirements(setup_cfg: Path = ROOT / "setup.cfg", extras=EXTRAS) -> list[Requirement]:
    cfg = configparser.ConfigParser()
    cfg.read(setup_cfg)
    lines = cfg.get("options", "install_requires").splitlines()
    for extra in extras:
        lines += cfg.get("options.extras_require", extra).splitlines()
    return [Requirement(line) for line in lines if line.strip()]


def lower_bounds(reqs: list[Requirement]) -> list[str]:
    """``name==lowest`` for every requirement with a lower bound (``>=`` or ``==``)."""
    out: dict[str, str] = {}
    for r in reqs:
        lows = [s.version for s in r.specifier if s.operator in (">=", "==", "~=")]
        if not lows:
            raise SystemExit(f"setup.cfg: {r} has no lower bound; give it one (the lowest version tried)")
        low = max(lows, key=lambda v: tuple(int(x) for x in v.split(".") if x.isdigit()))
        out[r.name.lower()] = f"{r.name}=={low}"
    return list(out.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="./dev test-lower-bounds", description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", type=Path, default=ROOT / "build" / "lower-bounds" / "venv")
    parser.add_argument("--print", action="store_true", help="print the constraints and stop")
    args, pytest_args = parser.parse_known_args(argv)  # the rest goes to pytest (default: -m 'not spark')
    pins = lower_bounds(requirements())
    if args.print:
        print("\n".join(pins))
        return 0
    target = args.venv.resolve()
    constraints = target.parent / "lower-bounds.txt"
    target.parent.mkdir(parents=True, exist_ok=True)
    constraints.write_text("\n".join(pins) + "\n")
    venv.EnvBuilder(with_pip=True, clear=True).create(target)
    py = str(target / "bin" / "python")
    print(f"installing the project at its lower bounds into {target} ...", flush=True)
    subprocess.run([py, "-m", "pip", "install", "-q", "-c", str(constraints), "-e", f".[{','.join(EXTRAS)}]"],
                   cwd=ROOT, check=True)
    subprocess.run([py, "-m", "pip", "list", "--format=freeze"], cwd=ROOT, check=True)
    # the one test that checks the installed versions ARE the locked ones cannot hold here
    pytest_args = (pytest_args or ["-m", "not spark"]) + [
        "--deselect", "tests/test_versions.py::test_the_lock_is_what_is_installed"]
    return subprocess.run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args], cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main())

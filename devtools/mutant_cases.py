"""Which surviving mutants of ``planner/semantics`` the hand-written semantics cases tell apart.

    .venv/bin/python -m devtools.mutant_cases                 every survivor not classified
    .venv/bin/python -m devtools.mutant_cases casts parsing   only those of these files
    .venv/bin/python -m devtools.mutant_cases --function _from_fractional --show

A survivor of ``./dev mutate semantics`` is killed once a case of ``tests/fixtures/semantics_cases``
gets another answer from the mutant than from the code (``tests/semantics_cases.py``): a case with
Spark's answer recorded fails ``tests/test_semantics_recorded.py`` under the mutant; a new one
will, once recorded. This answers that in seconds per file, without Spark or a mutmut run, so
cases can be written against the survivors one by one; ``./dev mutate --recheck semantics``
remains the verdict of record.

It imports the mutated code of the last semantics run (``build/mutation/semantics/mutants``),
forks once per mutant from a process that has computed nothing (no cache holds an answer of the
original code) and switches the mutant on as mutmut does (``MUTANT_UNDER_TEST``).
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "build" / "mutation" / "semantics"
STATE = ROOT / "tests" / "mutation" / "state" / "semantics.json"
TIMEOUT = 30  # seconds for one mutant's answers; a mutant that loops is killed by mutmut's timeout


def survivors(files: list[str], function: str | None) -> dict[str, str]:
    """Mutant name -> diff, of the survivors not classified equivalent."""
    from devtools.mutate import load_classified

    equivalent = {k for k, (cls, _) in load_classified().items() if cls == "equivalent"}
    state = json.loads(STATE.read_text())["mutants"]
    out = {}
    for name, m in sorted(state.items()):
        if m["status"] in ("killed", "timeout") or name in equivalent:
            continue
        module, func = name.split(".")[2], name.split(".")[3]
        if files and module not in files:
            continue
        if function and not func.startswith(f"x_{function}__mutmut_") and \
                not func.startswith(f"x{function}__mutmut_"):
            continue
        out[name] = m.get("diff", "")
    return out


def _answers(settings_list, constants, predicates, rows) -> list:
    from semantics_cases import constant_outcome, predicate_verdicts

    out = []
    for s in settings_list:
        for text in constants:
            try:
                o = constant_outcome(text, s)
                out.append(None if o is None else (type(o).__name__, str(getattr(o, "type", "")),
                                                   repr(getattr(o, "value", None))))
            except Exception as e:  # noqa: BLE001 - a test would fail with it
                out.append(("error", type(e).__name__))
        for text in predicates:
            try:
                out.append(predicate_verdicts(text, s, rows))
            except Exception as e:  # noqa: BLE001
                out.append(("error", type(e).__name__))
    return out


def _in_child(mutant: str, job) -> list | str:
    """The answers under ``mutant`` ('' for the code as it is), computed in a fork."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.environ["MUTANT_UNDER_TEST"] = mutant
            data = pickle.dumps(_answers(*job))
        except BaseException as e:  # noqa: BLE001
            data = pickle.dumps(f"error {type(e).__name__}")
        with os.fdopen(w, "wb") as f:
            f.write(data)
        os._exit(0)
    os.close(w)
    import select

    chunks = []
    with os.fdopen(r, "rb") as f:
        while True:
            ready, _, _ = select.select([f], [], [], TIMEOUT)
            if not ready:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                return "timeout"
            chunk = os.read(f.fileno(), 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    os.waitpid(pid, 0)
    return pickle.loads(b"".join(chunks)) if chunks else "error: no answer"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.mutant_cases", description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", help="files of planner/semantics (casts, parsing, ...)")
    parser.add_argument("--function", help="only the mutants of this function")
    parser.add_argument("--show", action="store_true", help="print the diff of each mutant still alive")
    args = parser.parse_args(argv)
    if not (WORK / "mutants").exists():
        raise SystemExit("no mutated copy of planner/semantics: run ./dev mutate --resume semantics first")
    wanted = survivors(args.files, args.function)
    sys.path[:0] = [str(WORK / "mutants"), str(ROOT / "tests")]
    os.environ.pop("MUTANT_UNDER_TEST", None)
    import planner.semantics  # noqa: F401 - the mutated copy, imported once before forking
    from record_spark_semantics import OUT, decode
    from semantics_cases import read_cases
    from test_spark_semantics import SETTINGS

    assert "build/mutation" in planner.semantics.__file__, planner.semantics.__file__
    recorded = json.loads(OUT.read_text())
    rows = [{c: decode(v) for c, v in r.items()} for r in recorded["settings"][0]["predicates"]["rows"]]
    constants, predicates = read_cases()
    job = (SETTINGS, constants, predicates, rows)
    base = _in_child("", job)
    if isinstance(base, str):
        raise SystemExit(f"the cases fail on the code as it is: {base}")
    alive = []
    for name, diff in wanted.items():
        got = _in_child(name, job)
        if got == base:
            alive.append((name, diff))
    print(f"{len(wanted) - len(alive)} of {len(wanted)} survivors told apart by {len(constants)} constants and "
          f"{len(predicates)} predicates; {len(alive)} alive")
    for name, diff in alive:
        print(f"  {name}")
        if args.show:
            print("    " + diff.replace("\n", "\n    "))
    return 0


if __name__ == "__main__":
    sys.exit(main())

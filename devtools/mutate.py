"""Mutation testing of the modules that decide what a query may skip (``./dev mutate``).

    ./dev mutate                    every module below, one after the other (about an hour on 2 cores)
    ./dev mutate pruning rewrite    only these
    ./dev mutate --report           rewrite the report from the last runs, running nothing
    ./dev mutate --resume semantics go on where the last run of semantics stopped

Why mutation testing: the planner's promise is that it never skips a partition or row group that
holds a matching row. A test suite keeps that promise only if it *fails* when the code breaks it;
mutmut breaks the code on purpose, one small change at a time (``<`` for ``<=``, ``True`` for
``False``, a dropped ``or``), and runs the pure tests each time. A mutant no test notices is a
hole in the suite, and the report says which kind of hole it is:

* **unsafe**: the mutant can skip a partition or row group that holds a matching row;
* **less pruning**: the mutant only reads more (a slower query, never a wrong answer);
* **equivalent**: the mutant computes the same thing (each one says why, in
  ``tests/mutation/classified.txt``).

mutmut (3.x) and not cosmic-ray: mutmut forks the test process for each mutant after importing
the suite once, so a mutant costs the few tests that reach the mutated function (it records which
tests call which function), not a fresh interpreter importing sqlglot, numpy and hypothesis.

Each module is mutated in its own scratch copy of the work tree (``build/mutation/<module>/``),
against only the pure test files that exercise it (``TARGETS``), with Hypothesis's deterministic
``mutation`` profile (fewer examples than CI, the same ones every run). The report goes to
``tests/mutation/report.md``; the verdicts behind it to ``tests/mutation/state/`` (``STATE``), from
which ``--resume`` goes on, on any clone. Mutation runs are CPU heavy: they run under ``nice -n 19``, one
mutant at a time (``--children N``: N), and never start a JVM (the selected tests are ``-m "not spark"``).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "mutation"
# What the runs found, kept in the repo: per module its results (``<module>.json``, which the report
# is written from) and mutmut's own verdicts per source file (``<module>/**.py.meta``), so that a
# fresh clone goes on where the last run stopped instead of starting hours of work again.
STATE = ROOT / "tests" / "mutation" / "state"
REPORT = ROOT / "tests" / "mutation" / "report.md"
CLASSIFIED = ROOT / "tests" / "mutation" / "classified.txt"
# the diff each classification was written for: mutmut numbers mutants within a function, so an
# edit to the function gives a classified name to another mutant
PINNED = ROOT / "tests" / "mutation" / "classified_diffs.json"
CLASSES = ("unsafe", "less pruning", "equivalent")

FIXTURE_TESTS = ("tests/test_pruning_fixtures.py",)


@dataclass(frozen=True)
class Target:
    """A module (or package) to mutate and the pure test files that should catch its mutants."""

    sources: tuple[str, ...]  # globs relative to the repo, as mutmut's only_mutate takes them
    tests: tuple[str, ...]


TARGETS: dict[str, Target] = {
    "pruning": Target(("planner/pruning/*",),
                      FIXTURE_TESTS + ("tests/test_hits.py", "tests/test_join_pruning.py", "tests/test_rewrite.py",
                                       "tests/test_aggregate_index.py")),
    "cnf": Target(("planner/cnf/*",),
                  FIXTURE_TESTS + ("tests/test_cnf_units.py", "tests/test_cnf_properties.py", "tests/test_golden_cnf.py",
                                   "tests/test_values.py", "tests/test_bind_units.py", "tests/test_semantics_recorded.py",
                                   "tests/test_reader.py", "tests/test_rewrite_cases.py",
                                   "tests/test_rewrite.py", "tests/test_cnf_edges.py",
                                   "tests/test_semantics_units.py", "tests/test_joins.py")),
    "semantics": Target(("planner/semantics/*",),
                        FIXTURE_TESTS + ("tests/test_semantics_units.py", "tests/test_semantics_recorded.py",
                                         "tests/test_spark_semantics.py", "tests/test_cnf_properties.py",
                                         "tests/test_golden_cnf.py")),
    "conditions": Target(("planner/emit/conditions.py",),
                         FIXTURE_TESTS + ("tests/test_conditions.py", "tests/test_emit.py", "tests/test_rewrite.py")),
    "rewrite": Target(("planner/rewrite/*",),
                      FIXTURE_TESTS + ("tests/test_rewrite_cases.py", "tests/test_rewrite.py", "tests/test_join_pruning.py",
                                       "tests/test_aggregate_index.py", "tests/test_aggregate_rewrite.py")),
}

# What mutmut's exit codes mean (mutmut.stats.status_by_exit_code, the ones a run can leave).
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 36: "timeout",
          24: "timeout", -24: "timeout", 152: "timeout", 255: "timeout", -9: "segfault", -11: "segfault",
          None: "not checked"}


def _tracked_files() -> list[str]:
    """Every file of the work tree git knows or would add (uncommitted tests included)."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                         check=True, capture_output=True, text=True).stdout
    return [p for p in out.split("\0") if p and (ROOT / p).is_file()]


def _mutmut_section(target: Target) -> str:
    lines = ["", "[mutmut]", "source_paths = planner", "only_mutate ="]
    lines += [f"    {g}" for g in target.sources]
    lines += ["also_copy =", "    devtools/", "    hive_integration/", "    benchmarks/", "    sql/"]
    lines += ["pytest_add_cli_args =", "    -p", "    no:cacheprovider", "    -m", "    not spark", "    -x", "    -q"]
    lines += ["pytest_add_cli_args_test_selection ="] + [f"    {t}" for t in target.tests if (ROOT / t).exists()]
    # the trampolines cost a little; a test run 15x slower than the clean one is a hang
    lines += ["timeout_multiplier = 15.0", "use_git_change_detection = false", ""]
    return "\n".join(lines)


def prepare(name: str, target: Target) -> Path:
    """A fresh scratch copy of the work tree with mutmut's settings for ``target``."""
    work = BUILD / name
    if work.exists():
        shutil.rmtree(work)
    for rel in _tracked_files():
        if rel.startswith(f"{STATE.relative_to(ROOT)}/"):  # kept verdicts are not sources: restore_state brings them
            continue
        dest = work / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dest)
    cfg = work / "setup.cfg"
    cfg.write_text(cfg.read_text() + _mutmut_section(target))
    return work


def _env(work: Path) -> dict[str, str]:
    env = dict(os.environ, PLANNER_TESTS="mutation", PYTHONHASHSEED="0")
    env.pop("PYTHONPATH", None)  # mutmut puts its mutants/ first; the original tree must not be importable
    return env


def _current_targets() -> dict[str, Target]:
    """TARGETS as the file says now: tests added while a long run goes on count for the next module."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_mutate_now", __file__)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return {k: Target(v.sources, v.tests) for k, v in module.TARGETS.items()}


def _metas(work: Path) -> list[Path]:
    """mutmut's verdict files of the mutated sources (not of anything under tests/ the copy holds)."""
    return sorted(m for m in (work / "mutants").rglob("*.py.meta")
                  if m.relative_to(work / "mutants").parts[0] != "tests")


def save_state(name: str, work: Path, result: dict) -> None:
    """``result`` and mutmut's verdicts (without its timings) into ``STATE``."""
    (STATE / name).mkdir(parents=True, exist_ok=True)
    (STATE / f"{name}.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    for meta in _metas(work):
        data = json.loads(meta.read_text())
        kept = {"exit_code_by_key": data.get("exit_code_by_key", {}),
                "hash_by_function_name": data.get("hash_by_function_name", {}),
                "type_check_error_by_key": {}, "durations_by_key": {}, "estimated_durations_by_key": {}}
        dest = STATE / name / meta.relative_to(work / "mutants")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(json.dumps(kept, indent=0, sort_keys=True) + "\n")


def restore_state(name: str, work: Path) -> int:
    """mutmut's verdicts of the last run into a fresh ``work``: mutmut keeps the verdict of every
    mutant whose function is unchanged (the same hash) and runs the others. Returns how many
    verdicts were restored."""
    restored = 0
    for meta in (STATE / name).rglob("*.py.meta") if (STATE / name).exists() else ():
        dest = work / "mutants" / meta.relative_to(STATE / name)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(meta, dest)
        restored += sum(v is not None for v in json.loads(meta.read_text())["exit_code_by_key"].values())
    return restored


def _last(name: str) -> dict | None:
    path = STATE / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def run(name: str, resume: bool = False, children: int = 1) -> dict:
    """Mutate ``name``. ``resume``: go on from the verdicts kept (``STATE``, or an interrupted run's
    scratch copy), running only the mutants without one."""
    target = _current_targets()[name]
    if resume and (BUILD / name / "mutants").exists():
        work = BUILD / name
    else:
        work = prepare(name, target)
        if resume:
            print(f"  {restore_state(name, work)} verdicts kept from the last run", flush=True)
    started = time.monotonic()
    mutmut = [sys.executable, "-c", "import sys; from mutmut.__main__ import cli; sys.exit(cli())"]
    log = work / "mutmut.log"
    with open(log, "w") as out:
        proc = subprocess.run(["nice", "-n", "19", *mutmut, "run", "--max-children", str(children)], cwd=work,
                              env=_env(work), stdout=out, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        print(f"{name}: mutmut exited {proc.returncode}; log {log}", file=sys.stderr)
    result = collect(name, work)
    result["seconds"] = round(time.monotonic() - started) + ((_last(name) or {}).get("seconds", 0) if resume else 0)
    save_state(name, work, result)
    return result


_DIFFS = """
import json, sys
from mutmut.mutation.diff_apply import get_diff_for_mutant
json.dump({name: get_diff_for_mutant(name, path=path) for path, name in json.load(sys.stdin)}, sys.stdout)
"""


def _sync(work: Path) -> None:
    """Bring the work tree up to date: sources changed since the run began are copied into ``work``
    (mutmut makes their mutants again, and forgets the results of the functions that changed);
    tests also into ``work/mutants``, where mutmut runs them."""
    for rel in _tracked_files():
        if rel == "setup.cfg":  # carries the run's [mutmut] section
            continue
        bases = (work, work / "mutants") if rel.startswith("tests/") else (work,)
        for base in bases:
            dest = base / rel
            if not dest.exists() or dest.read_bytes() != (ROOT / rel).read_bytes():
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / rel, dest)


def recheck(name: str, children: int = 1) -> dict:
    """Run again the mutants of ``name`` the last run did not kill (nor reach) and that are not
    classified equivalent, against the code and tests as they are now; then every mutant without
    a result (those of functions changed since, made anew)."""
    last = _last(name)
    if last is None:
        raise SystemExit(f"no run of {name} to recheck: run ./dev mutate {name} first")
    work = BUILD / name
    if not (work / "mutants").exists():
        prepare(name, _current_targets()[name])
        restore_state(name, work)
    equivalent = {k for k, (cls, _) in load_classified().items() if cls == "equivalent"}
    again = [k for k, m in last["mutants"].items() if m["status"] not in ("killed", "timeout") and k not in equivalent]
    _sync(work)
    # mutmut maps tests to functions once and afterwards only for new tests: a function added or
    # renamed since would have no tests ("no tests"). Map them all again.
    (work / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
    cfg = work / "setup.cfg"
    text = cfg.read_text()
    cfg.write_text(text[:text.index("\n[mutmut]")] + _mutmut_section(_current_targets()[name]))
    started = time.monotonic()
    mutmut = [sys.executable, "-c", "import sys; from mutmut.__main__ import cli; sys.exit(cli())"]
    with open(work / "mutmut-recheck.log", "w") as out:
        for names in (again, []):  # named: run even with a result; none named: only those without one
            subprocess.run(["nice", "-n", "19", *mutmut, "run", "--max-children", str(children), *names], cwd=work,
                           env=_env(work), stdout=out, stderr=subprocess.STDOUT)
    result = collect(name, work)
    result["seconds"] = last.get("seconds", 0) + round(time.monotonic() - started)
    save_state(name, work, result)
    return result


def collect(name: str, work: Path) -> dict:
    """Per mutant its status and, for every mutant not killed, the diff mutmut shows."""
    mutants: dict[str, dict] = {}
    paths: dict[str, str] = {}
    for meta in _metas(work):
        data = json.loads(meta.read_text())
        source = str(meta.relative_to(work / "mutants"))[:-len(".meta")]
        for key, code in data.get("exit_code_by_key", {}).items():
            mutants[key] = {"status": STATUS.get(code, "suspicious")}
            paths[key] = source
    wanted = [(paths[k], k) for k, m in mutants.items() if m["status"] != "killed"]
    if wanted:
        diffs = subprocess.run([sys.executable, "-c", _DIFFS], cwd=work, env=_env(work), input=json.dumps(wanted),
                               capture_output=True, text=True, check=True).stdout
        for key, diff in json.loads(diffs).items():
            mutants[key]["diff"] = _diff_body(diff)
    target = _current_targets()[name]
    return {"module": name, "sources": list(target.sources), "tests": list(target.tests), "mutants": mutants}


def _diff_body(text: str) -> str:
    """The changed lines of a mutant's diff (``-``/``+`` lines, the file headers left out)."""
    keep = [ln for ln in text.splitlines()
            if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    return "\n".join(keep)


# ---- classification of the survivors -------------------------------------------------------------
def load_classified() -> dict[str, tuple[str, str]]:
    """``tests/mutation/classified.txt``: per surviving mutant, its class and why.

        planner.pruning.hits.x__clause_may_hold__mutmut_7 | equivalent | the loop breaks early either way
    """
    out: dict[str, tuple[str, str]] = {}
    if not CLASSIFIED.exists():
        return out
    for line in CLASSIFIED.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        key, cls, why = (p.strip() for p in line.split("|", 2))
        if cls not in CLASSES:
            raise ValueError(f"{CLASSIFIED}: {key}: class must be one of {CLASSES}, not {cls!r}")
        out[key] = (cls, why)
    return out


def _fingerprint(diff: str) -> str:
    return hashlib.sha256(diff.encode()).hexdigest()[:16]


def stale_classifications(results: list[dict], pin: bool = True) -> set[str]:
    """Classified survivors whose diff is not the one their classification was written for (they
    count as unclassified until read again). A classification seen for the first time is pinned to
    the survivor's diff now (``tests/mutation/classified_diffs.json``), unless ``pin`` is False."""
    classified = load_classified()
    pins = json.loads(PINNED.read_text()) if PINNED.exists() else {}
    stale = set()
    for r in results:
        for key, m in r["mutants"].items():
            if key not in classified or m["status"] not in ("survived", "no tests", "suspicious"):
                continue
            now = _fingerprint(m.get("diff", ""))
            if pins.setdefault(key, now) != now:
                stale.add(key)
    if pin:
        PINNED.write_text(json.dumps(dict(sorted(pins.items())), indent=0) + "\n")
    return stale


def report(results: list[dict], stale: set[str] = frozenset()) -> str:
    classified = {k: v for k, v in load_classified().items() if k not in stale}
    lines = ["# Mutation testing of the pruning core", "",
             "Written by `./dev mutate` (devtools/mutate.py, docs/testing.md); the classification of the",
             "survivors is `tests/mutation/classified.txt`. *Score* = killed ÷ (mutants − equivalent), timeouts",
             "counted as killed; *unsafe* mutants may skip a partition or row group that holds a matching row,",
             "*less pruning* ones only read more, *unclassified* ones are still to be read. *No tests*: no",
             "selected test reaches the mutated function. Each module ran against its own pure test files",
             "(listed with its survivors), Hypothesis at a fifth of the CI examples.",
             "*Not checked*: the run was stopped before it reached them; the score counts checked mutants only.",
             "", "| module | mutants | checked | killed | survived | unsafe | less pruning | equivalent | unclassified "
             "| no tests | score |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    details: list[str] = []
    for r in results:
        ms = r["mutants"]
        count = {s: sum(1 for m in ms.values() if m["status"] == s) for s in set(STATUS.values()) | {"suspicious"}}
        survivors = {k: m for k, m in ms.items() if m["status"] in ("survived", "no tests", "suspicious")}
        by_class = {c: [k for k in survivors if classified.get(k, ("",))[0] == c] for c in CLASSES}
        unclassified = [k for k in survivors if k not in classified]
        killed = count["killed"] + count["timeout"] + count["segfault"]
        checked = len(ms) - count["not checked"]
        denominator = checked - len(by_class["equivalent"])
        score = 100.0 * killed / denominator if denominator else 100.0
        lines.append(f"| {r['module']} (`{', '.join(r['sources'])}`) | {len(ms)} | {checked} | {killed} | "
                     f"{len(survivors)} | {len(by_class['unsafe'])} | {len(by_class['less pruning'])} | "
                     f"{len(by_class['equivalent'])} | {len(unclassified)} | {count['no tests']} | {score:.1f} % |")
        if survivors:
            details += ["", f"## {r['module']}: surviving mutants", "",
                        "Tests: " + ", ".join(f"`{t}`" for t in r["tests"]), ""]
            for k in sorted(survivors, key=_natural):
                cls, why = classified.get(k, ("unclassified", "classified for another diff: read it again"
                                              if k in stale else ""))
                details += [f"- `{k}` ({survivors[k]['status']}): **{cls}**" + (f": {why}" if why else ""),
                            "  ```diff", *("  " + ln for ln in survivors[k].get("diff", "").splitlines()), "  ```"]
    notes = REPORT.with_name("notes.md")
    if notes.exists():  # what the runs left open, written by hand
        lines += ["", notes.read_text().rstrip()]
    return "\n".join(lines + details) + "\n"


def _natural(key: str):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", key)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="./dev mutate", description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", metavar="module", help=f"any of {', '.join(TARGETS)} (default: all)")
    parser.add_argument("--report", action="store_true", help="only rewrite the report from the last runs")
    parser.add_argument("--children", type=int, default=1,
                        help="mutants run at once (default 1: the other core stays free for other work)")
    parser.add_argument("--resume", action="store_true",
                        help="go on with an interrupted run: mutants already checked keep their result")
    parser.add_argument("--recheck", action="store_true",
                        help="run again only the survivors of the last run, against the current tests")
    parser.add_argument("--collect", action="store_true",
                        help="read the results of runs already done in build/mutation/ (no new run)")
    args = parser.parse_args(argv)
    unknown = [m for m in args.modules if m not in TARGETS]
    if unknown:
        parser.error(f"unknown module {unknown[0]!r}: choose from {', '.join(TARGETS)}")
    names = args.modules or list(TARGETS)
    if args.recheck:
        for name in names:
            print(f"rechecking the survivors of {name} ...", flush=True)
            recheck(name, args.children)
    elif args.collect:
        for name in names:
            if (BUILD / name / "mutants").exists():
                save_state(name, BUILD / name, collect(name, BUILD / name))
    elif not args.report:
        for name in names:
            print(f"mutating {name} ({', '.join(TARGETS[name].sources)}) ...", flush=True)
            r = run(name, resume=args.resume, children=args.children)
            print(f"  {len(r['mutants'])} mutants in {r['seconds']} s", flush=True)
    results = [r for r in map(_last, TARGETS) if r is not None]
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(report(results, stale_classifications(results)))
    print(f"report: {REPORT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

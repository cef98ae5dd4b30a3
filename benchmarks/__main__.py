"""``./dev bench [name …]``: run the benchmark scripts in turn (each prints its own table).

Names: ``analyze``, ``advise``, ``corpus`` (issue 12: real HiveQL files, CLI speed), ``tpch`` (issue #5, SF 1,
about 45 min on 2 cores), ``build`` (issue #14: build cost against a copy, the statistics pass, the z-value;
SF 1). Without a
name, all of them run; arguments after ``--`` go to the last script named (e.g.
``./dev bench tpch -- --quick``).
"""
import runpy
import sys

SCRIPTS = {"analyze": "benchmarks.analyze_bench", "advise": "benchmarks.advise_bench", "corpus": "benchmarks.corpus_bench",
           "tpch": "benchmarks.tpch_bench", "build": "benchmarks.tpch_build"}

args = sys.argv[1:]
extra: list[str] = []
if "--" in args:
    extra = args[args.index("--") + 1:]
    args = args[:args.index("--")]
unknown = [a for a in args if a not in SCRIPTS]
if unknown:
    sys.exit(f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(SCRIPTS)}")
names = args or list(SCRIPTS)
for i, name in enumerate(names):
    module = SCRIPTS[name]
    print(f"== {module}", flush=True)
    sys.argv = [module] + (extra if i == len(names) - 1 else [])
    try:
        runpy.run_module(module, run_name="__main__")
    except SystemExit as e:
        if e.code:
            sys.exit(e.code)

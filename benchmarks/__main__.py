"""``./dev bench``: run every benchmark script in turn (each prints its own table)."""
import runpy
import sys

for name in ("benchmarks.analyze_bench", "benchmarks.advise_bench"):
    print(f"== {name}", flush=True)
    try:
        runpy.run_module(name, run_name="__main__")
    except SystemExit as e:
        if e.code:
            sys.exit(e.code)

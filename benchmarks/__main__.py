"""``./dev bench [name …] [-- args]``: list the benchmarks, or run the ones named in turn.

Without a name it lists them (what each measures, where its results go). ``all`` runs every one;
arguments after ``--`` go to the last script named (``./dev bench tpch -- --quick``). Each script
also runs on its own: ``.venv/bin/python -m benchmarks.<module> --help``. docs/benchmarks.md says
how each one works and how to reproduce its result file.
"""
import runpy
import sys

#: name -> (module, what it measures, its result files in benchmarks/results/)
SCRIPTS = {
    "analyze": ("benchmarks.analyze_bench", "`planner analyze` of 100 to 10,000 queries, CLI start included",
                "analyze.md"),
    "advise": ("benchmarks.advise_bench", "`advise` time against workload size and sample size (no Spark)",
               "advise.md"),
    "corpus": ("benchmarks.corpus_bench", "real HiveQL files read, queries lost, rewrite/explain/analyze CLI time",
               "corpus.md"),
    "tpch": ("benchmarks.tpch_bench", "every layout of TPC-H lineitem on Spark: rows, bytes, files, wall time "
             "(SF 1: about 45 min)", "tpch_sf1.md, issue11/tpch_sf1.md"),
    "build": ("benchmarks.tpch_build", "what each layout costs to build against a plain copy; the statistics pass",
              "tpch_build_sf1.md"),
    "tree-key": ("benchmarks.tree_key_bench", "a tree order's sort key written three ways", "tree_key_sf1.md"),
    "page-size": ("benchmarks.page_size_bench", "one layout with 20,000- to 500-row Parquet pages",
                  "page_size_sf1.md"),
    "joins": ("benchmarks.tpch_joins", "whole TPC-H join queries: pruning through joins, DPP/bloom on and off",
              "tpch_joins_sf1.md"),
    "layout-alone": ("benchmarks.layout_alone", "the laid-out table against the table as loaded on queries it "
                     "cannot prune, Spark alone: time, read tasks, shuffled bytes (after `joins`)",
                     "layout_alone_sf1.md"),
    "rewrite-profile": ("benchmarks.rewrite_profile", "where the rewrite of a join query spends its time "
                        "(after `joins`)", "rewrite_profile_sf1.md"),
    "drift": ("benchmarks.drift_bench", "a drifting workload replayed on the cost model: static, full re-advise, "
              "partial re-layout", "drift.md"),
    "drift-check": ("benchmarks.drift_check", "one drift point on Spark: rows read and rewritten, answers",
                    "drift_spark_sf1.md"),
    "drift-replay": ("benchmarks.drift_replay_check", "the drift replay's layouts on Spark, read by their queries",
                     "drift_replay_sf1.md"),
    "issue10": ("benchmarks.issue10_e2e", "advise, apply and planner.sql on the types and time zones of issue 10",
                "issue10_e2e.md"),
}


def listing() -> str:
    width = max(map(len, SCRIPTS))
    lines = ["benchmarks (./dev bench NAME [-- ARGS]; `all` runs every one; docs/benchmarks.md):"]
    lines += [f"  {name:<{width}}  {what}\n  {'':<{width}}  -> benchmarks/results/{files} ({module})"
              for name, (module, what, files) in SCRIPTS.items()]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    args, extra = argv, []
    if "--" in args:
        args, extra = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    if not args or args in (["--list"], ["-h"], ["--help"], ["help"]):
        print(listing())
        return 0
    names = list(SCRIPTS) if args == ["all"] else args
    unknown = [a for a in names if a not in SCRIPTS]
    if unknown:
        print(f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(SCRIPTS)}", file=sys.stderr)
        return 2
    for i, name in enumerate(names):
        module = SCRIPTS[name][0]
        print(f"== {module}", flush=True)
        sys.argv = [module] + (extra if i == len(names) - 1 else [])
        try:
            runpy.run_module(module, run_name="__main__")
        except SystemExit as e:
            if e.code:
                return e.code if isinstance(e.code, int) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

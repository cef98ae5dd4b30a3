"""Write a workload file.

    python -m devtools.workload_gen tpch|q6|adhoc -n N --seed S [--scale-factor SF] [-o FILE]
    python -m devtools.workload_gen golden [-o DIR]      # sql/tpch/qNN.sql golden files

Without ``-o`` the workload goes to standard output.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import GENERATORS, workload_file_text
from .tpch import ALL_TEMPLATES, golden_query


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m devtools.workload_gen", description=__doc__.split("\n\n")[0])
    ap.add_argument("kind", choices=[*GENERATORS, "golden"], help="workload generator, or golden TPC-H files")
    ap.add_argument("-n", type=int, default=100, help="number of queries (default 100)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ap.add_argument(
        "--scale-factor", type=float, default=1.0, help="TPC-H scale factor for key ranges (q6, adhoc; default 1)"
    )
    ap.add_argument("-o", "--output", help="output file (golden: output directory, default sql/tpch)")
    args = ap.parse_args(argv)

    if args.kind == "golden":
        out_dir = Path(args.output or "sql/tpch")
        out_dir.mkdir(parents=True, exist_ok=True)
        for name in ALL_TEMPLATES:
            (out_dir / f"{name}.sql").write_text(golden_query(name), encoding="utf-8")
        print(f"wrote {len(ALL_TEMPLATES)} files to {out_dir}", file=sys.stderr)
        return 0

    if args.n < 0:
        ap.error("-n must be >= 0")
    text = workload_file_text(args.kind, args.n, args.seed, scale_factor=args.scale_factor)
    if args.output:
        path = Path(args.output)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

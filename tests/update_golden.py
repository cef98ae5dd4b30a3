"""Regenerate the golden files from what the code produces now: ``./dev golden``.

    ./dev golden                      (or: python tests/update_golden.py)
    git diff tests/golden/            read every change before committing it

The golden tests themselves never write: they compare, and fail on any difference. A golden file
is only as good as the reading its diff got.
"""
from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
sys.path[:0] = [str(TESTS), str(TESTS.parent)]  # the test modules import each other as top-level modules


def main() -> int:
    import test_aggregate_index
    import test_aggregate_rewrite
    import test_emit
    import test_golden_cnf
    import test_joins

    written: dict[Path, str] = {g.path: test_golden_cnf.regenerated(g) for g in test_golden_cnf.GOLDENS}
    written[test_joins.GOLDEN] = test_joins.tpch_golden()
    written[test_aggregate_index.GOLDEN] = test_aggregate_index.aggregate_golden()
    written[test_aggregate_rewrite.GOLDEN] = test_aggregate_rewrite.explain_golden()
    for dialect in test_emit.DIALECTS:
        written.update({test_emit.GOLDEN / name: text for name, text in test_emit.emitted(dialect).items()})
    for path, text in written.items():
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        print(f"{'unchanged' if old == text else 'written  '} {path.relative_to(TESTS.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

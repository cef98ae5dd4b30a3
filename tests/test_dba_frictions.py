"""The frictions a DBA met on the way to a production table (issue 34), one test each.

Each test pins the fixed behaviour and fails on the behaviour the issue reports (quoted in the
test's docstring). The ones that need Spark live with the Spark tests (``test_production.py``).
"""
from __future__ import annotations

from planner.advice.layout_status import _break_even
from planner.advice.ranking import describe_layout
from planner.cnf.valueset import Interval, ValueSet
from planner.model.layout import Layout, Partition
from planner.model.wording import plural
from planner.semantics.kinds import Kind


def _two_way() -> Layout:
    low = ValueSet((Interval(None, 5, False, True),), False, Kind.INTEGER)
    high = ValueSet((Interval(5, None, False, False),), True, Kind.INTEGER)
    return Layout("t", "hand", (Partition(1, (("x", low),)), Partition(2, (("x", high),))),
                  kinds=(("x", Kind.INTEGER),))


def test_counts_are_worded_in_the_singular_for_one():
    """Was: "filtered by 1 scans", "1 partitions"."""
    assert plural(1, "scan") == "1 scan"
    assert plural(2, "scan") == "2 scans"
    assert plural(1_000, "query", "queries") == "1,000 queries"


def test_a_whole_table_layout_is_described_without_a_dash():
    """Was: "none: 1 partitions on (-)"."""
    whole = Layout("t", "none", (Partition(1, ()),))
    assert describe_layout(whole).startswith("none: 1 partition (the whole table), order")
    assert "(-)" not in whole.describe()


def test_partition_counts_leave_out_the_catch_all_everywhere():
    """Was: explain said "2 of 9 partitions" where status said 8: one counted the catch-all
    (partition 0), the other did not. Every report now counts ``Layout.partition_count``."""
    layout = _two_way()
    assert layout.partition_count == 2
    assert layout.cut_text() == "2 partitions on (x)"


def test_a_rewrite_that_never_pays_back_says_so():
    """Was: "break-even after never queries"."""
    assert _break_even(None) == "never pays back: it gains nothing on queries like these"
    assert _break_even(12.0) == "break-even after 12.0 queries like these"


def test_queries_are_named_by_statement_number_and_first_line_not_a_hash():
    """Was: template hashes (``T1b5b9d59``) where a user expects query names."""
    from planner.workload import parse_workload

    wl = parse_workload("SELECT * FROM t WHERE x < 3;\n-- Q6: revenue change\nSELECT count(*) FROM t\n  WHERE x > 7;\n")
    first, second = wl.queries
    assert first.template.startswith("T")  # the grouping key is still a hash of the shape
    assert first.label == "statement 1 (SELECT * FROM t WHERE x < 3)"
    assert second.label == "statement 2 (Q6: revenue change)"


def test_the_advice_names_queries_not_template_hashes():
    from dataclasses import replace

    from planner.advice.ranking import advice_text, advise
    from planner.analysis.table_analysis import analyze_table
    from planner.workload import parse_workload
    from test_guard import COLUMNS, PARAMS, stats_of

    wl = parse_workload("SELECT * FROM t WHERE x BETWEEN 1 AND 2;\nSELECT * FROM t WHERE x BETWEEN 5 AND 6;\n")
    k = list(range(1, 121))
    text = advice_text(advise(wl, analyze_table(wl, "t", COLUMNS), stats_of(k, [v % 4 for v in k]),
                              replace(PARAMS, allow_regressions=True)))
    assert "statement 1 (SELECT * FROM t WHERE x BETWEEN 1 AND 2) and 1 like it" in text
    assert wl.queries[0].template not in text


def test_robustness_probes_the_columns_the_workload_filters_the_user_names_or_the_table_is_sorted_by():
    """Was: a free-text column no query filters decided the default layout through robustness
    probes (``note in ['n640777', 'n732730')``). The column the table is clustered on is probed
    though no query filters it: its load order serves lookups the workload file may not show."""
    from planner.advice.ranking import advise
    from planner.analysis.table_analysis import analyze_table
    from planner.costmodel.robustness import probe_columns
    from planner.costmodel.sample import SampleFrame
    from planner.workload import parse_workload
    from test_guard import COLUMNS, PARAMS, stats_of

    wl = parse_workload("SELECT * FROM t WHERE x BETWEEN 1 AND 2;")
    analysis = analyze_table(wl, "t", COLUMNS)
    k = list(range(1, 121))
    stats = stats_of(k, [v % 4 for v in k])
    sample = SampleFrame(stats.sample)
    assert probe_columns(analysis, sample) == ["x"]
    assert probe_columns(analysis, sample, ("K",)) == ["k", "x"]
    guard = advise(wl, analysis, stats, PARAMS).guard
    assert {q.column for q in guard.queries} == {"k", "x"}  # the table is stored in k's order
    shuffled = [(v * 37) % 121 for v in k]
    guard = advise(wl, analysis, stats_of(shuffled, [v % 4 for v in shuffled]), PARAMS).guard
    assert {q.column for q in guard.queries} == {"x"}  # k, in no order and filtered by no query


def test_a_joined_table_missing_from_the_catalog_is_one_calm_line():
    """Was: ``./dev run`` printed TABLE_OR_VIEW_NOT_FOUND errors for ``tpch.part`` in its normal
    run: the workload joins lineitem to part, which the demo never loads, and the sample join
    queried it anyway."""
    from hive_integration.spark.join_ranges import usable_columns
    from planner.model.join_paths import Hop, JoinColumn, JoinPath

    class Catalog:
        def tableExists(self, name):
            return name != "tpch.part"

    class Spark:
        catalog = Catalog()

        def sql(self, text):
            raise AssertionError(f"no query on a missing table: {text}")

    said = []
    part = JoinColumn(JoinPath((Hop("l_partkey", "tpch.part", "p_partkey"),)), "p_brand")
    assert usable_columns(Spark(), "tpch.lineitem", [part], said.append) == []
    assert said == ["join column tpch.part(p_partkey = l_partkey).p_brand not recorded: tpch.part is not a table "
                    "in the catalog"]


def test_the_reports_markdown_has_no_nested_backticks(tmp_path):
    """Was: ``creates `\\`tpch\\`.\\`lineitem__planner_new\\``` in report.md: Hive's quoted names inside
    a one-backtick code span, which Markdown renders as broken pieces."""
    import datetime as dt

    from planner.emit.advice_folder import _code, write_advice_folder

    assert _code("`tpch`.`t`") == "`` `tpch`.`t` ``"
    assert _code("tpch.t") == "`tpch.t`"
    layout = Layout("tpch.lineitem", "hand", _two_way().partitions, kinds=_two_way().kinds)
    out = write_advice_folder(tmp_path / "advice", layout, {"x": "int", "y": "string"},
                              when=dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc))
    report = (out / "report.md").read_text()
    assert "`` `tpch`.`lineitem__planner_new` ``" in report
    assert "``tpch`" not in report and "`tpch`.`lineitem__before" in report  # the backup's name too


def test_advise_without_table_leaves_a_small_table_alone():
    """Was: ``advise`` without ``--table`` advised a 200 kB table: its scans got 4x faster, which
    saves milliseconds, not worth rewriting a table."""
    from planner.cli.advise import DEFAULT_MIN_GAIN, DEFAULT_MIN_SAVING, too_small_a_gain

    tiny = too_small_a_gain(0.020, 0.005, DEFAULT_MIN_GAIN, DEFAULT_MIN_SAVING)
    assert tiny is not None and "4.00x faster" in tiny and "--min-saving 1" in tiny
    assert too_small_a_gain(40.0, 10.0, DEFAULT_MIN_GAIN, DEFAULT_MIN_SAVING) is None  # a big table: advised
    assert "below --min-gain" in too_small_a_gain(40.0, 38.0, DEFAULT_MIN_GAIN, DEFAULT_MIN_SAVING)
    assert too_small_a_gain(0.020, 0.005, DEFAULT_MIN_GAIN, 0.0) is None  # --min-saving 0 advises it

"""``./dev mutate`` keeps its verdicts in the repo (``tests/mutation/state/``), so that a fresh
clone goes on where the last run stopped: what is saved, and what a fresh scratch copy gets back."""
from __future__ import annotations

import json

from devtools import mutate


def _meta(codes: dict) -> dict:
    return {"exit_code_by_key": codes, "hash_by_function_name": {"x_f": "abc"}, "type_check_error_by_key": {},
            "durations_by_key": {k: 1.5 for k in codes}, "estimated_durations_by_key": {k: 2.0 for k in codes}}


def test_verdicts_survive_a_fresh_scratch_copy(tmp_path, monkeypatch):
    monkeypatch.setattr(mutate, "STATE", tmp_path / "state")
    run = tmp_path / "run" / "mutants" / "planner" / "semantics"
    run.mkdir(parents=True)
    codes = {"planner.semantics.casts.x_f__mutmut_1": 1, "planner.semantics.casts.x_f__mutmut_2": 0,
             "planner.semantics.casts.x_f__mutmut_3": None}
    (run / "casts.py.meta").write_text(json.dumps(_meta(codes)))
    result = {"module": "semantics", "sources": [], "tests": [], "mutants": {}}
    mutate.save_state("semantics", tmp_path / "run", result)

    kept = tmp_path / "state" / "semantics" / "planner" / "semantics" / "casts.py.meta"
    saved = json.loads(kept.read_text())
    assert saved["exit_code_by_key"] == codes and saved["hash_by_function_name"] == {"x_f": "abc"}
    assert saved["durations_by_key"] == {}  # timings are the machine's, not the verdict's
    assert mutate._last("semantics") == result

    fresh = tmp_path / "fresh"
    assert mutate.restore_state("semantics", fresh) == 2  # two verdicts, one mutant never run
    back = json.loads((fresh / "mutants" / "planner" / "semantics" / "casts.py.meta").read_text())
    # every key mutmut's SourceFileMutationData.load pops is there
    assert set(back) == {"exit_code_by_key", "hash_by_function_name", "type_check_error_by_key",
                         "durations_by_key", "estimated_durations_by_key"}
    assert back["exit_code_by_key"] == codes


def test_nothing_kept_restores_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(mutate, "STATE", tmp_path / "state")
    assert mutate.restore_state("cnf", tmp_path / "fresh") == 0
    assert mutate._last("cnf") is None


def test_the_report_is_written_from_the_kept_results():
    """Every module the report lists has its results in the repo."""
    listed = [r["module"] for r in map(mutate._last, mutate.TARGETS) if r is not None]
    assert {"pruning", "cnf", "conditions", "rewrite"} <= set(listed)
    results = [mutate._last(m) for m in listed]
    assert mutate.report(results, mutate.stale_classifications(results, pin=False)) == mutate.REPORT.read_text()


def test_a_classification_holds_only_for_the_diff_it_was_written_for(tmp_path, monkeypatch):
    monkeypatch.setattr(mutate, "PINNED", tmp_path / "pins.json")
    monkeypatch.setattr(mutate, "load_classified", lambda: {"m.x_f__mutmut_1": ("equivalent", "why")})
    survivor = {"module": "m", "sources": [], "tests": [],
                "mutants": {"m.x_f__mutmut_1": {"status": "survived", "diff": "-a\n+b"}}}
    assert mutate.stale_classifications([survivor]) == set()  # first seen: pinned
    assert mutate.stale_classifications([survivor]) == set()
    survivor["mutants"]["m.x_f__mutmut_1"]["diff"] = "-a\n+c"  # the function changed: another mutant
    assert mutate.stale_classifications([survivor]) == {"m.x_f__mutmut_1"}
    assert "read it again" in mutate.report([survivor], {"m.x_f__mutmut_1"})

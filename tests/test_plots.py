"""The benchmark plots redraw from the raw JSON a run keeps, each layout in one colour everywhere."""
from __future__ import annotations

from pathlib import Path

from benchmarks.tpch_plots import data_from_json, draw, layout_colors

RESULTS = Path(__file__).resolve().parent.parent / "benchmarks" / "results" / "tpch_sf1.json"


def test_plots_redraw_from_the_kept_json(tmp_path):
    data = data_from_json(RESULTS)
    files = draw(data, tmp_path, "t")
    assert files == ["t_rows.png", "t_wall.png", "t_est_vs_measured.png", "t_templates.png", "t_build.png"]
    assert all((tmp_path / f).stat().st_size > 10_000 for f in files)
    assert data.pick in data.template_keys and data.template_keys[0] in ("current", "copy")  # the baseline first


def test_one_colour_per_layout():
    keys = [f"k{i}" for i in range(25)]
    colors = layout_colors(keys)
    assert len(set(colors.values())) == 25
    assert layout_colors(keys[:5]) == {k: colors[k] for k in keys[:5]}  # a layout keeps its colour

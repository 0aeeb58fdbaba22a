"""Small pictures and numbers: array_stats.py, svg.py and chart.py of nbtape.notebook.widgets."""
import re
import time
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from nbtape.notebook.widgets import array_stats, chart, svg


def parse(s):
    """Every picture must be well-formed XML (a browser draws nothing otherwise)."""
    return ET.fromstring(s)


# array_stats ---------------------------------------------------------------------------
def test_describe_large_array_uses_a_sample_and_counts_nonfinite():
    a = np.arange(1_000_000, dtype=float)
    a[5] = np.nan
    text = array_stats.describe_array(a)
    assert text.startswith("mean ") and "range [0.0, 999990.0]" in text
    small = np.array([1.0, np.inf, 3.0, 4.0, 5.0, 6.0, 7.0])
    assert array_stats.describe_array(small).endswith("1 non-finite")
    assert array_stats.describe_array(np.full(10, np.nan)) == "no finite values"
    assert array_stats.describe_array(np.zeros((0, 3))) == "[]"
    assert array_stats.describe_array(np.array([1 + 1j] * 8)).startswith("|·| mean 1.414")


def test_sample_is_evenly_strided_and_bounded():
    values, note = array_stats.sample(np.arange(1_000_001.0))
    assert values.size <= array_stats.SAMPLE and values[0] == 0
    assert note == f"statistics from {values.size:,} of 1,000,001 values"


def test_norm_and_history_point():
    assert array_stats.norm(np.array([[3, 4]], dtype=np.int8)) == 5.0
    assert array_stats.history_point(np.array([[7.0]])) == 7.0
    assert array_stats.history_point(np.array(3 + 4j)) == 5.0


def test_decimate_keeps_spikes_and_gaps():
    v = np.zeros(10_000)
    v[1234] = 50.0
    v[7777] = np.nan
    idx, vals = array_stats.decimate(v, 100)
    assert len(idx) <= 300 and idx == sorted(idx)
    assert 1234 in idx and 50.0 in vals
    assert 7777 in idx and any(np.isnan(vals))


# svg -------------------------------------------------------------------------------------
def test_sparkline_splits_at_nan_and_marks_a_nonfinite_last_value():
    s = svg.sparkline([1.0, 2.0, np.nan, 3.0, 4.0])
    parse(s)
    assert s.count("<polyline") == 2
    t = svg.sparkline([1.0, 2.0, np.inf])
    assert ">inf<" in t
    parse(svg.sparkline([5.0]))          # one point: a dot, no division by zero
    parse(svg.sparkline([2.0, 2.0, 2.0]))


def test_sparkline_of_a_long_history_stays_small():
    s = svg.sparkline(np.sin(np.arange(100_000) / 100.0), width=96)
    points = re.search(r'points="([^"]*)"', s).group(1).split()
    assert len(points) <= 2 * 48 + 2
    assert len(s) < 5000


def test_labels_are_escaped():
    s = svg.sparkline([1.0, 2.0], label='<script>alert("x")</script>')
    assert "<script>" not in s
    parse(s)
    c = chart.line_chart([0, 1], [1, 2], title="<b>&", ylabel="a<b", xlabel="x>y")
    assert "<b>&" not in c
    parse(c)


def test_diverging_colours_are_symmetric_and_saturate():
    assert svg.diverging(2.0, 1.0) == svg.diverging(1.0, 1.0) == svg.RED.lower()
    assert svg.diverging(0.5, 1.0) != svg.diverging(-0.5, 1.0)
    assert svg.diverging(1.0, 0.0) == "#ffffff"


def test_heatmap_cells_titles_and_refusal_of_big_arrays():
    s = svg.heatmap(np.array([1.0, np.nan, -2.0]), scale=False)
    parse(s)
    assert s.count("<rect") == 3 and "[1] = nan" in s and "#d1d5db" in s
    with pytest.raises(ValueError, match="summarise it first"):
        svg.heatmap(np.zeros((100, 100)))


def test_a_heat_map_shows_its_colour_scale_not_only_in_a_tooltip():
    s = svg.heatmap(np.array([[0.5, -2.0], [1.0, 0.0]]))
    root = parse(s)
    ns = "{http://www.w3.org/2000/svg}"
    scale = [g for g in root.iter(ns + "g") if g.get("class") == "nbtape-colour-scale"]
    assert len(scale) == 1
    labels = [t.text for t in scale[0].iter(ns + "text")]
    assert labels == ["-2.0", "0", "2.0"]                  # ends are -max and +max
    assert all(float(t.get("font-size")) >= svg.SMALLEST_PX for t in scale[0].iter(ns + "text"))
    fills = [r.get("fill") for r in scale[0].iter(ns + "rect") if r.get("fill") != "none"]
    assert fills[0] == svg.diverging(-1, 1) and fills[-1] == svg.diverging(1, 1)
    assert fills[len(fills) // 2] == "#ffffff"
    # the scale sits under the cells, inside the picture
    assert float(root.get("height")) > 2 * 20 and float(root.get("width")) >= svg.SCALE_WIDTH


def test_sparklines_and_histograms_are_large_enough_to_read():
    for s in (svg.sparkline([1.0, 3.0, 2.0]), svg.histogram(np.arange(10.0))):
        root = parse(s)
        assert float(root.get("width")) >= 160 and float(root.get("height")) >= 40, s[:120]


def test_histogram_ignores_nonfinite_and_handles_constant_data():
    s = svg.histogram(np.array([1.0, 1.0, np.nan, np.inf]), bins=4)
    parse(s)
    assert "histogram of 2 values" in s
    assert "no finite values" in svg.histogram(np.array([np.nan]))


def test_blocks_text_sparkline():
    assert svg.blocks([]) == ""
    assert svg.blocks([3.0, 3.0]) == "▄▄"
    assert len(svg.blocks(range(1000), width=16)) == 16


# chart ----------------------------------------------------------------------------------
@pytest.mark.parametrize("lo, hi", [(0, 1), (-3.2, 7.9), (1e-6, 3e-6), (100, 100000), (-5, -5)])
def test_nice_ticks_cover_the_range_with_round_steps(lo, hi):
    ticks = chart.nice_ticks(lo, hi)
    assert len(ticks) >= 2
    steps = np.diff(ticks)
    assert np.allclose(steps, steps[0])
    mantissa = steps[0] / 10 ** np.floor(np.log10(steps[0]))
    assert any(np.isclose(mantissa, m) for m in (1, 2, 5))
    if lo != hi:
        assert ticks[0] >= lo - 1e-12 and ticks[-1] <= hi + 1e-12
        assert ticks[-1] - ticks[0] >= (hi - lo) / 2


def test_line_chart_has_axes_labels_and_ticks():
    c = chart.line_chart(range(50), np.linspace(1, 0, 50), title="loss", ylabel="loss")
    root = parse(c)
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "step" in texts and texts.count("loss") == 2
    assert "0" in texts and "40" in texts          # x ticks
    assert "0.5" in texts or "0.4" in texts        # y ticks


def test_line_chart_log_scale_and_notes():
    c = chart.line_chart([0, 1, 2, 3], [10.0, 1.0, -1.0, np.nan], log_y=True)
    parse(c)
    assert "1 value ≤ 0 not shown (log scale)" in c
    assert "1 non-finite value (gaps)" in c
    assert ">10<" in c and ">1<" in c


def test_line_chart_without_data():
    assert "no data yet" in chart.line_chart([], [])
    assert "no data yet" in chart.line_chart([0, 1], [np.nan, np.nan])


def test_line_chart_of_a_million_points_is_fast_and_small():
    y = np.random.default_rng(0).normal(size=1_000_000).cumsum()
    t = time.perf_counter()
    c = chart.line_chart(np.arange(y.size), y, width=460)
    assert time.perf_counter() - t < 2.0
    points = re.search(r'points="([^"]*)"', c).group(1).split()
    assert len(points) <= 2 * 460
    assert len(c) < 60_000

"""Pictures and widgets that read at the back of a lecture hall (issue 29, section 4).

On the SVG and HTML nbtape produces: no text under 14 CSS pixels at scale 1 (Graphviz
sizes text in points, shown at 4/3 px each), ``scale=`` makes it larger, text colours
read on white, every colour comes from the one palette, the legend under a tape
picture has a swatch for every fill drawn, wide pictures are laid out top to bottom,
and the tutorials' plots use the same colours for the same things.
"""
import html
import json
import re
from pathlib import Path

import numpy as np
import pytest

import nbtape as nt
from nbtape.display import palette as P
from nbtape.notebook import render as R
from nbtape.notebook.graph import draw
from nbtape.notebook.widgets import chart, table


NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
MIN_PT = P.pt_for_px(P.MIN_TEXT_PX)           # 10.5 pt shows as 14 px
ALLOWED = {c.upper() for c in (*P.OKABE_ITO, *P.TINT.values(), P.INK, P.MUTED_TEXT,
                               P.OFF_PATH, P.OUTLINE, P.REVERSE_TEXT, P.FORWARD_TEXT,
                               P.NONFINITE_TEXT)}


# pictures of every kind of box ---------------------------------------------------------
def wide_tape():
    """Notebook 12's picture: a dense layer and a mean, with arrays in every box."""
    rng = np.random.default_rng(0)
    w = nt.Variable(rng.standard_normal((3, 2)), name="w")
    b = nt.Variable(np.zeros(2), name="b")
    x = np.array([[1.0, 2.0, 3.0]])
    with nt.GradientTape() as tape:
        y = x @ w + b
        loss = np.mean(y ** 2)
    tape.gradient(loss, [w, b])
    return tape, {y: "y", loss: "loss"}


def every_kind():
    """A tape with a Variable, a watched tensor, a constant, a custom gradient, a
    stop_gradient, an op without a gradient rule, and a NaN."""
    @nt.custom_gradient
    def clip_grad(v):
        def grad(dy):
            return dy * 0.5
        return v * 1.0, grad

    x = nt.Variable(2.0, name="x")
    t = nt.constant(-1.0)
    with nt.GradientTape(persistent=True) as tape, np.errstate(invalid="ignore"):
        tape.watch(t)
        a = clip_grad(x) * nt.stop_gradient(x)
        r = np.sqrt(t) + a + np.floor(x)
        tape.gradient(r, [x, t])
    return tape, {a: "a", r: "r"}


def pictures():
    tape, names = wide_tape()
    kinds, knames = every_kind()
    x = nt.Variable(0.5, name="x")
    with nt.GradientTape(persistent=True) as small:
        y = np.sin(x) * x
    small.gradient(y, x)
    with nt.ForwardAccumulator(x, 1.0) as acc:
        with nt.GradientTape() as ftape:
            fy = x * x
    return {
        "wide": tape.graph(names=names),
        "every kind": kinds.graph(names=knames),
        "chain": small.graph(view="chain", names={y: "y"}),
        "steps": small.graph(backward_step=1, names={y: "y"}),
        "forward": ftape.graph(view="forward", accumulator=acc, target=fy),
        "scaled": tape.graph(names=names, scale=1.5),
    }


@pytest.fixture(scope="module")
def drawn():
    return {name: (g, R.render(g).decode("utf-8")) for name, g in pictures().items()}


def font_sizes(svg):
    return [float(s) for s in re.findall(r'font-size="([\d.]+)"', svg)]


def test_no_text_on_a_picture_is_under_14_px(drawn):
    for name, (g, svg) in drawn.items():
        sizes = font_sizes(svg)
        assert sizes and min(sizes) >= MIN_PT, (name, sorted(set(sizes)))
        # values and grads (most of what a box says) are 16 px
        assert sorted(sizes)[len(sizes) // 2] >= 12, name


def test_scale_makes_every_text_larger(drawn):
    plain, scaled = font_sizes(drawn["wide"][1]), font_sizes(drawn["scaled"][1])
    # (a layout program may round half points down)
    assert min(scaled) == pytest.approx(1.5 * min(plain), abs=0.6)
    assert max(scaled) == pytest.approx(1.5 * max(plain), abs=0.6)
    with pytest.raises(ValueError, match="scale must be a number"):
        wide_tape()[0].graph(scale=0)


def test_text_is_dark_enough_to_read_and_never_light_grey(drawn):
    for name, (_, svg) in drawn.items():
        for text in re.findall(r"<text[^>]*>", svg):
            colour = re.search(r'fill="(#[0-9a-fA-F]{6})"', text)
            if colour:
                assert P.contrast(colour.group(1)) >= 4.5, (name, text)


def test_every_colour_comes_from_the_palette(drawn):
    for name, (g, _) in drawn.items():
        colours = set(re.findall(r'(?:color|fillcolor|fontcolor|COLOR|BGCOLOR)="(#[0-9a-fA-F]{6})"',
                                 g.source))
        assert {c.upper() for c in colours} <= ALLOWED, (name, colours)


def test_the_legend_has_a_swatch_for_every_fill_drawn(drawn):
    for name, (g, svg) in drawn.items():
        fills = {m.upper() for m in re.findall(r'fillcolor="(#[0-9a-fA-F]{6})"', g.source)}
        in_legend = {fill.upper() for _, fill, _ in g.nbtape_legend}
        assert fills <= in_legend, (name, fills - in_legend)
        for text, fill, kind in g.nbtape_legend:
            drawn_as = f'COLOR="{fill}"' if kind in ("thick", "double") else f'BGCOLOR="{fill}"'
            assert text in svg and drawn_as in g.source, (name, text)
    every = {text for text, _, _ in drawn["every kind"][0].nbtape_legend}
    assert {"Variable", "watched tensor", "custom gradient (double border)",
            "stop_gradient (dashed)", "operation",
            "holds NaN or inf (thick border)"} <= every, every
    assert any(t.startswith("gradient path") for t in every)


def legend_swatches(svg):
    """``{text: the SVG drawn between it and the text before it}``: for a legend's
    text, its swatch."""
    out, start = {}, 0
    for m in re.finditer(r"<text[^>]*>([^<]*)</text>", svg):
        out[m.group(1)] = svg[start:m.start()]
        start = m.end()
    return out


def test_the_thick_and_double_border_swatches_are_not_the_same_block(drawn):
    # notebook 6's picture of a NaN: one box holds it (thick border), one is where it
    # was born (double border); the legend drew both as the same reddish-purple block
    g, svg = drawn["every kind"]
    kinds = {text: kind for text, _, kind in g.nbtape_legend}
    thick = next(t for t in kinds if "thick border" in t)
    double = next(t for t in kinds if "double border" in t and "born" in t)
    assert (kinds[thick], kinds[double]) == ("thick", "double")
    swatches = legend_swatches(svg)
    one, two = swatches[html.escape(thick)], swatches[html.escape(double)]
    nan = P.NONFINITE.lower()
    # thick: one white box with a border of 3 px or more; double: two nested outlines
    widths = [float(w) for w in re.findall(r'stroke="%s"[^>]*stroke-width="([\d.]+)"' % nan, one)]
    assert one.count(f'stroke="{nan}"') >= 1 and max(widths, default=1) >= 3, one
    assert two.count(f'stroke="{nan}"') >= 2 and f'fill="{nan}"' not in two, two
    assert f'fill="{nan}"' not in one
    assert one != two


def test_a_picture_is_titled_by_what_it_shows(drawn):
    for name, (g, svg) in drawn.items():
        title = re.search(r"<title>([^<]*)</title>", svg).group(1)
        assert title != "tape" and title == html.escape(g.nbtape_title, quote=False), name
        assert title.startswith(("tape of", "chain rule on the tape of")), title
    assert drawn["wide"][0].nbtape_title == \
        "tape of 4 operations: the gradient of loss with respect to w, b"
    assert "forward mode, tangents carried from x" in drawn["forward"][0].nbtape_title
    assert drawn["steps"][0].nbtape_title.endswith("reverse pass after 1 step")


def test_reverse_mode_is_vermillion_and_forward_mode_blue(drawn):
    assert f'color="{P.REVERSE}"' in drawn["wide"][0].source
    assert f'color="{P.FORWARD}"' in drawn["forward"][0].source
    assert P.REVERSE not in drawn["forward"][0].source


def test_a_picture_too_wide_for_a_projector_is_laid_out_top_to_bottom(drawn):
    wide = drawn["wide"][0]
    assert wide.nbtape_rankdir == "TB" and "rankdir=TB" in wide.source
    width_px = float(re.search(r'<svg width="([\d.]+)pt"', drawn["wide"][1]).group(1)) * 4 / 3
    assert width_px <= draw.FIT_PX, width_px
    assert drawn["chain"][0].nbtape_rankdir == "LR"       # a short chain stays left to right
    tape, names = wide_tape()
    forced = tape.graph(names=names, rankdir="LR")                       # asked for
    assert forced.nbtape_rankdir == "LR"
    assert "scroll sideways" in forced.nbtape_caption[-1]
    assert not any("scroll" in line for line in wide.nbtape_caption)
    # "not on the path" is in the legend only when something is off the path
    assert "not on the path" not in {t for t, _, _ in drawn["chain"][0].nbtape_legend}
    assert "not on the path" in {t for t, _, _ in drawn["every kind"][0].nbtape_legend}


def test_inline_pictures_shrink_no_further_than_14_px_text_then_scroll(drawn):
    g, svg = drawn["wide"]
    inline = R.inline_svg(g)
    least = float(re.search(r"min-width:(\d+)px", inline).group(1))
    width_px = float(re.search(r'<svg[^>]*width="([\d.]+)pt"', inline).group(1)) * 4 / 3
    assert "max-width:100%" in inline
    assert least * min(font_sizes(svg)) * 4 / 3 / width_px == pytest.approx(14, abs=0.6)
    assert "overflow-x:auto" in R.fitting_box(inline)


# widgets ---------------------------------------------------------------------------------
def px_sizes(markup):
    """Font sizes in px (SVG attributes and CSS px; relative ``em`` sizes left out)."""
    return [float(s) for s in re.findall(r'font-size(?:="|:)([\d.]+)(?![\d.]*em)', markup)]


def test_the_inspector_reads_at_16_px_and_scales():
    w = nt.Variable(np.arange(4.0), name="w")
    insp = nt.inspect(w, display=False)
    with nt.GradientTape() as tape:
        loss = np.sum(w * w)
    tape.gradient(loss, w)
    html = insp._html()
    assert "font-size:16px" in html and "0.875em" in html        # 14 px at the smallest
    assert min(px_sizes(html)) >= 14
    insp.close()
    big = nt.inspect(w, display=False, scale=1.5)
    assert "font-size:24px" in big._html()
    big.close()
    assert table.GRAD_COLOR == P.REVERSE


def test_the_monitors_charts_have_no_text_under_14_px():
    mon = nt.TrainingMonitor(display=False, title="fit")
    for k in range(20):
        mon.log(loss=1.0 / (k + 1), grads=[np.array([1.0 / (k + 1)])])
    svg = "".join(mon._chart_svgs())
    assert min(px_sizes(svg)) >= 14 and "font-size:16px" in mon._html()
    assert f'stroke="{P.SERIES[0]}"' in svg and f'stroke="{P.SERIES[1]}"' in svg
    mon.close()
    big = nt.TrainingMonitor(display=False, scale=2)
    big.log(loss=1.0)
    big.log(loss=0.5)
    assert min(px_sizes("".join(big._chart_svgs()))) >= 28
    big.close()
    assert chart.TICK_PX >= P.MIN_TEXT_PX


# the tutorials' own plots ------------------------------------------------------------------
def code_cells(name):
    nb = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def test_forward_and_reverse_mode_have_one_colour_each_in_07s_plots():
    # 07's timing plot is in 07b (forward mode), its memory plot in 10 (the memory cost)
    calls = [call for name in ("07b_forward_mode.ipynb", "10_the_memory_cost_of_reverse_mode.ipynb")
             for c in code_cells(name)
             for call in re.findall(r"ax\.(?:plot|loglog)\([^\n]*(?:\n\s+[^\n]*)*", c)]
    labelled = [c for c in calls if "forward mode" in c or "reverse mode" in c]
    assert len(labelled) >= 4, calls
    for call in labelled:
        want = P.FORWARD if "forward mode" in call else P.REVERSE
        assert f'color="{want}"' in call, call


def test_08s_bars_give_reverse_and_forward_mode_their_colours():
    cell = next(c for c in code_cells("08_vjp_jvp_and_hvp.ipynb") if "ax.bar(" in c)
    bars = re.findall(r"ax\.bar\([^\n]*(?:\n\s+[^\n]*)*", cell)
    assert len(bars) == 2
    for bar in bars:
        want = P.REVERSE if 'label="reverse' in bar else P.FORWARD
        assert f'color="{want}"' in bar, bar


def test_11s_epoch_lines_differ_in_colour_and_dash():
    cell = next(c for c in code_cells("11_fitting_a_line.ipynb") if "epoch {epoch}" in c)
    styles = re.findall(r'\("(#[0-9A-Fa-f]{6})", ([^)]*\)?)\)', cell)
    colours = [c for c, _ in styles]
    assert len(colours) >= 5 and len(set(colours)) == len(colours)
    assert {c.upper() for c in colours} <= {c.upper() for c in P.OKABE_ITO}
    assert len({d for _, d in styles}) == len(styles)
    assert "viridis" not in cell


# contrast: every text on every background the pictures and the player draw --------------
WHITE = "#FFFFFF"
FRONT = Path(__file__).resolve().parents[1] / "nbtape" / "notebook" / "widgets" / "front"


def text_on_background(svg):
    """``(text colour, background)`` for every text of a Graphviz SVG: a box's text on
    the box's fill, the rest (edge labels, legend, caption) on the white page."""
    pairs = []
    groups = r'<g id="[^"]*" class="(node|edge|graph)">(.*?)(?=<g id="[^"]*" class=|\Z)'
    for kind, group in re.findall(groups, svg, re.S):
        fills = [f for f in re.findall(r'<(?:polygon|path|ellipse)[^>]*fill="([^"]+)"', group)
                 if f.startswith("#")]
        # a box's first shape is its fill; the legend's swatches stand beside their text
        background = fills[0] if fills and kind == "node" else WHITE
        for colour in re.findall(r'<text[^>]*fill="(#[0-9a-fA-F]{6})"', group):
            pairs.append((colour.upper(), background.upper()))
    return pairs


def highlighted_pictures():
    """The yellow highlight behind every kind of text: the reverse pass's steps (07[16]),
    forward mode's tangents, a NaN's count, and every frame of the player."""
    x1, x2 = nt.Variable(2.0, name="x1"), nt.Variable(5.0, name="x2")
    with nt.GradientTape(persistent=True) as tape, nt.ForwardAccumulator(x1, 1.0) as acc:
        a = np.log(x1)
        b = x1 * x2
        f = a + b - np.sin(x2)
    tape.gradient(f, [x1, x2])
    names = {a: "a", b: "b", f: "f"}
    steps = len(tape.backward_steps(f))
    out = [tape.graph(names=names, backward_step=k) for k in range(steps + 1)]
    out.append(tape.graph(view="chain", names=names, backward_step=2))
    out += [tape.graph(view="forward", accumulator=acc, target=f, highlight=k)
            for k in range(len(tape))]
    t = nt.constant(-1.0)
    with nt.GradientTape() as nan_tape, np.errstate(invalid="ignore"):
        nan_tape.watch(t)
        r = np.sqrt(t) * 2.0
    with pytest.warns(RuntimeWarning, match="NaN"):
        nan_tape.gradient(r, t)
    out.append(nan_tape.graph(highlight=0))
    return [R.render(g).decode("utf-8") for g in out]


def test_every_text_colour_reads_on_every_fill_at_4_5_to_1():
    # WCAG AA for text: the palette's text colours on every fill text is drawn on, the
    # yellow highlight of the step at work and the player's current step included
    low = [(t, f, round(P.contrast(t, f), 2)) for t in P.TEXT_COLOURS for f in P.FILLS
           if P.contrast(t, f) < 4.5]
    assert not low, low
    assert P.HIGHLIGHT in P.FILLS and P.STEP_BACKGROUND in P.FILLS


def test_text_on_the_step_highlight_and_every_box_reads_at_4_5_to_1():
    seen = set()
    for svg in highlighted_pictures():
        for text, background in text_on_background(svg):
            seen.add((text, background))
            assert P.contrast(text, background) >= 4.5, (text, background,
                                                         round(P.contrast(text, background), 2))
    on_yellow = {t for t, b in seen if b == P.HIGHLIGHT.upper()}
    # the grads (vermillion text) and tangents (blue text) were drawn on the highlight
    assert {P.REVERSE_TEXT.upper(), P.FORWARD_TEXT.upper()} <= on_yellow, on_yellow


def test_the_players_text_reads_at_4_5_to_1():
    x = nt.Variable(3.0, name="x")
    with nt.GradientTape(persistent=True) as tape:
        y = x
        for _ in range(14):
            y = y * 1.1
    player = nt.TapePlayer(tape, y, display=False)
    player.frame = 12
    pairs = []
    for markup in (player._story, player._title, player._caption):
        for style in re.findall(r'style="([^"]*)"|style=\'([^\']*)\'', markup):
            style = "".join(style)
            colour = re.search(r"(?<!-)color:(#[0-9a-fA-F]{6})", style)
            back = re.search(r"background:(#[0-9a-fA-F]{6})", style)
            pairs.append(((colour.group(1) if colour else P.INK),
                          (back.group(1) if back else WHITE)))
    assert (P.INK, P.STEP_BACKGROUND) in pairs            # the current step
    assert (P.MUTED_TEXT, WHITE) in pairs                 # "... 2 earlier frames"
    for text, background in pairs:
        assert P.contrast(text, background) >= 4.5, (text, background)
    for svg in (player.svg(k) for k in range(len(player.frames))):
        for text, background in text_on_background(svg):
            assert P.contrast(text, background) >= 4.5, (text, background)
    player.close()
    # the front ends' own colours: buttons (plain, hovered, disabled) and the static
    # player's current step
    css = (FRONT / "widgets.css").read_text(encoding="utf-8")
    texts = re.findall(r"(?<![-\w])color:\s*(#[0-9a-fA-F]{6})", css)
    backgrounds = re.findall(r"background:\s*(#[0-9a-fA-F]{6})", css)
    assert texts and backgrounds
    for text in texts:
        for background in backgrounds:
            assert P.contrast(text, background) >= 4.5, (text, background)
    static = (Path(nt.__file__).parent / "notebook" / "widgets" / "static_player.py").read_text(
        encoding="utf-8")
    assert re.findall(r'background = "(#[0-9a-fA-F]{6})"', static) == [P.STEP_BACKGROUND.lower()]


def test_10s_colours_mean_the_same_in_both_plots():
    # the first plot drew the plain tape in blue, the next forward mode in blue, under
    # "the same colours as above": a tape is reverse mode, vermillion in both
    calls = [call for c in code_cells("10_the_memory_cost_of_reverse_mode.ipynb")
             for call in re.findall(r"ax\.plot\([^\n]*(?:\n\s+[^\n]*)*", c)]
    assert len(calls) == 4, calls
    for call in calls:
        colour = re.search(r'color="(#[0-9A-Fa-f]{6})"', call)
        assert colour, call
        tape = "plain tape" in call or "reverse mode" in call
        forward = "forward mode" in call
        assert (colour.group(1) == P.REVERSE) == tape and (colour.group(1) == P.FORWARD) == forward


def test_07bs_timings_are_the_best_of_several_runs():
    # single-shot timings made reverse mode jump tenfold at n = 64 on a busy machine
    cell = next(c for c in code_cells("07b_forward_mode.ipynb") if "seconds[" in c)
    repeat = re.search(r"def best_time\(fn, repeat=(\d+)\)", cell)
    assert repeat and int(repeat.group(1)) >= 3
    appended = re.findall(r'seconds\["(\w+)"\]\.append\(([^\n]*)\)', cell)
    assert sorted(k for k, _ in appended) == ["forward", "reverse"]
    assert all(value.startswith("best_time(") for _, value in appended), appended

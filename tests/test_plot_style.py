"""The tutorials' one plot style (nbtape/notebook/plot_style.py), and every stored plot.

Reads the stored notebooks (runs no kernel): every matplotlib figure a tutorial keeps
is at least ``MIN_WIDTH_PX`` wide at the style's dpi, so its smallest text shows at
14 px or more; every plotting tutorial applies the style the same way and gives each
figure alt text; no cell sets a font below the style's smallest or draws in colours
outside nbtape's palette.
"""
import base64
import json
import re
import struct
from pathlib import Path

import matplotlib
import pytest

from nbtape.display import palette as P
from nbtape.notebook import plot_style as S


NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def code(cell):
    return "".join(cell["source"]) if cell["cell_type"] == "code" else ""


def figures(path):
    """``(cell index, output)`` for every matplotlib figure stored in ``path``."""
    for i, cell in enumerate(cells(path)):
        for out in cell.get("outputs", []):
            plain = "".join(out.get("data", {}).get("text/plain", ""))
            if "image/png" in out.get("data", {}) and plain.startswith("<Figure size"):
                yield i, out


def png_size_and_dpi(b64):
    """Width and height in pixels and dots per inch, from a PNG's IHDR and pHYs chunks."""
    data = base64.b64decode(b64)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    k = data.find(b"pHYs")
    dpi = None
    if k > 0:
        x_per_metre, _, unit = struct.unpack(">IIB", data[k + 4:k + 13])
        dpi = round(x_per_metre * 0.0254) if unit == 1 else None
    return width, height, dpi


PLOTTING = [p for p in NOTEBOOKS if any(True for _ in figures(p))]


def test_some_tutorials_plot():
    assert len(PLOTTING) >= 8, [p.name for p in PLOTTING]


@pytest.mark.parametrize("path", PLOTTING, ids=lambda p: p.name)
def test_every_stored_plot_is_projector_sized(path):
    # before this style: 100 dpi and about 600 px wide, text 10 pt (13.9 px)
    for i, out in figures(path):
        width, height, dpi = png_size_and_dpi(out["data"]["image/png"])
        assert width >= S.MIN_WIDTH_PX, f"{path.name} cell {i}: {width} px wide"
        assert dpi == S.DPI, f"{path.name} cell {i}: {dpi} dpi (re-run with the style)"
        # the style's smallest text, as shown: a figure wider than FIT_PX is shrunk to it
        assert S.smallest_text_px(width) >= P.MIN_TEXT_PX, (path.name, i, width)


@pytest.mark.parametrize("path", PLOTTING, ids=lambda p: p.name)
def test_every_plotting_tutorial_uses_the_style_once_before_its_first_plot(path):
    sources = [code(c) for c in cells(path)]
    uses = [i for i, s in enumerate(sources) if "nt.plot_style.use()" in s]
    first_plot = min(i for i, _ in figures(path))
    assert len(uses) == 1 and uses[0] < first_plot, (path.name, uses)
    # after pyplot is imported (Jupyter's inline backend sets its own figure settings then)
    assert sources[uses[0]].index("import matplotlib.pyplot") < \
        sources[uses[0]].index("nt.plot_style.use()")


@pytest.mark.parametrize("path", PLOTTING, ids=lambda p: p.name)
def test_every_plot_has_alt_text_of_its_own(path):
    alts = []
    for i, out in figures(path):
        alt = out.get("metadata", {}).get("image/png", {}).get("alt", "")
        assert len(alt.split()) >= 8, f"{path.name} cell {i}: alt text {alt!r}"
        alts.append(alt)
    assert len(set(alts)) == len(alts), path.name
    assert not any("plt.show()" in code(c) for c in cells(path)), \
        f"{path.name}: show figures with nt.plot_style.show(fig, alt)"


@pytest.mark.parametrize("path", PLOTTING, ids=lambda p: p.name)
def test_no_plot_sets_text_smaller_than_the_style(path):
    # 12's confusion matrix wrote its counts at 8 pt, 11b's legend at 8 pt
    for i, cell in enumerate(cells(path)):
        for size in re.findall(r"fontsize=([\d.]+)", code(cell)):
            assert float(size) >= S.SMALLEST_PT, f"{path.name} cell {i}: fontsize={size}"
        assert not re.search(r"fontsize=['\"](?:small|x-small|xx-small)", code(cell))


PLOT_COLOURS = {c.upper() for c in (*P.OKABE_ITO, P.REVERSE_TEXT, P.FORWARD_TEXT,
                                    P.MUTED_TEXT, P.INK)} | {"BLACK", "WHITE"}


@pytest.mark.parametrize("path", PLOTTING, ids=lambda p: p.name)
def test_plots_draw_in_the_palettes_colours(path):
    # 04b's slopes were in matplotlib's default colours, 12's derivative "tab:orange"
    for i, cell in enumerate(cells(path)):
        source = code(cell)
        for colour in re.findall(r"color=\"([^\"]+)\"", source):
            assert colour.upper() in PLOT_COLOURS, f"{path.name} cell {i}: color={colour!r}"
        assert not re.search(r"\b(?:tab:|C\d\b)", source), f"{path.name} cell {i}"
        # a loop over several lines gives each a palette colour of its own
        for colour in re.findall(r"\(\"(#[0-9A-Fa-f]{6})\", ", source):
            assert colour.upper() in PLOT_COLOURS, (path.name, i, colour)


def test_the_style_reads_at_14_px_and_cycles_the_palette():
    rc = S.rc()
    assert rc["figure.dpi"] == S.DPI and rc["figure.figsize"][0] * S.DPI >= S.MIN_WIDTH_PX
    with matplotlib.rc_context(rc):
        from matplotlib.font_manager import FontProperties
        points = [FontProperties(size=matplotlib.rcParams[k]).get_size_in_points()
                  for k in S.TEXT_SIZES]
        assert min(points) == S.SMALLEST_PT
        assert matplotlib.rcParams["axes.prop_cycle"].by_key()["color"] == list(P.SERIES)
    assert S.SMALLEST_PT * S.DPI / 72 >= P.MIN_TEXT_PX
    assert S.smallest_text_px(S.FIT_PX) == S.smallest_text_px() >= P.MIN_TEXT_PX


def test_a_figure_drawn_in_the_style_is_wide_enough(tmp_path):
    import matplotlib.pyplot as plt
    with matplotlib.rc_context(S.rc()):
        fig, ax = plt.subplots(figsize=(9.5, 5))
        ax.plot([1, 2, 3], label="a line")
        ax.set_title("a title")
        ax.legend()
        fig.savefig(tmp_path / "f.png", bbox_inches="tight")   # as Jupyter stores it
        plt.close(fig)
    width, _, dpi = png_size_and_dpi(base64.b64encode((tmp_path / "f.png").read_bytes()))
    assert width >= S.MIN_WIDTH_PX and dpi == S.DPI


def test_show_publishes_the_figure_with_its_alt_text():
    import matplotlib.pyplot as plt
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    InteractiveShell.instance()
    try:
        with matplotlib.rc_context(S.rc()):
            fig, ax = plt.subplots(figsize=(9.5, 5))
            ax.plot([1, 2, 3])
            with capture_output() as captured:
                S.show(fig, "A straight line rising from 1 to 3.")
        (out,) = captured.outputs
        assert out.metadata == {"image/png": {"alt": "A straight line rising from 1 to 3."}}
        assert out.data["text/plain"] == "<Figure size 950x500 with 1 Axes>"
        width, _, dpi = png_size_and_dpi(out.data["image/png"])
        assert width >= S.MIN_WIDTH_PX and dpi == S.DPI
        assert not plt.fignum_exists(fig.number)          # closed: not drawn a second time
    finally:
        InteractiveShell.clear_instance()


def test_show_needs_alt_text():
    with pytest.raises(ValueError, match="needs alt"):
        S.show(None, "   ")


def test_markdown_images_have_alt_text():
    root = Path(__file__).resolve().parents[1]
    texts = [(p.name, "".join(c["source"])) for p in NOTEBOOKS for c in cells(p)
             if c["cell_type"] == "markdown"]
    texts += [(p.name, p.read_text(encoding="utf-8"))
              for p in [root / "README.md", *sorted((root / "docs").rglob("*.md"))]]
    for name, text in texts:
        for alt in re.findall(r"!\[([^\]]*)\]\(", text):
            assert alt.strip(), name
        for tag in re.findall(r"<img\b[^>]*>", text):
            assert re.search(r'\balt="[^"]+"', tag), (name, tag)

"""``player.save("x.gif")``: one animation frame per player frame (animation.py)."""
import sys

import numpy as np
import pytest

import nbtape as nt
from nbtape.notebook.render import RenderError, draws_png

PIL = pytest.importorskip("PIL.Image")
needs_png = pytest.mark.skipif(not draws_png(), reason="no layout program that draws PNG")


def small_player():
    x = nt.Variable(2.0, name="x")
    with nt.GradientTape(persistent=True) as tape:
        y = np.sin(x) * x
    return nt.TapePlayer(tape, y, names={y: "y"}, display=False, interval=0.25)


@needs_png
@pytest.mark.parametrize("suffix", [".gif", ".png"])
def test_one_animation_frame_per_player_frame(tmp_path, suffix):
    p = small_player()
    path = tmp_path / f"backprop{suffix}"
    p.save(path)
    im = PIL.open(path)
    assert im.format == ("GIF" if suffix == ".gif" else "PNG")
    assert im.n_frames == len(p.frames) == 6
    durations = []
    for k in range(im.n_frames):
        im.seek(k)
        durations.append(im.info["duration"])
    assert durations == [250] * 5 + [750]          # the last frame stays longer
    p.close()


def test_without_pillow_the_message_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)
    p = small_player()
    with pytest.raises(RenderError, match="needs Pillow: run `pip install Pillow`"):
        p.save(tmp_path / "x.gif")
    p.close()


def test_without_png_the_message_points_at_html(tmp_path, monkeypatch):
    from nbtape.notebook.widgets import animation
    monkeypatch.setattr(animation, "draws_png", lambda: False)
    p = small_player()
    with pytest.raises(RenderError, match=r"save the player as \.svg \(an animated SVG\) or \.html"):
        p.save(tmp_path / "x.gif")
    p.close()


def test_an_animated_svg_needs_neither_pillow_nor_png(tmp_path, monkeypatch):
    from nbtape.notebook.render import find_engine
    if find_engine() is None:
        pytest.skip("no Graphviz layout program")
    from nbtape.notebook.widgets import animation
    monkeypatch.setitem(sys.modules, "PIL", None)
    monkeypatch.setattr(animation, "draws_png", lambda: False)
    p = small_player()
    p.save(tmp_path / "backprop.svg")
    text = (tmp_path / "backprop.svg").read_text(encoding="utf-8")
    n = len(p.frames)
    assert text.count('<g class="frame"') == n == 6           # one frame per step
    for k in range(n):
        head, body = p.svg(k).split("\n", 1)      # the frame, its size in the outer units
        assert body in text and head.replace("pt", "", 2) in text
    assert text.count('dur="1.5s"') == n and text.count('visibility="visible">') == 1
    assert 'values="hidden;visible;hidden" keyTimes="0;0.333333;0.5"' in text   # frame 2
    p.close()


def test_without_a_font_for_the_symbols_captions_are_written_plainly(monkeypatch):
    from nbtape.notebook.widgets import animation
    from PIL import ImageFont
    monkeypatch.setattr(animation, "FONTS", ())
    font, symbols = animation._font(ImageFont, 18)
    assert symbols is False
    assert "grad(x) += 1.0 × ∂y/∂x".translate(animation.PLAIN) == "grad(x) += 1.0 x dy/dx"
    png = nt.render("digraph { a }", format="png") if draws_png() else None
    if png is not None:
        assert animation.frame_image(png, "a × ∂b").mode == "RGB"

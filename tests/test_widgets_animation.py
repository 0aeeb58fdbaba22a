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
    with pytest.raises(RenderError, match=r"save the player as \.html"):
        p.save(tmp_path / "x.gif")
    p.close()

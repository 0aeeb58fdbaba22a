"""The tape player without a kernel (static_player.py): the HTML a saved notebook keeps
and ``player.save("x.html")`` writes.  Its script is run in Chromium by
tests/browser/test_static_player.py."""
import html
import json
import re

import numpy as np
import pytest

import nbtape as nt
from nbtape.notebook.render import find_engine
from nbtape.notebook.widgets import player as player_module
from nbtape.notebook.widgets.static_player import (decode_pictures, encode_pictures,
                                                   player_block, tokens)

needs_layout = pytest.mark.skipif(find_engine() is None, reason="no Graphviz layout program")
DATA = re.compile(r'<script type="application/json" class="nbtape-frames">(.*?)</script>', re.S)


def chain_player(n=4):
    x = nt.Variable(np.array([0.5, -1.0]), name="x")
    with nt.GradientTape(persistent=True) as tape:
        h = x
        for _ in range(n):
            h = np.tanh(h)
        loss = np.sum(h)
    return nt.TapePlayer(tape, loss, names={loss: "loss"}, display=False, interval=0.5)


def data_of(block):
    return json.loads(DATA.search(block)[1])


def test_tokens_join_back_and_deltas_decode_to_the_pictures():
    texts = ['<svg a="1">\n<g b>x y</g>\n</svg>', '<svg a="1">\n<g c>x y</g>\n</svg>', "z"]
    assert ["".join(tokens(t)) for t in texts] == texts
    pictures, index = encode_pictures(texts + [texts[1], None])
    assert index == [0, 1, 2, 1, -1] and decode_pictures(pictures) == texts
    assert pictures[1] == [[0, 3], "c>x ", [4, 6]]          # only what changed is new


@needs_layout
def test_the_static_player_holds_every_frame_as_the_live_player_draws_it():
    p = chain_player()
    block = p.static_html()
    data = data_of(block)
    n = len(p.frames)
    assert data["captions"] == [f.caption for f in p.frames] and len(data["pic"]) == n
    assert data["phases"][0] == "the tape" and data["phases"][-1] == "gradients"
    assert data["reverse"] == next(k for k, f in enumerate(p.frames) if f.phase == "backward")
    assert data["reverse"] == len(p.frames) // 2
    assert data["interval"] == 500 and data["start"] == 0 and data["drawn"] == list(range(n))
    svgs = decode_pictures(data["pictures"])
    assert [svgs[data["pic"][k]] for k in range(n)] == [p.svg(k) for k in range(n)]
    # frames share what they can: much less than the pictures' total size
    whole = sum(len(p.svg(k)) for k in range(n))
    assert len(json.dumps(data["pictures"])) < whole / 3
    # no external script, and nothing in the data can end its <script> early
    assert "<script src" not in block and "</" not in DATA.search(block)[1]
    assert block.count("<script") == 2
    p.close()


@needs_layout
def test_without_scripts_the_last_frame_and_every_caption_show():
    p = chain_player()
    fallback = p.static_html().split('<script type="application/json"')[0]
    assert fallback.count('<img alt="the tape after the reverse pass') == 1
    assert 'src="data:image/png;base64,' in fallback
    assert "<svg" not in fallback                     # sanitizers drop inline SVG
    for f in p.frames:
        assert f"<li>{html.escape(f.caption)}</li>" in fallback
    p.close()


@needs_layout
def test_a_saved_notebook_keeps_the_player_folded_beside_the_widget():
    p = chain_player()
    p.frame = 3
    bundle = p.snapshot()._repr_mimebundle_()
    assert "the player without a kernel" in bundle["text/html"]
    assert data_of(bundle["text/html"])["start"] == 3
    assert bundle["text/plain"].startswith("nt.TapePlayer: ")
    assert p.static_html() is p.static_html()           # built once per frame shown
    p.close()


def test_a_long_tape_keeps_some_pictures_and_says_which(monkeypatch):
    monkeypatch.setattr(player_module, "STATIC_PICTURES", 4)
    monkeypatch.setattr(player_module.TapePlayer, "svg", lambda self, k=None: f"<svg>{k}</svg>")
    p = chain_player(4)                       # 1 + 5 + 5 + 1 = 12 frames, every 3rd drawn
    data = data_of(p.static_html())
    assert len(p.frames) == 12
    assert data["drawn"] == [0, 0, 0, 3, 3, 3, 6, 6, 6, 9, 9, 11]
    assert decode_pictures(data["pictures"]) == ["<svg>0</svg>", "<svg>3</svg>",
                                                 "<svg>6</svg>", "<svg>9</svg>",
                                                 "<svg>11</svg>"]
    p.close()


def test_without_a_layout_program_the_static_player_tells_the_story(monkeypatch):
    monkeypatch.setattr(player_module, "inline_svg", lambda graph: None)
    monkeypatch.setattr(player_module, "draws_png", lambda: False)
    p = chain_player(2)
    data = data_of(p.static_html())
    assert set(data["pic"]) == {-1} and "graphviz-pure" in data["nopicture"]
    assert "<img" not in p.static_html()
    p.close()


@needs_layout
def test_save_html_writes_a_page_and_other_suffixes_are_refused(tmp_path):
    p = chain_player(2)
    p.save(tmp_path / "backprop.html")
    text = (tmp_path / "backprop.html").read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and p.static_html(False) in text
    assert "<img" not in text               # a page runs its script: no fallback picture
    with pytest.raises(ValueError, match=r"writes \.html .* \.gif, \.png or \.svg"):
        p.save(tmp_path / "backprop.pdf")
    p.close()


def test_player_block_without_pictures_or_fallback():
    block = player_block(["only"], ["gradients"], [None])
    data = data_of(block)
    assert data["pic"] == [-1] and data["pictures"] == [] and data["reverse"] == 0

"""nt.TapePlayer: the tape played forward, then backward (player.py, playback.py)."""
import gc
import re
import warnings
import weakref

import numpy as np
import pytest

import nbtape as nt
from nbtape.notebook.render import find_engine
from nbtape.notebook.widgets.playback import Playback
from nbtape.notebook.widgets.live import open_widgets

needs_layout = pytest.mark.skipif(find_engine() is None, reason="no Graphviz layout program")


def toy_graph():
    """Seed example 16: input [[1, 2]], weights [[0.25], [0.15]], y_true 0.75."""
    x = nt.constant([[1.0, 2.0]])
    w = nt.Variable([[0.25], [0.15]], name="w")
    with nt.GradientTape(persistent=True) as tape:
        yhat = x @ w
        err = 0.75 - yhat
        loss = np.sum(err ** 2)
    return tape, w, loss, {yhat: "yhat", err: "err", loss: "loss"}


def player(*args, **kw):
    return nt.TapePlayer(*args, display=False, **kw)


def from_the_front_end(widget, **state):
    """What a click in the browser does: the front end sends new trait values, which
    ipywidgets applies with ``set_state`` (the comm's "update" message)."""
    widget.set_state(state)


def test_frames_tell_the_forward_then_the_reverse_pass():
    tape, w, loss, names = toy_graph()
    p = player(tape, loss, names=names)
    phases = [f.phase for f in p.frames]
    assert phases == ["start"] + ["forward"] * 4 + ["backward"] * 4 + ["done"]
    assert [f.op for f in p.frames if f.phase == "forward"] == [0, 1, 2, 3]
    assert [f.op for f in p.frames if f.phase == "backward"] == tape.backward_steps(loss)
    assert [f.options.get("backward_step") for f in p.frames[5:]] == [0, 1, 2, 3, 4]
    assert p.frames[1].caption.startswith("Forward 1/4 (line ")
    assert p.frames[1].caption.endswith("): yhat = np.matmul([1.0, 2.0], w) = [0.55]")
    # the true gradient of example 16 (a blog post prints it with the sign flipped)
    assert p.frames[-1].caption == "Done: d(loss)/d(w) = [-0.4, -0.8]."
    assert "grad(err) += grad(np.power) × ∂np.power/∂err = [1.0] × 0.4 = 0.4" in p.frames[6].caption
    assert "grad(w) = [-0.4, -0.8], complete" in p.frames[8].caption
    p.close()


def test_a_variable_used_twice_accumulates_its_gradient():
    x = nt.Variable(2.0, name="x")
    with nt.GradientTape(persistent=True) as tape:
        y = x * x
        z = y + x
    p = player(tape, z, names={y: "y", z: "z"})
    captions = [f.caption for f in p.frames if f.phase == "backward"]
    # x is used three times: both operands of x * x, and once in y + x
    assert "grad(x) += grad(z) × ∂z/∂x = 1.0 × 1.0 = 1.0 (1 of 3 uses done)" in captions[0]
    assert "twice (x is used 2 times here): grad(x) = 5.0, complete" in captions[1]
    assert p.frames[-1].caption == "Done: d(z)/d(x) = 5.0."
    p.close()


def test_stepping_from_python_and_from_the_buttons():
    tape, w, loss, names = toy_graph()
    p = player(tape, loss, names=names)
    assert p.frame == 0 and "frame 0 of 9" in p._title
    p.step()
    assert p.frame == 1 and "forward pass" in p._title
    assert "yhat = np.matmul" in p._caption
    p.step(100)
    assert p.frame == 9 and "gradients" in p._title
    p.step(-3)
    assert p.frame == 6
    from_the_front_end(p, frame=0)          # |◀, ◀, ▶, the slider: each sends a frame
    assert p.frame == 0 and "frame 0 of 9" in p._title
    from_the_front_end(p, frame=2)
    assert p.frame == 2 and p.caption.startswith("Forward 2/4") and "err = " in p._caption
    assert p.reverse == 5 and p.frames[p.reverse].phase == "backward" and p.last == 9
    from_the_front_end(p, frame=3)
    assert p.frame == 3 and p.caption.startswith("Forward 3/4")
    with pytest.raises(ValueError, match="frame must be"):
        p.frame = 10
    p.close()


@needs_layout
def test_pictures_highlight_the_current_op_and_are_cached():
    tape, w, loss, names = toy_graph()
    p = player(tape, loss, names=names)
    p.frame = 2
    svg = p._picture
    assert "<svg" in svg and "err = np.subtract" in svg
    assert p.svg(2) is p.svg(2)             # drawn once, then kept
    p.frame = 6
    assert "Reverse pass, 1 of 4 steps done: next, step 2," in p._picture
    assert "\\u003csvg" in p.snapshot().html         # the frames, inside the player's data
    p.close()


def test_without_a_layout_program_the_captions_carry_on(monkeypatch):
    import nbtape.notebook.widgets.player as mod
    monkeypatch.setattr(mod, "inline_svg", lambda graph: None)
    tape, w, loss, names = toy_graph()
    p = player(tape, loss, names=names)
    p.step(6)
    assert "No picture" in p._picture and "Backward 2/4" in p._caption
    assert "No picture" in p.snapshot().html
    p.close()


def test_playing_to_the_end_shows_play_again():
    tape, w, loss, names = toy_graph()
    p = player(tape, loss, names=names)
    from_the_front_end(p, playing=True)
    from_the_front_end(p, frame=5)          # the front end's timer steps the frame
    assert p.playing is True
    from_the_front_end(p, frame=9)
    assert p.frame == 9 and p.playing is False
    p.close()


def test_the_traits_link_to_a_slider_both_ways():
    import ipywidgets as W
    tape, w, loss, names = toy_graph()
    p = player(tape, loss, names=names)
    slider = W.IntSlider(min=0, max=p.last)
    link = W.link((p, "frame"), (slider, "value"))
    slider.value = 4
    assert p.frame == 4 and p.caption.startswith("Forward 4/4") and "Forward 4/4" in p._caption
    p.step()
    assert slider.value == 5 and "reverse pass" in p._title
    from_the_front_end(p, frame=7)          # a click in the player moves the slider too
    assert slider.value == 7
    other = player(tape, loss, names=names)   # two players in step
    both = W.link((p, "frame"), (other, "frame"))
    slider.value = 2
    assert other.frame == 2 and other._caption == p._caption
    seen = []
    p.observe(lambda change: seen.append(change["new"]), names="interval")
    p.interval = 0.25
    assert seen == [0.25] and "\"interval\":250" in p.static_html()
    with pytest.raises(ValueError, match="interval is the seconds per frame"):
        p.interval = 0
    with pytest.raises(ValueError, match="frame must be"):
        p.frame = -1
    assert p.frame == 2 and slider.value == 2          # a refused value changes nothing
    link.unlink(); both.unlink()
    for x in (slider, other, p):
        x.close()


def test_the_front_end_is_one_es_module_holding_the_state_in_traits():
    tape, w, loss, names = toy_graph()
    p = player(tape, loss, names=names)
    state = p.get_state()
    assert "export default" in state["_esm"] and "import " not in state["_esm"]
    assert {"frame", "interval", "playing", "last", "reverse", "_picture", "_caption",
            "_story", "_title"} <= set(state)
    assert state["_model_module"] == "anywidget"
    p.close()


def test_a_used_non_persistent_tape_still_plays_with_fewer_numbers():
    v = nt.Variable(2.0, name="v")
    with nt.GradientTape() as tape:
        z = np.sin(v) * v + v
    g = tape.gradient(z, v)
    p = player(tape)                        # target and sources: those of the gradient call
    assert p.frames[-1].caption == f"Done: d(np.add)/d(v) = {float(g):.4g}."
    back = [f.caption for f in p.frames if f.phase == "backward"]
    assert all("persistent=True" in c for c in back)
    # whether the engine kept the intermediate grads or not, nothing is shown as unknown
    assert back[1].startswith("Backward 2/3: np.multiply(np.sin, v) passes ")
    assert "grad(np.sin) gets its share" in back[1] and "?" not in " ".join(back)
    assert f"grad(v) = {float(g):.4g}, complete" in back[2]
    p.close()


def test_when_only_the_sources_grads_were_kept():
    v = nt.Variable(2.0, name="v")
    with nt.GradientTape() as tape:
        z = np.sin(v) * v + v
    g = tape.gradient(z, v)
    record = tape.last_gradient          # what a big non-persistent tape keeps
    record.adjoints = {v._id: record.adjoints[v._id]}
    record.complete = False
    p = player(tape)
    back = [f.caption for f in p.frames if f.phase == "backward"]
    assert back[1].startswith("Backward 2/3: np.multiply(np.sin, v) passes its grad to its "
                              "inputs. grad(np.sin) gets its share; grad(np.sin) is complete;")
    assert f"grad(v) = {float(g):.4g}, complete" in back[2] and "?" not in " ".join(back)
    p.close()


def test_no_path_and_no_target():
    a, b = nt.Variable(1.0, name="a"), nt.Variable(2.0, name="b")
    with nt.GradientTape(persistent=True) as tape:
        y = a * 3.0
    p = player(tape, y, sources=[b])
    assert p.frames[-1].phase == "done" and "No gradient flows" in p.frames[-1].caption
    p.close()
    with nt.GradientTape(persistent=True) as fresh:
        y = a * a
    with pytest.raises(ValueError, match="needs a target"):
        player(fresh)
    with pytest.raises(ValueError, match="interval"):
        player(fresh, y, interval=0)
    with pytest.raises(ValueError, match="rankdir"):
        player(fresh, y, rankdir="sideways")     # fails when made, not mid-play


def test_constants_and_multi_output_ops_do_not_break_the_story():
    a = nt.Variable(np.array([[2.0, 1.0], [1.0, 3.0]]), name="A")
    with nt.GradientTape(persistent=True) as tape:
        vals, vecs = np.linalg.eigh(a)
        s = np.sum(vals) + np.sum(vecs * 0.0)
    p = player(tape, s, names={s: "s"})
    text = repr(p)
    assert "(np.linalg.eigh[0], np.linalg.eigh[1]) = np.linalg.eigh(A) = ([1.382, 3.618], " in text
    assert "grad(np.linalg.eigh[1]) = [0.0, 0.0, 0.0, 0.0], complete" in text
    done = p.frames[-1].caption
    assert re.fullmatch(r"Done: d\(s\)/d\(A\) = \[1\.0, \S+, \S+, 1\.0\]\.", done)
    p.close()


def test_text_snapshot_is_the_whole_story_and_deterministic():
    def run():
        tape, w, loss, names = toy_graph()
        p = player(tape, loss, names=names)
        p.frame = 3
        text = repr(p)
        p.close()
        return text
    a, b = run(), run()
    assert a == b
    lines = a.splitlines()
    assert lines[0] == "nt.TapePlayer: 10 frames" and len(lines) == 11
    assert lines[4].startswith("▶  3. Forward 3/4") and "0x" not in a


def test_close_releases_the_widgets_and_the_player():
    tape, w, loss, names = toy_graph()
    gc.collect()
    n = len(open_widgets())
    p = player(tape, loss, names=names)
    p.close()
    assert len(open_widgets()) == n
    p = player(tape, loss, names=names)
    ref = weakref.ref(p)
    del p
    gc.collect()
    assert ref() is not None          # open, like any ipywidget, until closed
    ref().close()
    gc.collect()
    assert ref() is None and len(open_widgets()) == n


def test_a_long_tape_sends_a_window_of_the_story():
    w = nt.Variable(np.ones(3), name="w")
    with nt.GradientTape(persistent=True) as tape:
        y = w
        for _ in range(150):
            y = np.sin(y) + w
        loss = np.sum(y)
    p = player(tape, loss)
    assert len(p.frames) == 1 + 301 + 301 + 1
    p.frame = 400
    story = p._story
    # the current frame near the top (the list cannot scroll itself), then what comes next
    assert story.count("<li") == 11 and "… 399 earlier frames" in story
    assert "… 194 more frames" in story and '<ol start="399"' in story
    assert ('value="400" style="white-space:normal;overflow-wrap:anywhere;line-height:1.35;'
            'background') in story
    lines = repr(p).splitlines()
    assert len(lines) == 1 + 120 + 2 and lines[-2] == "   … 483 more frames …"
    assert lines[-1].startswith("  603. Done: d(np.sum)/d(w) = ")
    p.close()


def test_a_short_tape_lists_every_frame():
    tape, w, loss, names = toy_graph()
    p = player(tape, loss, names=names)
    assert p._story.count("<li") == 10 and "earlier" not in p._story
    p.close()


def test_the_playback_alone_needs_no_widgets():
    tape, w, loss, names = toy_graph()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pb = Playback(tape, loss, names=names)
    assert pb.label(w._id) == "w" and len(pb.frames) == 10


def test_it_is_a_widget_to_put_beside_others():
    import anywidget
    from ipywidgets import DOMWidget, HBox, HTML
    tape, w, loss, names = toy_graph()
    p = player(tape, loss, names=names)
    note = HTML("<b>watch the adjoints</b>")
    row = HBox([p, note])
    assert isinstance(p, anywidget.AnyWidget) and isinstance(p, DOMWidget)
    assert row.children == (p, note)
    p.frame = 2
    assert "frame 2 of 9" in p._title and p.caption == p.frames[2].caption
    p.close()
    assert p.comm is None and repr(p).startswith("nt.TapePlayer: 10 frames")
    row.close()
    note.close()


# NaN and inf: the frame where one is born says so, and its picture marks the op -----------
def _quietly(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def _sqrt_where_tape():
    x = nt.Variable(np.array([0.0, 4.0]), name="x")
    with nt.GradientTape(persistent=True) as tape:
        y = np.sum(np.where(x > 0, np.sqrt(x), 0.0))
    _quietly(lambda: tape.gradient(y, x))
    return tape, x, y


def test_the_reverse_step_where_a_nan_is_born_says_so():
    from nbtape.notebook.graph import tape_graph
    tape, x, y = _sqrt_where_tape()
    p = player(tape, y, names={y: "y"})
    said = [(k, f) for k, f in enumerate(p.frames) if "born here" in f.caption]
    assert len(said) == 1
    k, f = said[0]
    assert (f.phase, f.op, tape.ops[f.op].rule.name) == ("backward", 0, "np.sqrt")
    assert f.caption.startswith("Backward 3/3: np.sqrt(x) passes")
    assert f.caption.endswith("complete — the NaN is born here (0 x inf).")
    assert p.frames[-1].caption == (
        "Done: d(y)/d(x) = [nan, 0.25]. The NaN was born at np.sqrt (op 0), backward step 3: "
        "tape.explain(target, source) says why and how to fix it.")
    # that frame's picture marks the op, highlighted as the step the pass is at
    g = tape_graph(tape, **f.options)
    assert sorted(n for n, i in g.nbtape_nodes.items() if "born" in i.tags) == ["op0"]
    assert {"born", "highlight"} <= g.nbtape_nodes["op0"].tags
    assert "NaN born here: 0 x inf" in g.source
    # the frame before it has no NaN yet
    assert "born" not in tape_graph(tape, **p.frames[k - 1].options).source
    p.close()


def test_an_overflow_is_born_forward_and_its_nan_backward_at_exp():
    x = nt.Variable(np.float32(100.0), name="x")
    with nt.GradientTape(persistent=True) as tape:
        y = _quietly(lambda: np.log(1 + np.exp(x)))
    _quietly(lambda: tape.gradient(y, x))
    p = player(tape, y, names={y: "y"})
    forward = [f for f in p.frames if f.phase == "forward"]
    assert forward[0].caption.endswith(
        "np.exp(x) = inf — the inf is born here (overflow in exp).")
    assert not any("born" in f.caption for f in forward[1:])
    backward = [f for f in p.frames if f.phase == "backward"]
    assert [f.op for f in backward] == [2, 1, 0]
    assert backward[-1].caption.endswith("— the NaN is born here (0 x inf).")
    assert not any("born" in f.caption for f in backward[:-1])
    p.close()


def test_a_finite_tape_plays_without_nan_notes():
    tape, w, loss, names = toy_graph()
    fine = player(tape, loss, names=names)
    nan_tape, _, y = _sqrt_where_tape()
    bad = player(nan_tape, y, names={y: "y"})
    assert not any("born" in f.caption for f in fine.frames)
    assert sum("born here" in f.caption for f in bad.frames) == 1
    fine.close()
    bad.close()


def test_captions_call_a_result_by_what_its_box_in_the_picture_shows():
    from nbtape.notebook.graph import tape_graph
    x = nt.Variable(2.0, name="x")
    with nt.GradientTape(persistent=True) as tape:
        f = np.sin(x) * x + np.exp(x) * x         # two unnamed np.multiply results
    p = player(tape, f, names={f: "f"})
    forward = [fr.caption for fr in p.frames if fr.phase == "forward"]
    # a unique function names its result; a repeated one adds the tape position
    assert forward[0].endswith("np.sin(x) = 0.9093")
    assert forward[1].endswith("np.multiply(np.sin, x) = 1.819")
    assert forward[4].endswith("f = np.add(np.multiply (op 1), np.multiply (op 3)) = 16.6")
    boxes = tape_graph(tape, target=f, names={f: "f"}).source
    for name in ("np.sin", "np.exp", "np.multiply", "f = np.add"):
        assert f">{name}<" in boxes
    assert "op1" not in " ".join(fr.caption for fr in p.frames).replace("(op 1)", "")
    p.close()

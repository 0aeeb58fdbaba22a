"""nt.inspect: the live variable table (inspector.py, sources.py, table.py)."""
import gc
import time
import weakref

import ipywidgets as W
import numpy as np
import pytest

import nbtape as nt
from nbtape.notebook.widgets import Inspector
from nbtape.notebook.widgets.sources import Sources, namespace_names
from nbtape.display.numbers import number
from nbtape.notebook.widgets.table import VariableRow, picture
from nbtape.notebook.widgets.throttle import ManualScheduler
from nbtape.notebook.widgets.live import open_widgets


@pytest.fixture
def sched():
    return ManualScheduler()


def make(objects, sched, **kw):
    return nt.inspect(objects, clock=sched.clock, schedule=sched, display=False, **kw)


@pytest.fixture
def sent(monkeypatch):
    """Every comm message any widget sends, as (widget, message)."""
    log = []
    real = W.Widget._send

    def record(self, msg, buffers=None):
        log.append((self, msg))
        return real(self, msg, buffers)
    monkeypatch.setattr(W.Widget, "_send", record)
    return log


def step(w, b, x, y, lr=0.1):
    with nt.GradientTape() as tape:
        loss = np.mean((x @ w + b - y) ** 2)
    gw, gb = tape.gradient(loss, [w, b])
    w.assign_sub(lr * gw)
    b.assign_sub(lr * gb)
    return float(loss)


# state after updates -----------------------------------------------------------------------
def test_rows_follow_assigns_and_gradients(sched):
    w = nt.Variable([[0.55], [0.75]], name="w")
    b = nt.Variable(0.0, name="b")
    x = np.array([[5.0, 2.0], [3.0, 3.0], [4.0, 1.5]])
    y = np.array([[0.75], [0.5], [0.4]])
    insp = make([w, b], sched, max_rate=None)
    for _ in range(3):
        step(w, b, x, y, lr=0.01)
    rw, rb = insp._rows
    assert (rw.assigns, rw.grads, rb.assigns, rb.grads) == (3, 3, 3, 3)
    assert len(rw.history) == 4 and rw.history[-1] == pytest.approx(np.linalg.norm(w.numpy()))
    assert rb.history[-1] == pytest.approx(float(b.numpy()))
    assert rw.grad_history[-1] == pytest.approx(np.linalg.norm(rw.grad))
    html = insp._table
    assert html.count("<tr>") == 3 and "60 assigns" not in html and "3 assigns" in html
    assert number(float(b.numpy())) in html
    text = repr(insp)
    assert text.splitlines()[0] == "nt.inspect: 2 variables"
    assert text.splitlines()[2].split()[:3] == ["w", "2×1", "float64"]
    insp.close()


def test_the_table_shows_numbers_even_without_pictures(sched):
    v = nt.Variable([1.0, -2.0], name="v")
    insp = make(v, sched)
    assert "<code>[1.0, -2.0]</code>" in insp._table
    assert "none yet" in insp._table
    insp.close()


def test_names_come_from_dict_keys_then_names_then_numbered_duplicates(sched):
    a, b, c = nt.Variable(1.0), nt.Variable(2.0), nt.Variable(3.0)
    insp = make([{"first": a}, b, c], sched)
    assert [r.name for r in insp._rows] == ["first", "Variable", "Variable#2"]
    insp.close()


def test_namespace_names_skip_private_and_other_objects():
    v, u = nt.Variable(1.0), nt.Variable(2.0)

    class Shell:
        user_ns = {"_": v, "_3": v, "weights": v, "other": 5, "u2": u}
    assert namespace_names(Shell(), [v, u]) == {v._id: "weights", u._id: "u2"}
    assert namespace_names(None, [v]) == {}


def test_a_tape_source_picks_up_variables_it_watches_later(sched):
    a, b = nt.Variable(1.0, name="a"), nt.Variable(2.0, name="b")
    tape = nt.GradientTape(persistent=True)
    insp = make(tape, sched)
    assert insp.variables == []
    with tape:
        y = a * a
    z_grad = tape.gradient(y, a)
    assert [v.name for v in insp.variables] == ["a"]
    assert insp._rows[0].grads == 1 and float(insp._rows[0].grad) == float(z_grad)
    with tape:
        y2 = y * b
    tape.gradient(y2, [a, b])
    assert [v.name for v in insp.variables] == ["a", "b"]
    assert insp._rows[1].grads == 1
    insp.close()


class LazyModel:
    """Builds its weights on first call, as Keras layers do."""

    def __init__(self):
        self.w = None

    @property
    def trainable_variables(self):
        return [] if self.w is None else [self.w]

    def __call__(self, x):
        if self.w is None:
            self.w = nt.Variable(np.ones((x.shape[-1], 1)), name="kernel")
        return x @ self.w


def test_a_model_built_inside_the_loop_appears(sched):
    model = LazyModel()
    insp = make(model, sched)
    assert "builds its weights on its first call" in insp._header
    model(np.ones((1, 3)))
    sched.run_due(0.5)                   # the poll finds the new weights
    assert [v.name for v in insp.variables] == ["kernel"]
    assert "kernel" in insp._table and sched.armed == 0
    model.w.assign_add(np.ones((3, 1)))
    assert insp._rows[0].assigns == 1
    insp.close()


def test_poll_stops_when_closed(sched):
    insp = make(LazyModel(), sched)
    insp.close()
    sched.run_due(1.0)
    assert sched.armed == 0


# throttling and the final state ---------------------------------------------------------------
def test_a_fast_loop_is_throttled_and_the_final_state_is_shown(sched, sent):
    v = nt.Variable(0.0, name="v")
    insp = make(v, sched)              # max_rate=10
    before = insp.refreshes
    for k in range(500):
        sched.now = k * 1e-4           # 500 assigns in 50 ms of fake time
        v.assign_add(1.0)
    assert insp.refreshes - before <= 1
    assert "500" not in insp._table
    sched.run_due(0.2)                 # the trailing edge
    assert "<code>500.0</code>" in insp._table
    table_updates = [m for w, m in sent if w is insp and m["method"] == "update"
                     and "_table" in m["state"]]
    assert len(table_updates) <= 3
    assert insp._rows[0].assigns == 500   # the data saw every step, only drawing was limited
    insp.close()


def test_redraws_batch_their_trait_changes(sched, sent):
    if W.__version__.startswith("7."):
        pytest.skip("ipywidgets 7 sends no messages without a kernel, so there is none "
                    "to count")
    vs = [nt.Variable(float(k)) for k in range(30)]
    insp = make(vs, sched, page_size=10, max_rate=None)
    sent.clear()
    insp.page = 1
    updates = [(w, m) for w, m in sent if m["method"] == "update"]
    # one message per redraw, however many traits changed (the page turned by hand: its
    # own message; the redraw's table, pager text and header: one more)
    assert [w for w, _ in updates] == [insp, insp]
    assert updates[0][1]["state"] == {"page": 1}
    assert {"_table", "_where"} <= set(updates[1][1]["state"])
    insp.close()


def test_cell_end_flushes_what_the_throttle_held_back(sched):
    v = nt.Variable(0.0, name="v")
    insp = make(v, sched)
    v.assign(1.0)
    sched.now = 0.01
    v.assign(42.0)
    assert "42" not in insp._table
    insp.cell_ended()
    assert "<code>42.0</code>" in insp._table and sched.armed == 0
    insp.close()


def test_max_rate_and_interval_options(sched):
    v = nt.Variable(0.0)
    insp = make(v, sched, max_rate=4)
    assert insp.interval == 0.25
    insp.interval = 0
    before = insp.refreshes
    for _ in range(5):
        v.assign_add(1.0)
    assert insp.refreshes - before == 5
    with pytest.raises(ValueError, match="max_rate"):
        make(v, sched, max_rate=0)
    with pytest.raises(ValueError, match="interval"):
        insp.interval = -1
    insp.close()


# releasing observers ------------------------------------------------------------------------
def test_close_releases_observers_and_widgets(sched):
    v = nt.Variable(1.0)
    tape = nt.GradientTape()
    gc.collect()
    n_widgets = len(open_widgets())
    insp = make([v, tape], sched)
    assert len(v._observers) == 1 and len(tape._observers) == 1
    insp.close()
    insp.close()                       # idempotent
    assert v._observers == [] and tape._observers == []
    assert len(open_widgets()) == n_widgets
    assert insp.closed and insp.widget.comm is None
    v.assign(2.0)                      # no error, nothing listens


def test_an_unreferenced_inspector_stays_open_until_closed(sched):
    # like every ipywidget: ipywidgets (and a kernel's comms) hold it, not the user
    v = nt.Variable(1.0)
    gc.collect()
    n_widgets = len(open_widgets())
    ref = weakref.ref(make(v, sched))
    gc.collect()
    assert ref() is not None and len(v._observers) == 1
    v.assign(2.0)
    ref().refresh()
    assert "<code>2.0</code>" in ref()._table
    ref().close()
    gc.collect()
    assert ref() is None and v._observers == [] and len(open_widgets()) == n_widgets


def test_many_inspectors_do_not_leak(sched):
    v = nt.Variable(1.0)
    gc.collect()
    n_widgets = len(open_widgets())
    for _ in range(50):
        insp = make(v, sched)
        v.assign_add(1.0)
        insp.close()
    del insp
    gc.collect()
    assert not v._observers
    assert len(open_widgets()) == n_widgets


def test_a_click_after_close_does_nothing(sched):
    vs = [nt.Variable(float(k)) for k in range(30)]
    insp = make(vs, sched, page_size=10)
    insp.set_state({"page": 1})        # the front end's "next" button
    assert insp.page == 1
    refreshes = insp.refreshes
    insp.close()
    insp.set_state({"page": 2})        # a message that was on its way: harmless
    assert insp.refreshes == refreshes and insp.closed


def test_it_is_a_widget_to_put_beside_others(sched):
    v = nt.Variable(1.0, name="v")
    insp = make(v, sched)
    slider = W.FloatSlider()
    row = W.HBox([insp, slider])
    assert isinstance(insp, W.DOMWidget) and row.children[0] is insp
    link = W.link((insp, "page"), (slider, "value"))      # its state is traits
    assert slider.value == 0
    link.unlink()
    v.assign(3.0)
    insp.refresh()
    assert "<code>3.0</code>" in insp._table
    insp.close()
    assert insp.comm is None and "v" in repr(insp)      # closed: still its text
    row.close()
    slider.close()


# large inputs --------------------------------------------------------------------------------
def test_hundreds_of_variables_are_paged(sched):
    vs = [nt.Variable(np.full((4, 4), float(k)), name=f"w{k}") for k in range(400)]
    t = time.perf_counter()
    insp = make(vs, sched, page_size=25)
    assert time.perf_counter() - t < 5.0
    assert insp.pages == 16 and insp._table.count("<tr>") == 26
    assert insp._where == "variables 1–25 of 400 (page 1 of 16)"
    insp.set_state({"page": 1})        # the front end's "next" button
    assert insp.page == 1 and "w25" in insp._table and "w24<" not in insp._table
    insp.page = 15
    assert insp._table.count("<tr>") == 26 and insp._where.endswith("(page 16 of 16)")
    text = repr(insp)
    assert "Showing 50 of 400 variables." in text and len(text.splitlines()) == 2 + 50 + 1
    with pytest.raises(ValueError, match="page must be"):
        insp.page = 16
    insp.close()


def test_only_the_visible_page_is_redrawn(sched, monkeypatch):
    vs = [nt.Variable(np.zeros(3)) for _ in range(100)]
    insp = make(vs, sched, page_size=10, max_rate=None)
    drawn = []
    import nbtape.notebook.widgets.inspector as mod
    real = mod.row_html
    monkeypatch.setattr(mod, "row_html", lambda st: drawn.append(st.name) or real(st))
    vs[50].assign_add(np.ones(3))         # not on the page: nothing redrawn
    vs[3].assign_add(np.ones(3))          # on the page: that row only
    assert drawn == [insp._rows[3].name]
    insp.close()


def test_a_million_element_variable_is_summarised(sched):
    big = nt.Variable(np.random.default_rng(0).normal(size=(1000, 1000)), name="big")
    insp = make(big, sched, max_rate=None)
    t = time.perf_counter()
    big.assign_add(np.ones((1000, 1000)))
    assert time.perf_counter() - t < 1.0
    html = insp._table
    assert len(html) < 20_000
    assert "histogram" in html and "evenly spaced sample" in html
    assert "mean 1" in html or "mean 0.9" in html
    insp.close()


def cells(svg):
    return svg.count("<title>[")          # a heat map's cells, each titled "[i, j] = v"


def test_pictures_by_size():
    assert picture(np.array(3.0)) == ""
    assert picture(np.zeros((1, 1))) == ""
    assert cells(picture(np.arange(10.0))) == 10
    assert cells(picture(np.arange(100.0))) == 4 * 32       # wrapped rows
    assert cells(picture(np.ones((16, 32)))) == 512
    assert "histogram" in picture(np.ones((17, 32)))
    assert "histogram" in picture(np.ones((2, 2, 2)))
    assert cells(picture(np.array([1 + 1j, 2j]))) == 2


def svg_sizes(markup, kind):
    """(width, height) of each inline <svg> whose label starts with ``kind``."""
    import re
    return [(float(w), float(h)) for w, h, label in re.findall(
        r'<svg [^>]*width="([\d.]+)" height="([\d.]+)"[^>]*aria-label="([^"]*)"', markup)
        if label.startswith(kind)]


def test_the_tables_pictures_are_large_and_heat_maps_show_their_scale(sched):
    # the sizes a teacher found too small: sparklines 96x20 px, a 2x4 heat map 40x20 px
    w = nt.Variable(np.arange(8.0).reshape(2, 4) - 3, name="w")
    insp = make([w], sched, max_rate=None)
    for _ in range(3):
        with nt.GradientTape() as tape:
            loss = np.sum(w * w)
        w.assign_sub(0.1 * tape.gradient(loss, w))
    page = insp._table
    lines = svg_sizes(page, "‖")
    assert len(lines) == 2 and all(wd >= 160 and h >= 40 for wd, h in lines), lines
    maps = svg_sizes(page, "heat map")
    assert len(maps) == 2                                  # the value and the gradient
    for wd, h in maps:
        assert wd >= 4 * 24 and h >= 2 * 24, (wd, h)       # 24 px cells
    # the colour scale is drawn, not only in a tooltip: -max, 0 and +max under each map
    assert page.count('class="nbtape-colour-scale"') == 2
    top = number(float(np.abs(w.numpy()).max()))
    assert f">-{top}</text>" in page and f">{top}</text>" in page
    big = picture(np.ones((16, 32)))
    assert svg_sizes(big, "heat map")[0][0] >= 32 * 8      # 8 px cells at the largest grid
    insp.close()


def test_long_histories_are_bounded(sched):
    v = nt.Variable(0.0)
    insp = make(v, sched, history=50, max_rate=None)
    for _ in range(500):
        v.assign_add(1.0)
    assert len(insp._rows[0].history) == 50 and insp._rows[0].history[-1] == 500.0
    insp.close()


def test_integer_and_complex_variables(sched):
    i = nt.Variable(np.array([[2, 2], [2, 2]], dtype=np.int8), name="i")
    z = nt.Variable(np.array([1 + 2j, 3 - 1j]), name="z")
    insp = make([i, z], sched)
    i.assign_add(np.ones((2, 2), dtype=np.int8))
    z.assign(np.array([0j, 1j]))
    text = repr(insp)
    assert "int8" in text and "complex128" in text and "[0.0+0.0j, 0.0+1.0j]" in text
    insp.close()


# errors ----------------------------------------------------------------------------------------
def test_errors_are_one_clear_sentence():
    with pytest.raises(TypeError, match="needs something to show"):
        nt.inspect()
    with pytest.raises(TypeError, match="nt.Variable objects first"):
        nt.inspect(np.zeros(3), display=False)
    with pytest.raises(TypeError, match="never changes"):
        nt.inspect(nt.constant(1.0), display=False)
    with pytest.raises(ValueError, match="page_size"):
        nt.inspect(nt.Variable(1.0), page_size=0, display=False)
    with pytest.raises(ValueError, match="history"):
        nt.inspect(nt.Variable(1.0), history=0, display=False)


def test_sources_flatten_nested_structures():
    a, b = nt.Variable(1.0), nt.Variable(2.0)
    src = Sources({"layer": [a, {"bias": b}], "again": a})
    assert [(n, v is a) for n, v in src.variables()] == [(None, True), ("bias", False)]
    assert not src.growing and isinstance(nt.inspect(a, display=False), Inspector)


def test_row_state_is_a_frozen_copy():
    v = nt.Variable(1.0)
    row = VariableRow(v, "v")
    s = row.state()
    row.on_assign(np.array(5.0))
    assert s.history == (1.0,) and row.state().history == (1.0, 5.0)


def test_a_real_timer_thread_and_a_busy_loop_get_along(monkeypatch):
    import threading
    errors = []
    monkeypatch.setattr(threading, "excepthook", lambda args: errors.append(args.exc_value))
    tape = nt.GradientTape(persistent=True)
    w = nt.Variable(np.zeros((3, 3)), name="w")
    insp = nt.inspect([tape, w], max_rate=200, display=False)
    end = time.perf_counter() + 0.4
    n = 0
    while time.perf_counter() < end:
        with tape:
            loss = np.sum(w * w)
        w.assign_add(tape.gradient(loss, w) * 0.0 + 1.0)
        tape.reset()
        n += 1
    deadline = time.perf_counter() + 5
    final = f"mean {number(float(n))},"
    while final not in insp._table and time.perf_counter() < deadline:
        time.sleep(0.01)                  # the trailing refresh comes from the timer thread
    assert final in insp._table
    assert not errors and insp.refreshes < n + 5 and len(insp.variables) == 1
    insp.close()

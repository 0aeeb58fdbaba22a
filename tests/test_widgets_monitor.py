"""nt.TrainingMonitor: live training curves and a tqdm-style progress line (monitor.py)."""
import gc
import re
import time

import numpy as np
import pytest

import nbtape as nt
from nbtape.notebook.widgets.monitor import Series, elapsed, gradient_norm
from nbtape.notebook.widgets.throttle import ManualScheduler
from nbtape.notebook.widgets.live import open_widgets


@pytest.fixture
def sched():
    return ManualScheduler()


def make(sched, **kw):
    return nt.TrainingMonitor(clock=sched.clock, schedule=sched, display=False, **kw)


def test_fit_a_line_and_watch_the_loss_fall(sched):
    """Seed example 18 in miniature: y = 2x - 8, fitted by SGD on |y - y_hat|."""
    x = np.arange(10.0)
    y = 2 * x - 8
    m, c = nt.Variable(0.0, name="m"), nt.Variable(0.0, name="c")
    mon = make(sched, total=300, title="fit y = 2x - 8")
    for step in mon.range(300):
        sched.now = step * 0.01
        with nt.GradientTape() as tape:
            loss = np.mean(np.abs(y - (m * x + c)))
        gm, gc_ = tape.gradient(loss, [m, c])
        m.assign_sub(0.01 * gm)
        c.assign_sub(0.01 * gc_)
        mon.log(loss=loss, grads=[gm, gc_])
    steps, losses = mon.history["loss"]
    assert steps.tolist() == list(range(300)) and losses[-1] < losses[0]
    sched.run_due(10.0)
    assert mon._bar["value"] == 300 and mon._bar["max"] == 300 and mon._bar["style"] == "success"
    assert "300/300" in mon._rate and "it/s" in mon._rate
    charts = mon._charts
    assert charts.count("<svg") == 2 and ">loss<" in charts and ">grad_norm<" in charts
    assert ">step<" in charts
    text = repr(mon)
    assert text.splitlines()[0] == "fit y = 2x - 8: 300 steps logged, 300/300"
    assert text.splitlines()[1].startswith("loss       last ")
    mon.close()


def test_log_accepts_tensors_and_one_element_arrays_and_explicit_steps(sched):
    mon = make(sched, max_rate=None)
    mon.log(loss=nt.constant(0.5), step=10)
    mon.log(loss=np.array([[0.25]]), accuracy=0.9, step=20)
    assert mon.history["loss"][0].tolist() == [10.0, 20.0]
    assert mon.history["accuracy"] == (pytest.approx(np.array([20.0])),
                                       pytest.approx(np.array([0.9])))
    assert "loss 0.25 · accuracy 0.9" in mon._head
    mon.close()


def test_log_errors_say_what_to_do(sched):
    mon = make(sched)
    with pytest.raises(ValueError, match=r"np.mean\(loss\)"):
        mon.log(loss=np.ones(3))
    with pytest.raises(ValueError, match="complex"):
        mon.log(loss=1j)
    with pytest.raises(TypeError, match="at least one metric"):
        mon.log()
    with pytest.raises(ValueError, match="total"):
        mon.total = -1
    mon.close()


def test_global_norm_of_gradients():
    assert gradient_norm([nt.constant([3.0]), None, np.array([[4.0]])]) == 5.0
    assert gradient_norm({"a": np.zeros(3)}) == 0.0


def test_updates_are_throttled_and_the_last_step_always_shows(sched):
    mon = make(sched, total=1000)
    before = mon.refreshes
    for k in range(1000):
        sched.now = k * 1e-5
        mon.log(loss=1.0 / (k + 1))
    assert mon.refreshes - before <= 1
    sched.run_due(0.2)
    assert mon._bar["value"] == 1000 and "loss 0.001" in mon._head
    assert mon.refreshes - before <= 2
    mon.close()


def test_progress_without_total_and_with_a_generator(sched):
    mon = make(sched, max_rate=None)
    for _ in mon.track(x for x in range(7)):
        pass
    assert mon.total is None and not mon._bar["shown"]
    assert "7 steps" in mon._rate
    mon.close()


def test_a_loop_left_early_is_marked_when_the_cell_ends(sched):
    mon = make(sched, max_rate=None)
    for step in mon.range(100):
        if step == 30:
            break
        mon.log(loss=1.0)
    mon.cell_ended()
    assert mon._bar["style"] == "warning" and "stopped early" in mon._rate
    assert mon._bar["value"] == 30
    mon.close()


def test_eta_and_rate_use_the_clock(sched):
    mon = make(sched, total=10, max_rate=None)
    it = iter(mon.range(10))
    next(it)
    sched.now = 2.0
    next(it)                        # one iteration done after 2 s
    assert "[00:02<00:18, 0.50 it/s]" in mon._rate
    assert elapsed(3600 * 2 + 5) == "2:00:05"
    mon.close()


def test_nonfinite_losses_leave_gaps_and_say_so(sched):
    mon = make(sched, max_rate=None)
    for v in [1.0, 0.5, float("nan"), float("inf"), 0.1]:
        mon.log(loss=v)
    assert "2 non-finite values (gaps)" in mon._charts
    assert "2 non-finite, first at step 2" in repr(mon)
    mon.close()


def test_log_scale_for_chosen_metrics(sched):
    mon = make(sched, log_y=("loss",), max_rate=None)
    for k in range(1, 50):
        mon.log(loss=10.0 ** -k / 10, acc=k / 50)
    charts = mon._charts
    assert ">loss (log)<" in charts and ">acc<" in charts and ">acc (log)<" not in charts
    mon.close()
    one = make(sched, log_y="loss", max_rate=None)
    one.log(loss=1.0, los=2.0)
    assert ">loss (log)<" in one._charts and ">los (log)<" not in one._charts
    one.close()


def test_a_long_run_draws_a_bounded_picture_quickly(sched):
    mon = make(sched, max_rate=None, width=400)
    mon.interval = 1e9                   # log quietly, draw once at the end
    for k in range(100_000):
        mon.log(loss=np.sin(k / 1000.0))
    t = time.perf_counter()
    mon.refresh()
    assert time.perf_counter() - t < 2.0
    points = re.search(r'points="([^"]*)"', mon._charts).group(1).split()
    assert len(points) <= 2 * 400
    assert len(mon._charts) < 40_000
    mon.close()


def test_series_grows_without_losing_values():
    s = Series()
    for k in range(1000):
        s.append(k, -k)
    assert s.n == 1000 and s.values[-1] == -999 and s.steps[500] == 500
    assert s.summary() == "last -999.0 at step 999, min -999.0 at step 999"
    assert Series().summary() == "no values"


def test_snapshots_are_deterministic_and_have_no_timings(sched):
    def run():
        s = ManualScheduler()
        mon = nt.TrainingMonitor(total=5, clock=s.clock, schedule=s, display=False)
        for k in mon.range(5):
            s.now = k * 3.7
            mon.log(loss=1.0 / (k + 1))
        snap = mon.snapshot()
        mon.close()
        return snap
    a, b = run(), run()
    assert a.text == b.text and a.html == b.html
    assert "it/s" not in a.text and "it/s" not in a.html
    assert "<svg" in a.html and "5/5" in a.text


def test_close_releases_widgets(sched):
    gc.collect()
    n = len(open_widgets())
    mon = make(sched)
    mon.log(loss=1.0)
    mon.close()
    assert len(open_widgets()) == n


def test_it_is_a_widget_to_put_beside_others(sched):
    mon = make(sched)
    from ipywidgets import DOMWidget, FloatLogSlider, HBox, IntText, link
    slider = FloatLogSlider(value=0.1, description="learning rate")
    row = HBox([slider, mon])
    assert isinstance(mon, DOMWidget) and row.children[1] is mon
    mon.log(loss=0.5)
    mon.refresh()
    assert "loss 0.5" in mon._head and "1 step" in mon._head
    steps = IntText(value=0)
    tie = link((steps, "value"), (mon, "total"))        # total is a trait
    steps.value = 40
    mon.refresh()
    assert mon.total == 40 and mon._bar == {"shown": True, "value": 1, "max": 40, "style": ""}
    tie.unlink()
    steps.close()
    mon.log.warning("ipywidgets logs through %s", "self.log.warning")   # the shadowed logger
    mon._handle_msg({"content": {"data": {"method": "no such method"}}})
    mon.close()
    assert mon.comm is None and repr(mon).startswith("Training: 1 step logged")
    row.close()
    slider.close()

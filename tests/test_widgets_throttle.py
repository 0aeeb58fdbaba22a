"""Rate limiting with a trailing edge: nbtape.notebook.widgets.throttle."""
import threading

import pytest

from nbtape.notebook.widgets.throttle import ManualScheduler, Throttle, thread_timer


def make(interval=0.1):
    sched = ManualScheduler()
    seen = []
    th = Throttle(lambda: seen.append(sched.now), interval, sched.clock, sched)
    return th, sched, seen


def test_a_burst_gives_one_refresh_then_one_trailing_refresh():
    th, sched, seen = make()
    for k in range(1000):
        sched.now = k * 1e-5          # 1000 pokes within 10 ms
        th.poke()
    assert seen == [0.0] and th.pending and sched.armed == 1
    sched.run_due(0.1)
    assert seen == [0.0, 0.1] and not th.pending and sched.armed == 0


def test_at_most_one_refresh_per_interval_over_a_long_loop():
    th, sched, seen = make(interval=0.1)
    for k in range(10_000):           # 10 s of fake time, a poke every millisecond
        sched.run_due(k * 1e-3)
        th.poke()
    sched.run_due(100.0)
    gaps = [b - a for a, b in zip(seen, seen[1:])]
    assert min(gaps) >= 0.1 - 1e-9
    assert 90 <= len(seen) <= 101
    assert not th.pending


def test_a_quiet_poke_refreshes_at_once():
    th, sched, seen = make()
    th.poke()
    sched.now = 5.0
    th.poke()
    assert seen == [0.0, 5.0] and sched.armed == 0


def test_flush_cancels_the_timer_and_force_redraws_anyway():
    th, sched, seen = make()
    th.poke()
    sched.now = 0.01
    th.poke()
    th.flush()
    assert seen == [0.0, 0.01] and sched.armed == 0
    th.flush()                        # nothing pending: nothing to do
    assert len(seen) == 2
    th.flush(force=True)
    assert len(seen) == 3 and th.flushes == 3


def test_a_poke_during_a_flush_is_not_lost():
    sched = ManualScheduler()
    seen = []

    def flush():
        seen.append(sched.now)
        if len(seen) == 1:
            th.poke()                 # data changed while drawing

    th = Throttle(flush, 0.1, sched.clock, sched)
    th.poke()
    assert th.pending and sched.armed == 1
    sched.run_due(0.1)
    assert seen == [0.0, 0.1] and not th.pending


def test_zero_interval_means_every_poke():
    th, sched, seen = make(interval=0.0)
    for _ in range(5):
        th.poke()
    assert len(seen) == 5


def test_bad_interval():
    with pytest.raises(ValueError, match="seconds >= 0"):
        Throttle(lambda: None, interval=-1)
    with pytest.raises(ValueError):
        Throttle(lambda: None, interval=float("nan"))


def test_real_timer_thread_delivers_the_trailing_refresh():
    done = threading.Event()
    seen = []

    def flush():
        seen.append(threading.current_thread().name)
        if len(seen) == 2:
            done.set()

    th = Throttle(flush, interval=0.05)
    th.poke()
    th.poke()                          # too early: armed for the trailing edge
    assert done.wait(5)
    assert seen[0] == threading.current_thread().name and seen[1] != seen[0]


def test_thread_timer_can_be_cancelled():
    fired = threading.Event()
    t = thread_timer(0.05, fired.set)
    t.cancel()
    assert not fired.wait(0.15)


# where no thread can start (Pyodide in JupyterLite) --------------------------------------
def test_without_threads_changes_still_show_at_most_once_per_interval():
    from nbtape.notebook.widgets.throttle import no_timer
    now, seen = [0.0], []
    th = Throttle(lambda: seen.append(now[0]), 0.1, lambda: now[0], no_timer)
    for k in range(1000):             # 1 s of a loop poking every millisecond
        now[0] = k * 1e-3
        th.poke()
    gaps = [b - a for a, b in zip(seen, seen[1:])]
    assert 9 <= len(seen) <= 11 and min(gaps) >= 0.1 - 1e-9
    assert th.pending                 # the last change waits for the end of the cell
    th.flush()
    assert not th.pending and seen[-1] == now[0]


def test_the_default_schedule_starts_no_thread_in_the_browser():
    from nbtape.notebook.widgets.throttle import default_schedule, no_timer
    assert default_schedule("emscripten") is no_timer
    assert default_schedule("linux") is thread_timer
    before = threading.active_count()
    th = Throttle(lambda: None, 0.1, schedule=default_schedule("emscripten"))
    th.poke()
    th.poke()                         # too early: a thread_timer would start a thread here
    assert threading.active_count() == before and th.pending


def test_an_inspector_without_threads_shows_the_final_value_when_the_cell_ends():
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    try:
        shell.run_cell("import nbtape as nt\n"
                       "from nbtape.notebook.widgets.throttle import no_timer\n"
                       "w = nt.Variable(0.0, name='w')\n"
                       "insp = nt.inspect(w, schedule=no_timer, max_rate=1e-3)\n"
                       "for k in range(5):\n"
                       "    w.assign(float(k + 1))\n"
                       "shown_in_loop = insp._throttle.pending", store_history=True)
        ns = shell.user_ns
        assert ns["shown_in_loop"]            # the loop outran the throttle
        assert not ns["insp"]._throttle.pending   # post_run_cell sent the final state
        assert "<code>5.0</code>" in ns["insp"]._table   # w = 5, as the loop left it
        ns["insp"].close()
    finally:
        InteractiveShell.clear_instance()

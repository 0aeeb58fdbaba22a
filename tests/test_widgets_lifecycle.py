"""Display, static snapshots, cell re-runs and release: live.py and cells.py.

Most tests drive a small stand-in shell (the three things the widgets use: an
event manager, the display hook's running cell, a display publisher).  Two
tests run the real thing in a subprocess: an IPython shell, and a Jupyter
kernel talking to a client over ZeroMQ.
"""
import gc
import json
import os
import subprocess
import sys
import textwrap
import types
import weakref

import pytest
from IPython.core.events import EventManager, available_events
from IPython.core.interactiveshell import ExecutionInfo, ExecutionResult

import nbtape as nt
from nbtape.notebook.widgets import cells, live
from nbtape.notebook.widgets.live import WIDGET_VIEW, open_widgets, weak_callback
from nbtape.notebook.widgets.throttle import ManualScheduler


class Publisher:
    def __init__(self):
        self.outputs = []
        self.calls = []

    def publish(self, data, metadata=None, **kwargs):
        self.outputs.append(data)
        self.calls.append((data, kwargs))


class Shell:
    """A stand-in for IPython's shell, enough for the widgets' life cycle."""

    def __init__(self, kernel=True):
        self.events = EventManager(self, available_events)
        self.displayhook = types.SimpleNamespace(exec_result=None)
        self.display_pub = Publisher()
        self.kernel = object() if kernel else None
        self.user_ns = {}

    def showtraceback(self, *args, **kwargs):
        raise                                  # a failing post_run_cell handler fails the test

    def run(self, fn, cell_id="cell-1", source="the cell"):
        """Run ``fn`` as one cell; a returned value is shown as IPython's display hook does."""
        info = ExecutionInfo(source, True, False, True, cell_id)
        result = ExecutionResult(info)
        self.events.trigger("pre_run_cell", info)
        self.displayhook.exec_result = result
        try:
            value = fn()
            if value is not None and hasattr(value, "_ipython_display_"):
                value._ipython_display_()
        finally:
            self.displayhook.exec_result = None
            self.events.trigger("post_run_cell", result)
        return value

    @property
    def registry(self):
        return cells.CellWidgets.of(self)


@pytest.fixture
def shell(monkeypatch):
    s = Shell()
    monkeypatch.setattr(live, "get_shell", lambda: s)
    return s


def inspect_in_loop(v, n=50, **kw):
    def cell():
        insp = nt.inspect(v, **kw)
        for _ in range(n):
            v.assign_add(1.0)
        return insp
    return cell


# display ---------------------------------------------------------------------------------
def test_in_a_kernel_the_widget_shows_at_once_and_a_snapshot_follows(shell):
    v = nt.Variable(0.0, name="v")
    insp = shell.run(inspect_in_loop(v))      # made, looped, and the last expression
    live_out, snap = shell.display_pub.outputs   # shown once, not twice
    assert live_out[WIDGET_VIEW]["model_id"] == insp.widget.model_id
    assert live_out["text/plain"] == "nt.inspect live widget: v"
    assert "text/html" not in live_out
    assert set(snap) == {"text/plain", "text/html"}
    assert "<code>50.0</code>" in snap["text/html"] and " 50.0 " in snap["text/plain"]
    assert "<code>50.0</code>" in insp._table    # the cell end flushed the widget too


def test_showing_it_again_in_a_later_cell_gives_a_new_view(shell):
    v = nt.Variable(0.0)
    insp = shell.run(inspect_in_loop(v, n=1))
    shell.run(lambda: insp, cell_id="cell-2")
    views = [o for o in shell.display_pub.outputs if WIDGET_VIEW in o]
    assert len(views) == 2 and len(shell.display_pub.outputs) == 4


def test_a_view_the_cell_puts_in_a_layout_shows_only_there(shell):
    import ipywidgets as W
    v = nt.Variable(0.0, name="v")
    row = shell.run(lambda: W.HBox([nt.inspect(v), W.FloatSlider()]))
    (shown, how), *rest = shell.display_pub.calls
    assert WIDGET_VIEW in shown and "update" not in how
    withdrawn = [(data, kw) for data, kw in rest if kw.get("update")]
    assert withdrawn == [({}, {"transient": how["transient"], "update": True})]
    assert not row.children[0].closed           # live, in the row
    # one left on its own keeps its output
    shell.run(lambda: nt.inspect(v), cell_id="cell-2")
    assert len([kw for _, kw in shell.display_pub.calls if kw.get("update")]) == 1
    row.children[0].close()
    row.children[1].close()
    row.close()


def test_no_snapshot_when_asked_not_to(shell):
    v = nt.Variable(0.0)
    shell.run(inspect_in_loop(v, snapshot=False))
    assert len(shell.display_pub.outputs) == 1


def test_a_terminal_shows_the_text_table(monkeypatch):
    s = Shell(kernel=False)
    monkeypatch.setattr(live, "get_shell", lambda: s)
    v = nt.Variable(0.0, name="v")
    insp = s.run(inspect_in_loop(v, n=3))
    assert s.display_pub.outputs == [{"text/plain": repr(insp)}]
    assert "nt.inspect: 1 variable" in repr(insp)


def test_repr_mimebundle_carries_the_view_and_a_static_copy(shell):
    mon = nt.TrainingMonitor(display=False)
    mon.log(loss=0.5)
    bundle = mon._repr_mimebundle_()
    assert set(bundle) == {WIDGET_VIEW, "text/plain", "text/html"}
    assert "loss" in bundle["text/plain"] and "<svg" in bundle["text/html"]
    mon.close()
    assert WIDGET_VIEW not in mon._repr_mimebundle_()     # a closed widget has no model


def test_a_closed_widget_displays_as_text(shell):
    v = nt.Variable(0.0)
    insp = nt.inspect(v, display=False)
    insp.close()
    shell.run(lambda: insp)
    assert shell.display_pub.outputs == [{"text/plain": repr(insp)}]


def test_snapshots_do_not_depend_on_time_or_identity(shell, monkeypatch):
    def run():
        s = Shell()
        monkeypatch.setattr(live, "get_shell", lambda: s)
        v = nt.Variable([1.0, 2.0], name="w")
        s.run(inspect_in_loop(v, n=5))
        return s.display_pub.outputs[-1]
    assert run() == run()


# the end of a cell ------------------------------------------------------------------------
def test_the_cell_end_flushes_a_widget_made_in_an_earlier_cell(shell):
    sched = ManualScheduler()
    v = nt.Variable(0.0, name="v")
    insp = shell.run(lambda: nt.inspect(v, clock=sched.clock, schedule=sched))

    def loop():
        for _ in range(100):
            v.assign_add(1.0)
    shell.run(loop, cell_id="cell-2")
    assert "<code>100.0</code>" in insp._table
    assert len(shell.display_pub.outputs) == 2           # no snapshot for a cell that did not show it


def test_the_cell_end_runs_after_an_error_too(shell):
    sched = ManualScheduler()
    v = nt.Variable(0.0, name="v")

    def failing():
        insp = nt.inspect(v, clock=sched.clock, schedule=sched)
        shell.user_ns["insp"] = insp
        for _ in range(10):
            v.assign_add(1.0)
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        shell.run(failing)
    assert "<code>10.0</code>" in shell.user_ns["insp"]._table
    assert "<code>10.0</code>" in shell.display_pub.outputs[-1]["text/html"]


# re-running a cell --------------------------------------------------------------------------
def test_rerunning_a_cell_closes_what_it_made_before(shell):
    v = nt.Variable(0.0)
    first = shell.run(inspect_in_loop(v, n=1))
    other = shell.run(inspect_in_loop(v, n=1), cell_id="cell-2")
    second = shell.run(inspect_in_loop(v, n=1))
    assert first.closed and not other.closed and not second.closed
    assert len(v._observers) == 2


def test_rerunning_a_cell_that_makes_nothing_now_still_closes_the_old_widgets(shell):
    v = nt.Variable(0.0)
    first = shell.run(inspect_in_loop(v, n=1))
    shell.run(lambda: None)              # the same cell, its nt.inspect line deleted
    assert first.closed and not v._observers and shell.registry.held() == 0


def test_without_cell_ids_the_source_text_identifies_the_cell(shell):
    v = nt.Variable(0.0)
    first = shell.run(inspect_in_loop(v, n=1), cell_id=None, source="insp = nt.inspect(v)")
    other = shell.run(inspect_in_loop(v, n=1), cell_id=None, source="something else")
    shell.run(inspect_in_loop(v, n=1), cell_id=None, source="insp = nt.inspect(v)")
    assert first.closed and not other.closed


def test_in_a_terminal_no_cell_holds_a_view_and_it_lives_until_closed(monkeypatch):
    s = Shell(kernel=False)
    monkeypatch.setattr(live, "get_shell", lambda: s)
    v = nt.Variable(0.0)
    gc.collect()
    n_widgets = len(open_widgets())
    kept = s.run(inspect_in_loop(v, n=1), cell_id=None, source="a = nt.inspect(v)")
    ref = weakref.ref(s.run(inspect_in_loop(v, n=1), cell_id=None, source="nt.inspect(v)"))
    again = s.run(inspect_in_loop(v, n=1), cell_id=None, source="a = nt.inspect(v)")
    gc.collect()
    # nothing draws a view in a terminal, so no cell output holds it and a re-run of
    # the same source closes nothing; like every ipywidget it is open until closed
    assert s.registry.held() == 0
    assert ref() is not None and not ref().closed and not kept.closed and not again.closed
    assert len(v._observers) == 3
    for view in (kept, ref(), again):
        view.close()
    gc.collect()
    assert ref() is None and v._observers == [] and len(open_widgets()) == n_widgets


def test_edited_reruns_in_plain_ipython_release_every_view_when_closed():
    """A real shell, no kernel, no cell ids: 30 edited runs of `insp = nt.inspect(w)`.

    Each run makes a view the user owns (open until closed, as any ipywidget:
    %%tape --inspect, which makes them for the user, closes its old one itself; see
    test_magics); closing them leaves no widget, layout, style or subscription behind.
    """
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    sh = InteractiveShell.instance()
    sh.run_cell("import numpy as np, nbtape as nt\nw = nt.Variable(np.ones(3), name='w')")
    gc.collect()
    before = len(open_widgets())
    views = []
    try:
        for k in range(30):
            with capture_output():
                r = sh.run_cell(f"insp = nt.inspect(w)\nw.assign_add({k}.0)", store_history=True)
            assert r.success
            views.append(sh.user_ns["insp"])
        assert cells.CellWidgets.of(sh).held() == 0       # no cell output to keep them for
        assert len(sh.user_ns["w"]._observers) == 30 and "[436.0, 436.0, 436.0]" in repr(views[0])
        for view in views:
            view.close()
        refs = [weakref.ref(view) for view in views]
        del view, views[:]
        sh.user_ns.pop("insp")
        gc.collect()
        assert len(open_widgets()) == before and sh.user_ns["w"]._observers == []
        assert all(r() is None for r in refs)
    finally:
        for name in ("insp", "w"):
            sh.user_ns.pop(name, None)


def test_several_widgets_of_one_run_live_together(shell):
    v = nt.Variable(0.0)

    def cell():
        return [nt.inspect(v), nt.TrainingMonitor()]
    a, b = shell.run(cell)
    assert not a.closed and not b.closed and shell.registry.held() == 2
    c, d = shell.run(cell)
    assert a.closed and b.closed and not c.closed and shell.registry.held() == 2


def test_a_shown_widget_nobody_keeps_stays_live_until_its_cell_reruns(shell):
    v = nt.Variable(0.0)
    refs = []

    def cell():
        refs.append(weakref.ref(nt.inspect(v)))   # displayed, then dropped
        for _ in range(3):
            v.assign_add(1.0)
    shell.run(cell)
    gc.collect()
    assert refs[0]() is not None and len(v._observers) == 1
    shell.run(cell)
    gc.collect()
    assert refs[0]() is None and len(v._observers) == 1


def test_many_reruns_leak_nothing(shell):
    v = nt.Variable(0.0)
    tape = nt.GradientTape(persistent=True)
    gc.collect()
    n_widgets = len(open_widgets())

    def cell():
        nt.inspect([v, tape])
        nt.TrainingMonitor().log(loss=1.0)
        with tape:
            y = v * v
        nt.TapePlayer(tape, y)
    for _ in range(30):
        shell.run(cell)
    gc.collect()
    assert shell.registry.held() == 3
    assert len(v._observers) == 1 and len(tape._observers) == 1
    per_run = 0
    for view in list(shell.registry._live):
        per_run += 2                    # the view and its layout
    extra = len(open_widgets()) - n_widgets
    assert extra <= per_run          # the views of one run only


def test_closing_by_hand_forgets_the_widget(shell):
    v = nt.Variable(0.0)
    insp = shell.run(inspect_in_loop(v, n=1))
    insp.close()
    assert shell.registry.held() == 0


def test_the_registry_lives_on_the_shell():
    s = Shell()
    reg = cells.CellWidgets.of(s)
    assert getattr(s, cells.ATTR) is reg and cells.CellWidgets.of(s) is reg
    assert reg.current_run() is None
    assert cells.in_kernel(s) and not cells.in_kernel(Shell(kernel=False))


def test_weak_callbacks_do_not_keep_their_object():
    class Thing:
        def hello(self):
            return 1
    t = Thing()
    cb = weak_callback(t.hello)
    ref = weakref.ref(t)
    del t
    gc.collect()
    assert ref() is None and cb() is None


# the engine stays free of widgets -------------------------------------------------------------
def run_python(code, timeout=120):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, timeout=timeout, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_engine_never_imports_ipywidgets():
    out = run_python("""
        import sys, numpy as np, nbtape as nt
        v = nt.Variable(2.0)
        v.observe(lambda *a, **k: None)
        with nt.GradientTape() as tape:
            y = np.sin(v) * v
        tape.gradient(y, v); v.assign_add(1.0)
        print("ipywidgets" in sys.modules, "IPython" in sys.modules)
    """)
    assert out.split() == ["False", "False"]


# the real thing ------------------------------------------------------------------------------------
def test_in_a_real_ipython_shell():
    out = run_python("""
        import json
        from IPython.core.interactiveshell import InteractiveShell
        from IPython.utils.capture import capture_output
        import ipywidgets   # before the stand-in kernel, which ipywidgets 7 would register with
        shell = InteractiveShell.instance()
        shell.kernel = object()                # as if a notebook front end were attached
        cell = ("import nbtape as nt\\n"
                "v = nt.Variable(0.0, name='v')\\n"
                "insp = nt.inspect(v)\\n"
                "for i in range(40): v.assign_add(1.0)\\n"
                "insp")
        with capture_output() as first:
            shell.run_cell(cell, store_history=True, cell_id="A")
        old = shell.user_ns["insp"]
        with capture_output() as second:
            shell.run_cell(cell, store_history=True, cell_id="A")
        print(json.dumps({
            "first": [sorted(o.data) for o in first.outputs],
            "snapshot": first.outputs[-1].data["text/plain"],
            "old_closed": old.closed,
            "new_closed": shell.user_ns["insp"].closed,
            "observers": len(shell.user_ns["v"]._observers),
            "errors": first.stderr + second.stderr,
        }))
    """)
    res = json.loads(out.strip().splitlines()[-1])
    assert res["first"] == [[WIDGET_VIEW, "text/plain"], ["text/html", "text/plain"]]
    assert " 40.0 " in res["snapshot"]
    assert res["old_closed"] and not res["new_closed"] and res["observers"] == 1
    assert res["errors"] == ""


def test_in_a_real_kernel_updates_flow_while_the_cell_runs():
    """The trailing-edge update is sent from the timer thread during the cell, not after."""
    jupyter_client = pytest.importorskip("jupyter_client")
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    try:
        code = textwrap.dedent("""
            import time, nbtape as nt
            v = nt.Variable(0.0, name="v")
            insp = nt.inspect(v)
            for i in range(2000):
                v.assign_add(1.0)
            time.sleep(1.0)      # the loop is over, the cell is still busy
        """)
        msg_id = kc.execute(code)
        events = []
        while True:
            msg = kc.get_iopub_msg(timeout=60)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind = msg["msg_type"]
            if kind == "status" and msg["content"]["execution_state"] == "idle":
                break
            events.append((kind, msg["content"]))
        reply = kc.get_shell_msg(timeout=60)
        assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    kinds = [k for k, _ in events]
    displays = [i for i, (k, c) in enumerate(events) if k == "display_data"]
    assert len(displays) == 2
    view, snap = events[displays[0]][1]["data"], events[displays[1]][1]["data"]
    assert WIDGET_VIEW in view and "<code>2000.0</code>" in snap["text/html"]
    updates = [i for i, (k, c) in enumerate(events) if k == "comm_msg"
               and "<code>2000.0</code>" in json.dumps(c)]
    assert updates and updates[0] < displays[1]     # shown before the cell ended
    n_updates = sum(1 for k in kinds if k == "comm_msg")
    assert n_updates < 200                         # 2000 changes, throttled


def test_without_anywidget_the_error_says_what_to_install():
    import subprocess
    import sys
    code = ("import sys; sys.modules['anywidget'] = None\n"
            "import nbtape as nt\n"
            "try:\n    nt.inspect\nexcept ModuleNotFoundError as e:\n"
            "    print(e.name, '|', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert out.startswith("anywidget | nbtape's live widgets") and 'pip install "nbtape[notebook]"' in out

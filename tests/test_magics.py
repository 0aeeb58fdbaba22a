"""The %%tape magic in a real IPython shell: every option and every failure path."""
import asyncio
import gc
import os
import sys
import types

import IPython
import numpy as np
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

import nbtape as nt
from nbtape.display import pictures
from nbtape.core.state import tls
from nbtape.diagnostics.errors import TapeConsumedError
from nbtape.notebook import magics as magics_module


def names_the_cell(tb, n, line):
    """True when traceback text ``tb`` points at line ``line`` of the cell run as In[n]."""
    if IPython.version_info[0] < 8:     # IPython 7 names the cell by its cache file
        return f"<ipython-input-{n}-" in tb
    return f"Cell In[{n}], line {line}" in tb


def clear_user_names(sh):
    """Forget the user's variables and outputs (``shell.reset`` collects garbage: slow)."""
    hidden = sh.user_ns_hidden
    for k in list(sh.user_ns):
        if k.startswith("__") or (k in hidden and sh.user_ns[k] is hidden[k]):
            continue
        del sh.user_ns[k]
    sh.user_ns["_oh"].clear()
    hook = sh.displayhook
    hook._ = hook.__ = hook.___ = ""
    sh.user_ns.update({"_": "", "__": "", "___": ""})


@pytest.fixture
def shell():
    sh = InteractiveShell.instance()
    clear_user_names(sh)
    sh.run_line_magic("colors", "nocolor")
    nt.load_ipython_extension(sh)
    sh.run_cell("import numpy as np\nimport nbtape as nt", store_history=True)
    yield sh
    nt.unload_ipython_extension(sh)
    sh.extension_manager.loaded.discard("nbtape")
    clear_user_names(sh)
    assert tls.stack == [], "recording leaked out of a test"


def run(sh, code, **kwargs):
    with capture_output() as cap:
        result = sh.run_cell(code, store_history=True, **kwargs)
    return result, cap


def texts(cap):
    """Every text/plain the cell displayed (the report, pictures, widgets)."""
    return [o.data.get("text/plain", "") for o in cap.outputs]


def report_text(cap):
    found = [t for t in texts(cap) if " recorded (" in t]
    assert len(found) == 1, texts(cap)
    return found[0]


def magics(sh):
    return sh.magics_manager.registry["TapeMagics"]


# loading -------------------------------------------------------------------------------------

def test_load_ext_twice_and_unload():
    sh = InteractiveShell.instance()
    try:
        with capture_output() as cap:
            sh.run_line_magic("load_ext", "nbtape")
            sh.run_line_magic("load_ext", "nbtape")     # harmless: "already loaded"
        assert "tape" in sh.magics_manager.magics["cell"]
        nt.load_ipython_extension(sh)                   # a direct second load replaces
        hooks = [f for f in sh.events.callbacks["post_run_cell"]
                 if getattr(f, "__self__", None).__class__.__name__ == "TapeMagics"]
        assert len(hooks) == 1
        sh.run_line_magic("unload_ext", "nbtape")
        assert "tape" not in sh.magics_manager.magics["cell"]
        assert "TapeMagics" not in sh.magics_manager.registry
        assert not [f for f in sh.events.callbacks["post_run_cell"]
                    if getattr(f, "__self__", None).__class__.__name__ == "TapeMagics"]
        r, cap = run(sh, "%%tape\nx = 1")
        assert isinstance(r.error_in_exec, UsageError)
        assert "not found" in cap.stderr
    finally:
        nt.unload_ipython_extension(sh)
        sh.extension_manager.loaded.discard("nbtape")


def test_help_text_has_usage_options_and_examples(shell):
    r, cap = run(shell, "%%tape?")
    out = cap.stdout
    assert "%%tape [NAME] [--watch VAR [VAR ...]]" in out
    for option in ("--no-persistent", "--no-auto-watch", "--grad TARGET", "--graph",
                   "--inspect"):
        assert option in out
    assert "Examples" in out and "%%tape --watch x --grad z" in out


# the basic run -------------------------------------------------------------------------------

def test_watch_number_grad_and_out(shell):
    run(shell, "x = 3.0")
    n = shell.execution_count
    r, cap = run(shell, "%%tape --watch x --grad z\ny = x ** 2\nz = y ** 2\nz")
    assert r.success
    ns = shell.user_ns
    assert isinstance(ns["x"], nt.Tensor) and float(ns["x"]) == 3.0
    tape = ns["tape"]
    assert isinstance(tape, nt.GradientTape) and tape.persistent and not tape.recording
    assert len(tape.ops) == 2
    assert ns["Out"][n] is ns["z"]
    assert "Out[%d]: nt.Tensor(81.0, shape=(), dtype=float64)" % n in cap.stdout
    text = report_text(cap)
    assert text.splitlines() == [
        "tape: 2 ops recorded (persistent)",
        "  watched: x (shape=(), float64)",
        "  results: y = 9.0, z = 81.0",
        "  gradients of z:",
        "    dz/dx = 108.0",
    ]
    # example 3: the persistent tape answers later cells too
    r, cap = run(shell, "float(tape.gradient(z, x)), float(tape.gradient(y, x))")
    assert r.result == (108.0, 6.0)


def test_report_html(shell):
    run(shell, "x = np.ones((2, 2))")
    r, cap = run(shell, "%%tape --watch x --grad z\ny = np.sum(x)\nz = y ** 2")
    html = [o.data["text/html"] for o in cap.outputs if "text/html" in o.data][0]
    assert "%%tape \u2192 tape" in html and "dz/dx" in html
    assert "[[8.0 8.0]\n [8.0 8.0]]" in html          # example 2's gradient, as a block
    assert "<script" not in html


def test_name_and_matrix_gradient(shell):
    run(shell, "x = np.ones((2, 2))")
    r, cap = run(shell, "%%tape t2 --watch x --grad z\ny = np.sum(x)\nz = y ** 2")
    assert r.success and "tape" not in shell.user_ns
    assert isinstance(shell.user_ns["t2"], nt.GradientTape)
    text = report_text(cap)
    assert text.startswith("t2: 2 ops recorded")
    assert "    dz/dx = \n      [[8.0 8.0]\n       [8.0 8.0]]" in text


def test_watch_kinds(shell):
    run(shell, "a = 2\nb = np.array([1.0, 2.0], dtype=np.float32)\nc = [0.5, 1.5]\n"
               "v = nt.Variable(1.0, name='v')\nt = nt.constant(4.0)\nv_before = v")
    r, cap = run(shell, "%%tape --watch a b c v t --no-auto-watch\ny = a * b + np.sum(c) * v * t")
    assert r.success
    ns = shell.user_ns
    assert ns["a"].dtype == np.float64 and float(ns["a"]) == 2.0      # int number -> float
    assert ns["b"].dtype == np.float32                                  # keeps float32
    assert isinstance(ns["c"], nt.Tensor) and ns["c"].shape == (2,)
    assert ns["v"] is ns["v_before"]                                   # variables stay
    assert ns["tape"].watched_variables() == (ns["v"],)
    assert "watched: a (shape=(), float64), b (shape=(2,), float32), c (shape=(2,), " \
           "float64), v (shape=(), float64), t (shape=(), float64)" in report_text(cap)


@pytest.mark.parametrize("setup, option, message", [
    ("", "--watch q", "no variable named 'q'"),
    ("k = np.arange(3)", "--watch k", "k is an int64 array"),
    ("k = nt.constant([1, 2])", "--watch k", "int64 tensor"),
    ("k = nt.Variable(2)", "--watch k", "int64 variable"),
    ("k = True", "--watch k", "bool"),
    ("k = 'text'", "--watch k", "k is a str, which cannot be differentiated"),
    ("k = [1, 2]", "--watch k", "k is a list of int64 values"),
])
def test_watch_errors_are_short_and_change_nothing(shell, setup, option, message):
    run(shell, setup + "\nx = 1.0\nran = False")
    r, cap = run(shell, f"%%tape {option} x\nran = True")
    assert isinstance(r.error_in_exec, UsageError)
    assert message in cap.stderr and "Traceback" not in cap.stdout + cap.stderr
    assert shell.user_ns["ran"] is False and "tape" not in shell.user_ns
    assert shell.user_ns["x"] == 1.0                # nothing was rebound


def test_no_auto_watch(shell):
    run(shell, "w = nt.Variable(2.0, name='w')")
    r, cap = run(shell, "%%tape --no-auto-watch\ny = w * w")
    assert shell.user_ns["tape"].watched_variables() == ()
    assert "watched: nothing" in report_text(cap)
    r, cap = run(shell, "%%tape\ny = w * w")
    assert shell.user_ns["tape"].watched_variables() == (shell.user_ns["w"],)
    assert "watched: w (shape=(), float64)" in report_text(cap)


def test_cell_calls_tape_itself(shell):
    run(shell, "x = 3.0")
    r, cap = run(shell, "%%tape --watch x\ny = x * x\ng = tape.gradient(y, x)\nfloat(g)")
    assert r.success and r.result == 6.0


def test_trailing_semicolon_silences_out(shell):
    run(shell, "x = 3.0")
    r, cap = run(shell, "%%tape --watch x\ny = x * x\ny;")
    assert r.success and r.result is None and "Out[" not in cap.stdout


def test_cell_transforms_and_print(shell):
    run(shell, "x = 3.0")
    r, cap = run(shell, "%%tape --watch x\nprint('hello')\n%time y = x * 2\nz = y + 1\nz")
    assert r.success and "hello" in cap.stdout and "Wall time" in cap.stdout
    assert float(shell.user_ns["z"]) == 7.0


def test_op_and_watch_locations_are_cell_lines(shell):
    run(shell, "x = 3.0")
    r, cap = run(shell, "%%tape --watch x\ny = x * 2\n\nz = y + 1")
    tape = shell.user_ns["tape"]
    filename = tape.ops[0].where[0]
    assert [op.where[1] for op in tape.ops] == [2, 4]    # line 1 is the %%tape line
    assert filename == tape.ops[1].where[0]
    watched, = tape.watched.values()
    where = watched.where
    assert where[:2] == (filename, 1)
    import linecache
    assert linecache.getline(filename, 1).startswith("%%tape --watch x")


# options -------------------------------------------------------------------------------------

@pytest.mark.parametrize("line, message", [
    ("--bogus", "unrecognized arguments: --bogus"),
    ("1tape", "NAME must be a variable name"),
    ("--persistent --no-persistent", "contradict"),
    ("--watch x tape", "cannot be both the tape's NAME and a --watch"),
    ("--grad 'a b'", "--grad takes the name of a variable"),
    ("--grad tape", "--grad names the tape itself"),
    ("--grad", "expected one argument"),
])
def test_bad_options_give_short_usage_errors(shell, line, message):
    run(shell, "x = 1.0\nran = False")
    r, cap = run(shell, f"%%tape {line}\nran = True")
    assert isinstance(r.error_in_exec, UsageError)
    assert message in cap.stderr
    assert "usage: %%tape [NAME]" in cap.stderr
    assert "Traceback" not in cap.stdout + cap.stderr
    assert shell.user_ns["ran"] is False and "tape" not in shell.user_ns


def test_persistent_flag_is_accepted(shell):
    r, cap = run(shell, "%%tape --persistent\ny = nt.constant(1.0) * 2")
    assert r.success and shell.user_ns["tape"].persistent


def test_options_are_not_variable_expanded(shell):
    run(shell, "n = 't3'")
    r, cap = run(shell, "%%tape $n\ny = 1")
    assert isinstance(r.error_in_exec, UsageError) and "'$n'" in cap.stderr


# --grad --------------------------------------------------------------------------------------

@pytest.mark.parametrize("body, message", [
    ("y = x * 2", "the cell did not define 'zz'"),
    ("zz = float(x * 2)", "zz is a float, not a tensor"),
    ("zz = (x > 1)", "zz has dtype bool"),
    ("zz = 2.0 * 3", "the cell recorded nothing: it never computed with x"),
    ("zz = float(x * 2)", "a value computed from the watched values left the tape through "
                          "float() at line 2"),
])
def test_grad_target_problems(shell, body, message):
    run(shell, "x = 3.0")
    r, cap = run(shell, f"%%tape --watch x --grad zz\n{body}")
    assert isinstance(r.error_in_exec, UsageError) and message in cap.stderr
    assert " recorded (" in report_text(cap)       # the cell ran: its report comes first
    assert "Traceback" not in cap.stdout + cap.stderr


def test_grad_none_rows_say_why(shell):
    run(shell, "x = nt.Variable(2.0, name='x')\nk = nt.Variable([[2, 2], [2, 2]], "
               "dtype=np.int8, name='k')\nu = 5.0")
    r, cap = run(shell, "%%tape --watch u --grad z\nz = x * x\nq = k * k")
    text = report_text(cap)
    assert "    dz/dx = 4.0" in text
    assert "    dz/du = None (no recorded path to it)" in text
    assert "dz/dk = None (The gradient with respect to variable 'k' is None: its dtype " \
           "is int8" in text


def test_grad_with_nothing_watched(shell):
    r, cap = run(shell, "%%tape --grad z\nz = nt.constant(2.0) * 3")
    assert r.success and "gradients of z: nothing is watched" in report_text(cap)


def test_grad_on_no_persistent_tape_uses_it(shell):
    run(shell, "x = 3.0")
    r, cap = run(shell, "%%tape --no-persistent --watch x --grad y\ny = x * x")
    assert r.success
    assert "dy/dx = 6.0" in report_text(cap) and "(non-persistent, used)" in report_text(cap)


def test_grad_after_the_cell_used_the_tape(shell):
    run(shell, "x = 3.0")
    r, cap = run(shell, "%%tape --no-persistent --watch x --grad y\ny = x * x\n"
                        "g = tape.gradient(y, x)")
    assert r.success
    assert "note: --grad y could not be computed: This GradientTape is not persistent" \
        in report_text(cap)


# --graph and --inspect -----------------------------------------------------------------------

@pytest.fixture
def picture_as():
    """Draw tapes with another function while a test runs (tape.graph() asks nbtape.display.pictures)."""
    graph_module = pytest.importorskip("nbtape.notebook.graph")
    swapped = []

    def swap(draw):
        swapped.append(pictures.register(draw, graph_module.inline_svg))
    yield swap
    if swapped:
        pictures.register(*swapped[0])


def test_graph_uses_the_cells_names(shell, picture_as):
    graph_module = pytest.importorskip("nbtape.notebook.graph")
    seen = {}
    real = graph_module.tape_graph

    def spy(tape, **kwargs):
        seen.update(kwargs)
        return real(tape, **kwargs)
    picture_as(spy)
    run(shell, "x = 3.0\nw = nt.Variable(1.0, name='weight')")
    r, cap = run(shell, "%%tape --watch x --graph --grad z\ny = x * w\nz = y ** 2")
    assert r.success
    ns = shell.user_ns
    names = seen["names"]
    assert names[ns["x"]] == "x" and names[ns["y"]] == "y" and names[ns["z"]] == "z"
    assert names[ns["w"]] == "w"
    assert seen["target"] is ns["z"]
    pictures = [o for o in cap.outputs if "image/svg+xml" in o.data]
    assert len(pictures) == 1 and "<svg" in pictures[0].data["image/svg+xml"]


def test_graph_failure_is_one_line(shell, picture_as):
    def broken(tape, **kwargs):
        raise RuntimeError("no layout program")
    picture_as(broken)
    r, cap = run(shell, "%%tape --graph\ny = nt.constant(1.0) * 2")
    assert r.success
    assert "%%tape --graph: could not show it: RuntimeError: no layout program" in cap.stdout


def test_inspect_shows_before_the_cell_and_follows_it(shell, monkeypatch):
    calls = []

    class FakeInspector:
        def __init__(self, tape):
            self.tape, self.closed = tape, False
            self.ops_at_start = len(tape.ops)

        def close(self):
            self.closed = True

    def fake_inspect(tape, display):
        calls.append(display)
        return FakeInspector(tape)
    monkeypatch.setitem(sys.modules, "nbtape.notebook.widgets",
                        types.SimpleNamespace(inspect=fake_inspect))
    run(shell, "w = nt.Variable(2.0, name='w')")
    cell = "%%tape --inspect\nloss = w * w"
    r, cap = run(shell, cell)
    assert r.success and calls == [True]
    (first,) = magics(shell)._inspectors.values()
    assert first.tape is shell.user_ns["tape"] and first.ops_at_start == 0
    run(shell, cell)                                   # a re-run closes the old one
    assert first.closed and len(magics(shell)._inspectors) == 1


def test_real_inspector(shell):
    pytest.importorskip("ipywidgets")
    run(shell, "w = nt.Variable(2.0, name='w')")
    r, cap = run(shell, "%%tape --inspect\nloss = w * w\ng = tape.gradient(loss, w)")
    assert r.success
    (insp,) = magics(shell)._inspectors.values()
    assert "w" in str(insp)
    insp.close()


def test_inspect_missing_widgets_is_one_line(shell, monkeypatch):
    monkeypatch.setitem(sys.modules, "nbtape.notebook.widgets", None)   # import fails
    r, cap = run(shell, "%%tape --inspect\ny = nt.constant(1.0) * 2")
    assert r.success and "%%tape --inspect: could not show it: ModuleNotFoundError" in cap.stdout


# failures ------------------------------------------------------------------------------------

def test_error_in_cell_fails_the_cell_and_keeps_the_tape(shell):
    run(shell, "x = 3.0")
    n = shell.execution_count
    r, cap = run(shell, "%%tape --watch x --grad y\ny = x * x\nz = 1 / 0\nw = 3")
    assert not r.success and isinstance(r.error_in_exec, ZeroDivisionError)
    assert "w" not in shell.user_ns
    tape = shell.user_ns["tape"]
    assert not tape.recording and tls.stack == [] and len(tape.ops) == 1
    assert "Recording stopped by ZeroDivisionError at line 3: `tape` keeps the 1 op " \
           "recorded before it; recording is off." in report_text(cap)
    assert "gradients of" not in report_text(cap)     # --grad is skipped after an error
    tb = cap.stdout
    assert names_the_cell(tb, n, 3) and "----> 3 z = 1 / 0" in tb
    assert "      1 %%tape --watch x --grad y" in tb
    assert "nbtape" not in tb.split("ZeroDivisionError: division by zero")[0].split(
        "Traceback (most recent call last)")[1].replace("%%tape", "")
    assert "run_cell_magic" not in tb and "skipping hidden" not in tb
    r, cap = run(shell, "float(tape.gradient(y, x))")
    assert r.result == 6.0


def test_error_deeper_in_user_functions_keeps_their_frames(shell):
    run(shell, "def f(v):\n    return v / undefined_name\nx = 1.0")
    r, cap = run(shell, "%%tape --watch x\ny = f(x)")
    assert isinstance(r.error_in_exec, NameError)
    tb = cap.stdout
    assert tb.index("----> 2 y = f(x)") < tb.index("return v / undefined_name")


def test_syntax_error_is_short(shell):
    run(shell, "ran = False")
    r, cap = run(shell, "%%tape\nran = True\ny = x *\n")
    assert isinstance(r.error_in_exec, UsageError)
    assert "the cell has a syntax error at line 3:" in cap.stderr
    assert "y = x *" in cap.stderr and "^" in cap.stderr
    assert "Traceback" not in cap.stdout + cap.stderr
    assert shell.user_ns["ran"] is False and "tape" not in shell.user_ns


@pytest.mark.parametrize("body", ["a = (1,\n", "s = '''\nnot closed\n", "for i in x:\n"])
def test_an_unfinished_cell_says_so_in_plain_words(shell, body):
    # Python 3.13 raises the private _IncompleteInputError for these
    r, cap = run(shell, "%%tape\n" + body)
    assert isinstance(r.error_in_exec, UsageError)
    err = cap.stderr
    assert "the cell has a syntax error at line" in err and "_Incomplete" not in err
    assert any(why in err for why in ("a bracket, a string or a block is still open",
                                      "was never closed", "unterminated",
                                      "expected an indented block")), err
    assert "Traceback" not in cap.stdout + err


def test_keyboard_interrupt_keeps_the_records_and_marks_the_tape(shell):
    run(shell, "x = 1.0")
    r, cap = run(shell, "%%tape --watch x\nfor i in range(5):\n    x = x * 2\n"
                        "    if i == 2:\n        raise KeyboardInterrupt\n")
    assert isinstance(r.error_in_exec, KeyboardInterrupt)
    tape = shell.user_ns["tape"]
    assert tape.interrupted and len(tape.ops) == 3 and tls.stack == []
    assert "Interrupted (Ctrl-C) at line 5: `tape` keeps the 3 ops recorded" \
        in report_text(cap)
    assert "interrupted" in repr(tape)
    assert "KeyboardInterrupt" in cap.stdout


def test_recording_never_leaks_into_the_next_cell(shell):
    run(shell, "w = nt.Variable(1.0)")
    r, cap = run(shell, "%%tape\ninner = nt.GradientTape()\ninner.__enter__()\ny = w * 2")
    assert r.success and tls.stack == []
    assert "the cell left 1 recorder(s) open (GradientTape)" in report_text(cap)
    run(shell, "z = w * 3")
    assert len(shell.user_ns["inner"].ops) == 1 and len(shell.user_ns["tape"].ops) == 1


def test_report_failure_never_hides_the_cells_error(shell, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("report bug")
    monkeypatch.setattr(magics_module.cell_report, "tape_nbytes", broken)
    r, cap = run(shell, "%%tape\n1 / 0")
    assert isinstance(r.error_in_exec, ZeroDivisionError)
    assert "nbtape could not summarise the tape: RuntimeError('report bug')" in cap.stdout


# await ---------------------------------------------------------------------------------------

def test_top_level_await_runs_where_no_loop_is_running(shell):
    run(shell, "x = 2.0")
    r, cap = run(shell, "%%tape --watch x\nimport asyncio\nawait asyncio.sleep(0)\n"
                        "y = x * 3\nawait asyncio.sleep(0, result=y)")
    assert r.success and float(r.result) == 6.0
    assert len(shell.user_ns["tape"].ops) == 1


def test_top_level_await_in_a_kernel_says_it_is_unsupported(shell):
    run(shell, "x = 2.0\nran = False")
    code = "%%tape --watch x\nimport asyncio\nran = True\nawait asyncio.sleep(0)"

    async def in_a_running_loop():
        with capture_output() as cap:
            result = await shell.run_cell_async(
                code, store_history=True, transformed_cell=shell.transform_cell(code))
        return result, cap
    r, cap = asyncio.run(in_a_running_loop())
    assert isinstance(r.error_in_exec, UsageError)
    assert "does not support top-level `await` in a notebook" in cap.stderr
    assert shell.user_ns["ran"] is False and "tape" not in shell.user_ns


# size and lifecycle --------------------------------------------------------------------------

def test_large_tape_says_ops_memory_and_a_tape_per_step(shell):
    magics(shell).large_ops = 50
    run(shell, "w = nt.Variable(np.ones(100), name='w')")
    r, cap = run(shell, "%%tape\nfor step in range(30):\n    loss = np.sum(w * w)")
    text = report_text(cap)
    assert "note: This tape holds 60 ops and about " in text
    assert "kB" in text and "record a new tape per step" in text
    r, cap = run(shell, "%%tape\nloss = np.sum(w * w)")
    assert "note:" not in report_text(cap)


def test_rerun_replaces_the_cells_tape(shell):
    run(shell, "x = 3.0")
    cell = "%%tape --watch x\ny = x * x\ntape"
    run(shell, cell)
    old = shell.user_ns["tape"]
    n = shell.execution_count
    run(shell, cell)
    new = shell.user_ns["tape"]
    assert new is not old and len(new.ops) == 1
    assert len(old.ops) == 0 and dict(old.watched) == {}   # Out[] still holds it: emptied
    assert f"ran again (In[{n}])" in old.retired
    assert "retired" in repr(old) and "Replaced when its %%tape cell ran again" in \
        old._repr_html_()
    # an old reference that asks for a gradient is told why, not given a silent None
    with pytest.raises(TapeConsumedError, match="retired.*ran again"):
        old.gradient(shell.user_ns["y"], shell.user_ns["x"])
    # a cell with another tape name is a different cell: its tape is kept
    run(shell, "%%tape other --watch x\nq = x + 1")
    assert len(new.ops) == 1 and new.retired is None


def test_without_cell_ids_an_edited_cell_is_known_by_its_tape_name(shell):
    run(shell, "x = 3.0")
    run(shell, "%%tape --watch x\ny = x * x")
    first = shell.user_ns["tape"]
    run(shell, "%%tape --watch x\ny = x * x * x")        # edited: no id says it is the same
    assert len(first.ops) == 0 and first.retired is not None
    # with cell ids, two cells may both name their tape `tape`: each keeps its own
    run(shell, "%%tape --watch x\ny = x * x", cell_id="cell-a")
    a = shell.user_ns["tape"]
    run(shell, "%%tape --watch x\nq = x + 1", cell_id="cell-b")
    assert len(a.ops) == 1 and a.retired is None


def test_rerun_with_a_cell_id_replaces_even_after_an_edit(shell):
    run(shell, "x = 3.0")
    run(shell, "%%tape --watch x\ny = x * x", cell_id="cell-7")
    old = shell.user_ns["tape"]
    run(shell, "%%tape --watch x\ny = x * x * x", cell_id="cell-7")
    assert len(old.ops) == 0 and len(shell.user_ns["tape"].ops) == 2
    run(shell, "%%tape --watch x\ny = x * x * x", cell_id="cell-8")
    assert len(shell.user_ns["tape"].ops) == 2


def test_rerun_frees_the_old_tape_when_nothing_holds_it(shell):
    import weakref
    run(shell, "x = 3.0")
    cell = "%%tape --watch x\ny = x * x"
    run(shell, cell)
    ref = weakref.ref(shell.user_ns["tape"])
    run(shell, cell)
    gc.collect()
    assert ref() is None


def test_second_gradient_of_a_no_persistent_tape_says_how_to_fix(shell):
    run(shell, "x = 3.0")
    n = shell.execution_count
    run(shell, "%%tape --no-persistent --watch x\ny = x * x")
    r, cap = run(shell, "g1 = tape.gradient(y, x)")
    assert r.success
    r, cap = run(shell, "g2 = tape.gradient(y, x)")
    assert isinstance(r.error_in_exec, TapeConsumedError)
    assert f"`tape` was recorded by %%tape --no-persistent in In[{n}]" in cap.stdout
    assert "drop --no-persistent" in cap.stdout and "--persistent" in cap.stdout


def test_second_gradient_of_a_plain_tape_gets_the_notebook_hint(shell):
    run(shell, "x = nt.Variable(3.0)\nwith nt.GradientTape() as t:\n    y = x * x\n"
               "g1 = t.gradient(y, x)")
    r, cap = run(shell, "g2 = t.gradient(y, x)")
    assert isinstance(r.error_in_exec, TapeConsumedError)
    assert "Record it with %%tape (persistent by default)" in cap.stdout


def test_no_hint_for_other_errors(shell):
    r, cap = run(shell, "1 / 0")
    assert "nbtape:" not in cap.stdout


# rich display as a cell's last expression ----------------------------------------------------

def test_values_display_with_text_and_html(shell):
    run(shell, "x = nt.Variable(3.0, name='x')\nwith nt.GradientTape() as t:\n    y = x ** 3")
    for expr, text in [("y", "nt.Tensor(27.0, shape=(), dtype=float64)"),
                       ("x", "<nt.Variable 'x' shape=() dtype=float64, numpy=3.0>"),
                       ("t", "<nt.GradientTape non-persistent: 1 op recorded; watching "
                             "variable 'x' shape=()>")]:
        data, _ = shell.display_formatter.format(shell.user_ns[expr])
        assert data["text/plain"] == text
        assert data["text/html"].startswith("<div class='nbtape-repr")


@pytest.mark.parametrize("front_end", ["plain IPython", "a kernel that sends no cell id"])
def test_edited_reruns_without_cell_ids_keep_one_inspector_and_one_tape(shell, front_end):
    pytest.importorskip("ipywidgets")
    import weakref
    from nbtape.notebook.widgets.live import open_widgets
    if front_end != "plain IPython":
        shell.kernel = object()          # widgets display as in a notebook front end
    try:
        run(shell, "w = nt.Variable(np.ones(3), name='w')")
        gc.collect()
        before = len(open_widgets())
        tapes, views = [], []
        for k in range(30):
            r, cap = run(shell, f"%%tape --inspect\nloss = np.sum(w * w * {k})\n"
                                "g = tape.gradient(loss, w)")
            assert r.success
            tapes.append(weakref.ref(shell.user_ns["tape"]))
            views.extend(weakref.ref(v) for v in magics(shell)._inspectors.values())
        gc.collect()
        (insp,) = magics(shell)._inspectors.values()
        assert not insp.closed
        assert [v() for v in views if v() is not None] == [insp]    # the old ones are gone
        # the live inspector (one widget: itself and its layout), and nothing else
        one_run = {id(insp), id(insp.layout)}
        assert len(open_widgets()) - before <= len(one_run)
        assert len(shell.user_ns["w"]._observers) == 1
        assert sum(t() is not None for t in tapes) == 1          # the old tapes are gone
    finally:
        if front_end != "plain IPython":
            del shell.kernel
        for insp in list(magics(shell)._inspectors.values()):
            insp.close()


# names, hints, tracebacks ----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["np", "nt"])
def test_tape_name_never_shadows_a_module(shell, name):
    r, cap = run(shell, f"%%tape {name}\nran = True")
    assert isinstance(r.error_in_exec, UsageError)
    assert f"NAME {name!r} is the" in cap.stderr and "module" in cap.stderr
    assert "give the tape another name" in cap.stderr and "Traceback" not in cap.stdout
    assert isinstance(shell.user_ns[name], types.ModuleType) and "ran" not in shell.user_ns


def test_grad_hint_names_an_escape_through_np_asarray(shell):
    run(shell, "x = 3.0")
    r, cap = run(shell, "%%tape --watch x --grad z\nz = np.asarray(x) ** 2")
    assert isinstance(r.error_in_exec, UsageError)
    message = cap.stderr
    assert "x left the tape through np.asarray at line 2" in message
    assert "(z = np.asarray(x) ** 2)" in message
    assert "name its inputs with --watch" not in message         # the old, wrong advice


def test_grad_row_names_an_escape_through_np_asarray(shell):
    run(shell, "x = 3.0\nw = nt.Variable(2.0, name='w')")
    r, cap = run(shell, "%%tape --watch x --grad z\nz = np.asarray(x) ** 2 * w")
    assert r.success
    text = report_text(cap)
    assert "dz/dx = None (a value computed from the source left the tape through np.asarray " \
           "at line 2" in text
    assert "dz/dw = 9.0" in text


@pytest.mark.parametrize("kind", ["number", "array"])
def test_grad_hint_names_an_alias_of_the_value_watch_replaced(shell, kind):
    value = "3.0" if kind == "number" else "np.array([1.0, 2.0])"
    run(shell, f"x = {value}\nxs = x\nw = nt.Variable(2.0, name='w')")
    alias = "`xs` still holds the plain value that `x` had before --watch made x a tensor"
    r, cap = run(shell, "%%tape --watch x --grad z\nz = np.sum(xs ** 2)")
    assert isinstance(r.error_in_exec, UsageError) and alias in cap.stderr
    assert "use x in the cell, or watch xs too (--watch x xs)" in cap.stderr
    # run again: x is a tensor by now, and xs still the plain value it replaced
    r, cap = run(shell, "%%tape --watch x --grad z\nz = np.sum(xs ** 2) * w")
    assert r.success and f"dz/dx = None ({alias}" in report_text(cap)
    # a cell that computes with x itself gets its gradient, and no alias note
    r, cap = run(shell, "%%tape --watch x --grad z\nz = np.sum(x ** 2) * w + 0 * np.sum(xs)")
    assert "still holds" not in report_text(cap) and "dz/dx = None" not in report_text(cap)


def test_an_unrelated_name_is_not_called_an_alias(shell):
    run(shell, "x = np.array([1.0, 2.0])\nxs = np.array([1.0, 2.0])\nw = nt.Variable(2.0)")
    r, cap = run(shell, "%%tape --watch x --grad z\nz = np.sum(xs ** 2) * w")
    assert "still holds" not in report_text(cap)
    assert "dz/dx = None (no recorded path to it)" in report_text(cap)


def test_errors_from_nbtape_calls_in_a_cell_show_the_cell_line_only(shell):
    run(shell, "x = 3.0")
    n = shell.execution_count
    r, cap = run(shell, "%%tape --watch x\ny = x * x\ng = tape.gradient(y, x, "
                        "output_gradients='abc')")
    assert isinstance(r.error_in_exec, TypeError)
    tb = cap.stdout
    assert names_the_cell(tb, n, 3) and "it must be numbers" in tb
    assert os.path.dirname(nt.__file__) not in tb, tb

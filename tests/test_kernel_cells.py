"""The notebook layer in a real Jupyter kernel, driven by nbclient as a front end would.

Cell numbers such as the ``In[13]`` in nbtape's messages must be the number of the
cell meant, and from IPython 9.8 on ``shell.execution_count`` already names the
next cell while a cell runs.  nbval cannot check them: it runs cells with
``store_history=False``, so there every cell is ``In[1]`` (``sanitize.cfg`` hides
the numbers).  nbclient runs cells as a front end does, and these tests check
each number against the ``execution_count`` the kernel itself gave the cell.  They run in the development environment and in
every environment that ``test_environments.py`` builds (IPython 7.34 to 9,
ipywidgets 7.7 to 8).
"""
import re
from pathlib import Path

import IPython
import nbclient
import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# IPython 8 and later head a traceback frame in a cell with "Cell In[N], line L";
# IPython 7 names the kernel's file for the cell instead, which carries no number.
NUMBERS_IN_TRACEBACKS = IPython.version_info[0] >= 8


def execute(nb):
    client = nbclient.NotebookClient(nb, timeout=300, allow_errors=True,
                                     kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()
    return nb


def text_of(output):
    if output.output_type == "stream":
        return output.text
    if output.output_type == "error":
        return ANSI.sub("", "\n".join(output.traceback))
    return output.get("data", {}).get("text/plain", "")


def errors(nb):
    return {(cell.id, o.ename) for cell in nb.cells if cell.cell_type == "code"
            for o in cell.outputs if o.output_type == "error"}


def check_cell_numbers(nb):
    """Every ``In[N]`` nbtape or IPython printed names the cell it means; returns how many."""
    count_of = {}                     # tape name -> number of the %%tape cell recording it
    checked = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        first = cell.source.split("\n", 1)[0].split()
        if first[:1] == ["%%tape"]:
            name = first[1] if len(first) > 1 and not first[1].startswith("-") else "tape"
            count_of[name] = cell.execution_count
        for output in cell.outputs:
            text = text_of(output)
            for name, n in re.findall(r"`(\w+)` was recorded by %%tape --no-persistent "
                                      r"in In\[(\d+)\]", text):
                assert int(n) == count_of[name], (cell.source, text)
                checked += 1
            if output.output_type == "error" and NUMBERS_IN_TRACEBACKS:
                for n in re.findall(r"Cell In\[(\d+)\], line \d+", text):
                    assert int(n) == cell.execution_count, (cell.source, text)
                    checked += 1
    return checked


def test_cell_numbers_in_a_real_kernel():
    new = nbformat.v4.new_code_cell
    nb = nbformat.v4.new_notebook(cells=[
        new("%load_ext nbtape\nimport nbtape as nt\nx = 3.0"),
        new("%%tape once --no-persistent --watch x\ny = x * x"),
        new("g1 = once.gradient(y, x)"),
        new("g2 = once.gradient(y, x)"),
        new("%%tape\ny = x * 2\nz = 1 / 0"),
        new("import ipywidgets as W\nw = nt.Variable(1.0, name='w')\n"
            "W.HBox([nt.inspect(w), W.FloatSlider(description='lr')])"),
    ])
    execute(nb)
    assert [c.execution_count for c in nb.cells] == [1, 2, 3, 4, 5, 6]
    assert {ename for _, ename in errors(nb)} == {"TapeConsumedError", "ZeroDivisionError"}
    hint = "".join(text_of(o) for o in nb.cells[3].outputs)
    assert "`once` was recorded by %%tape --no-persistent in In[2]" in hint
    assert "Re-run In[2] to record it again" in hint
    failing = "".join(text_of(o) for o in nb.cells[4].outputs)
    assert "----> 3 z = 1 / 0" in failing
    if NUMBERS_IN_TRACEBACKS:
        assert "Cell In[5], line 3" in failing
    assert check_cell_numbers(nb) == (3 if NUMBERS_IN_TRACEBACKS else 1)
    # an inspector put in a layout shows once, in the layout (its own output is emptied)
    views = [o.data for o in nb.cells[5].outputs if WIDGET_VIEW in o.get("data", {})]
    assert len(views) == 1 and views[0]["text/plain"].startswith("HBox(")
    assert "nt.inspect: 1 variable" in "".join(text_of(o) for o in nb.cells[5].outputs)


@pytest.mark.slow
def test_the_tape_magic_tutorial_in_a_real_kernel():
    # 3d: the magic's failing cells and its --inspect loop (3c keeps the everyday options)
    path = NOTEBOOKS / "03d_more_of_the_tape_magic.ipynb"
    stored = nbformat.read(path, as_version=4)
    ran = execute(nbformat.read(path, as_version=4))
    # the cells meant to fail (a used non-persistent tape, a name error), and no other
    assert errors(ran) == errors(stored) and errors(ran)
    assert check_cell_numbers(ran) >= 1
    widgets = [o for c in ran.cells if c.cell_type == "code" for o in c.outputs
               if WIDGET_VIEW in o.get("data", {})]
    assert widgets, "the --inspect cell showed no live widget"


@pytest.mark.slow
def test_a_widget_tutorial_in_a_real_kernel():
    path = NOTEBOOKS / "07_forward_and_reverse_mode.ipynb"
    stored = nbformat.read(path, as_version=4)
    ran = execute(nbformat.read(path, as_version=4))
    assert errors(ran) == errors(stored)
    views = [o for c in ran.cells if c.cell_type == "code" for o in c.outputs
             if WIDGET_VIEW in o.get("data", {})]
    stored_views = [o for c in stored.cells if c.cell_type == "code" for o in c.outputs
                    if WIDGET_VIEW in o.get("data", {})]
    assert views and len(views) == len(stored_views)
    assert all(v.data["text/plain"].startswith("nt.TapePlayer") for v in views)

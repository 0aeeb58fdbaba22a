"""The marimo edition of tutorial 3 (notebooks/marimo/): it runs, and its exercise is checked.

marimo runs the app as a script (``app.run()``, no browser: the browser test is
``tests/browser/test_marimo_in_browser.py``).  As for the Jupyter tutorials
(``test_tutorial_exercises.py``): the saved file's check says "not yet", and the folded
solution run in place of the stub turns it to "correct", so a check that accepts
anything fails here.  Every name the notebook defines is defined by one cell only (marimo
refuses the notebook otherwise), and it mirrors tutorial 3's exercise.
"""
import importlib.util
import re
from pathlib import Path

import pytest

mo = pytest.importorskip("marimo")

ROOT = Path(__file__).resolve().parent.parent
TUTORIAL = ROOT / "notebooks" / "marimo" / "03_gradient_tape_basics.py"
STUB = "    # your code here: record f with a tape, then\n    answer = None\n"


@pytest.fixture(autouse=True, scope="module")
def ipython_display_given_back():
    """marimo, once it formats an output, swaps IPython's ``display`` functions for its
    own, for the rest of the process; the tests after this module (``nt.plot_style.show``
    publishing through IPython) need IPython's, so they are put back."""
    import IPython.core.display_functions as functions
    import IPython.display as display
    names = ("display", "update_display")
    saved = [(m, n, getattr(m, n)) for m in (display, functions) for n in names]
    yield
    for module, name, value in saved:
        setattr(module, name, value)


def run_app(path):
    spec = importlib.util.spec_from_file_location(f"marimo_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.app.run()


def solution(text):
    """The code of the folded solution (the accordion's ```python block)."""
    block = re.search(r"```python\n(.*?)```", text, re.S)[1]
    lines = [line[4:] if line.startswith("    ") else line for line in block.splitlines()]
    return "\n".join(lines)


def feedback_of(outputs):
    import nbtape as nt
    (fb,) = [o for o in outputs if isinstance(o, nt.exercises.Feedback)]
    return fb


def test_the_saved_notebook_runs_and_its_check_says_not_yet():
    outputs, defs = run_app(TUTORIAL)
    fb = feedback_of(outputs)
    assert not fb.passed and "`answer` is None" in str(fb) and "tape.explain(f, w)" in str(fb)
    assert defs["answer"] is None
    # the summary of nt.tape_cell, the picture, and the player wrapped by mo.ui.anywidget
    kinds = {type(o).__name__ for o in outputs}
    assert {"TapeCell", "TapeDigraph", "anywidget"} <= kinds
    (player,) = [o for o in outputs if type(o).__name__ == "anywidget"]
    assert player.value["frame"] == 0 and player.value["last"] >= 3
    assert "nbtape" in type(player.widget).__module__


def test_the_solution_turns_the_check_to_correct(tmp_path):
    text = TUTORIAL.read_text()
    assert text.count(STUB) == 1
    code = "\n".join("    " + line for line in solution(text).splitlines()) + "\n"
    solved = tmp_path / "solved.py"
    solved.write_text(text.replace(STUB, code))
    outputs, defs = run_app(solved)
    fb = feedback_of(outputs)
    assert fb.passed, str(fb)


def test_it_asks_the_same_exercise_as_the_jupyter_tutorial():
    import nbformat
    nb = nbformat.read(ROOT / "notebooks" / "03_gradient_tape_basics.ipynb", as_version=4)
    jupyter = "".join(c.source for c in nb.cells if "exercises.check" in c.source)
    assert '"03-gradient"' in jupyter and '"03-gradient"' in TUTORIAL.read_text()


def test_marimo_shows_nbtape_objects_through_its_display_protocols():
    import nbtape as nt
    w = nt.Variable(2.0, name="w")
    with nt.GradientTape(persistent=True) as tape:
        y = w * w
    insp = nt.inspect(w, display=False)         # a widget as a cell's last expression
    assert "<marimo-anywidget" in mo.as_html(insp).text
    picture = mo.as_html(tape.graph(target=y)).text    # through TapeDigraph._mime_
    assert "svg" in picture and "np.multiply" in picture
    assert "nbtape-tape" in mo.as_html(tape).text      # engine reprs: _repr_html_
    insp.close()

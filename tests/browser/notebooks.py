"""Notebook files for the browser tests: copies of the tutorials and small purpose-built ones.

The copies go to the server's temporary root with their outputs stripped, so every
output in the browser was produced by this run (a stale saved picture cannot pass for
a fresh one) and the repository's notebooks are never touched.  The saved outputs are
still useful: they say which cells the authors' run showed a picture or a widget in,
which is what the browser must show too.
"""
import collections
import json
import shutil
from pathlib import Path

from .server import KERNEL_NAME, REPO

TUTORIALS = REPO / "notebooks"
SVG = "image/svg+xml"
WIDGET = "application/vnd.jupyter.widget-view+json"

Expected = collections.namedtuple("Expected", "pictures widgets stderr tags")
Expected.__doc__ = "What the saved run of one code cell showed (counts), and its tags."


def tutorial_notebooks():
    """The tutorial notebooks, in order (whatever has landed in ``notebooks/``)."""
    return sorted(TUTORIALS.glob("[0-9]*.ipynb"))


def read(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def stripped(nb):
    """``nb`` without outputs or execution counts (a copy).

    >>> nb = {"cells": [{"cell_type": "code", "source": "1", "outputs": [{}],
    ...                  "execution_count": 3, "metadata": {}}], "metadata": {}}
    >>> c = stripped(nb)["cells"][0]; c["outputs"], c["execution_count"], nb["cells"][0]["outputs"]
    ([], None, [{}])
    """
    nb = json.loads(json.dumps(nb))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    return nb


def copy_tutorials(root):
    """Copy ``notebooks/`` (data files too) under ``root``, notebooks without outputs."""
    dest = Path(root)
    shutil.copytree(TUTORIALS, dest, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    for path in dest.glob("*.ipynb"):
        write(path, stripped(read(path)))
    return dest


def write(path, nb):
    Path(path).write_text(json.dumps(nb, indent=1, ensure_ascii=False), encoding="utf-8")


def expectations(nb):
    """``{cell index: Expected}`` for the code cells of a saved notebook.

    >>> nb = {"cells": [{"cell_type": "markdown", "source": "", "metadata": {}},
    ...   {"cell_type": "code", "source": "", "metadata": {"tags": ["x"]}, "outputs": [
    ...     {"output_type": "display_data", "data": {"image/svg+xml": "<svg/>"}},
    ...     {"output_type": "stream", "name": "stderr", "text": "careful"}]}]}
    >>> expectations(nb)
    {1: Expected(pictures=1, widgets=0, stderr=True, tags=('x',))}
    """
    out = {}
    for k, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        outputs = cell.get("outputs", [])
        out[k] = Expected(
            pictures=sum(SVG in o.get("data", {}) for o in outputs),
            widgets=sum(WIDGET in o.get("data", {}) for o in outputs),
            stderr=any(o.get("output_type") == "stream" and o.get("name") == "stderr"
                       for o in outputs),
            tags=tuple(cell.get("metadata", {}).get("tags", ())))
    return out


def new_notebook(*sources):
    """A notebook of code cells (nbformat 4) for the tutorials' kernel spec."""
    cells = [{"cell_type": "code", "execution_count": None, "id": f"cell-{k}",
              "metadata": {}, "outputs": [], "source": src}
             for k, src in enumerate(sources)]
    return {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": KERNEL_NAME, "display_name": "Python 3",
                                        "language": "python"},
                         "language_info": {"name": "python"}}}


# The purpose-built notebooks.  Each first cell reports which Python and which nbtape
# the kernel runs, so a test can check it is this interpreter and this checkout.
WHO = ("import sys, time\nimport numpy as np\nimport nbtape as nt\n"
       "print('python:', sys.executable)\nprint('nbtape:', nt.__file__)")

# Gradient descent on (w - 3)^2 from w = 0, slowed down so a person (and the test)
# can watch: 25 steps of 0.15 s, longer than the widgets' 0.1 s refresh interval, so
# each step can show.  The end marker is printed after the loop.
LOOP_END = "loop finished"
INSPECTOR_LOOP = f"""\
w = nt.Variable(0.0, name="w")
inspector = nt.inspect(w)
opt = nt.optimizers.SGD(learning_rate=0.1)
for step in range(25):
    with nt.GradientTape() as tape:
        loss = (w - 3.0) ** 2
    grads = tape.gradient(loss, [w])
    opt.apply_gradients(zip(grads, [w]))
    time.sleep(0.15)
print("{LOOP_END}: w =", float(w))"""

MONITOR_LOOP = f"""\
monitor = nt.TrainingMonitor(total=25)
v = nt.Variable(2.0, name="v")
for step in monitor.range(25):
    with nt.GradientTape() as tape:
        loss = v * v
    g = tape.gradient(loss, v)
    v.assign_sub(0.1 * g)
    monitor.log(loss=loss)
    time.sleep(0.15)
print("{LOOP_END}")"""

TAPE = """\
x = nt.Variable(3.0, name="x")
with nt.GradientTape(persistent=True) as tape:
    y = np.sin(x) * x
dy_dx = tape.gradient(y, x)"""

# A short frame interval so that pressing Play visibly steps within a second or two.
PLAYER = 'player = nt.TapePlayer(tape, y, names={y: "y"}, interval=0.4)\nplayer'

GRAPH = "tape.graph()"
MAGIC_LOAD = "%load_ext nbtape"
MAGIC_GRAPH = "%%tape t --graph\nz = np.exp(x) * x"

# Deliberately broken outputs, one per cell, for checking that the checks see each
# kind of trouble (they would pass vacuously if Lab's DOM changed under them).
BROKEN = (
    # a widget whose model is gone by the time the browser asks for it
    "import ipywidgets as W\nfrom IPython.display import display\n"
    "gone = W.IntSlider()\ndisplay(gone)\ngone.close()",
    # a widget view pointing at no model at all
    "display({'application/vnd.jupyter.widget-view+json': {'version_major': 2, "
    "'version_minor': 0, 'model_id': 'no-such-model'}, 'text/plain': 'a widget'}, raw=True)",
    # an SVG that does not parse
    "display({'image/svg+xml': '<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"9\" "
    "height=\"9\"><rect'}, raw=True)",
    "import sys\nprint('a warning', file=sys.stderr)",
    "1 / 0",
    "print('never reached')",
)

PURPOSE_BUILT = {
    "live_inspector.ipynb": (WHO, INSPECTOR_LOOP),
    "live_monitor.ipynb": (WHO, MONITOR_LOOP),
    "tape_player.ipynb": (WHO, TAPE, PLAYER),
    "tape_pictures.ipynb": (WHO, TAPE, GRAPH, MAGIC_LOAD, MAGIC_GRAPH),
    "broken_outputs.ipynb": BROKEN,
}


def write_purpose_built(root):
    """Write the purpose-built notebooks under ``root/purpose-built``; their paths."""
    folder = Path(root) / "purpose-built"
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, sources in PURPOSE_BUILT.items():
        paths[name] = folder / name
        write(paths[name], new_notebook(*sources))
    return paths

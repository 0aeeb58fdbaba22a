"""The notebook layer: pictures of the tape, magics (and ``tape_cell``, their job as a
context manager where magics do not exist, as in marimo) and widgets.

Nothing here is imported by ``import nbtape``; each module is loaded on first
use (``tape.graph()``, ``nt.render``, ``%load_ext nbtape``), so the engine stays
free of graphviz, IPython and ipywidgets.
"""

"""Live widgets for the classroom: ``nt.inspect``, ``nt.TrainingMonitor``, ``nt.TapePlayer``.

Each is an anywidget widget (an ipywidgets ``DOMWidget`` whose front end is one
ES module in ``front/``; its state in traitlets that link to other widgets), so
it goes into any layout beside a teacher's own widgets, and works in JupyterLab,
Notebook 7, VS Code, Colab (ipywidgets 7.7 and 8), JupyterLite and marimo
(``mo.ui.anywidget(nt.inspect(w))``).  They listen to the
engine's observation hooks (``Variable.observe``, ``GradientTape.observe``),
redraw at most a few times a second from the loop's own thread, show a static
snapshot beside themselves for saved notebooks, are closed when the cell that
made them runs again, and release their hooks when closed.  Outside Jupyter
they are plain text.

One module per concept: ``inspector`` (the variable table; ``sources`` and
``table`` feed it), ``monitor`` (training curves; ``chart`` draws them),
``player`` (the tape player; ``playback`` computes its frames, ``static_player``
is the same player in plain HTML and JavaScript for saved notebooks and
``player.save("x.html")``, ``animation`` the GIF for slides), ``live`` (the
life cycle all three share), ``cells`` (per-cell bookkeeping in a kernel),
``throttle`` (rate limiting), ``svg`` and ``array_stats`` (small pictures, and
arrays in a few numbers; every number is written by ``nbtape.display.numbers``).
"""
from .inspector import Inspector, inspect
from .live import Snapshot
from .monitor import TrainingMonitor
from .player import TapePlayer

__all__ = ["inspect", "Inspector", "TrainingMonitor", "TapePlayer", "Snapshot"]

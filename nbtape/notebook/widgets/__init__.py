"""Live ipywidgets for the classroom: ``nt.inspect``, ``nt.TrainingMonitor``, ``nt.TapePlayer``.

Core ipywidgets only (no custom JavaScript), so they work in JupyterLab,
Notebook 7, VS Code and Colab.  They listen to the engine's observation hooks
(``Variable.observe``, ``GradientTape.observe``), redraw at most a few times a
second from the loop's own thread, show a static snapshot beside themselves for
saved notebooks, close the widgets of a cell's previous run when it runs again,
and release their hooks when closed or collected.  Outside Jupyter they are
plain text.

One module per concept: ``inspector`` (the variable table; ``sources`` and
``table`` feed it), ``monitor`` (training curves; ``chart`` draws them),
``player`` (the tape player; ``playback`` computes its frames), ``live`` (the
life cycle all three share), ``cells`` (per-cell bookkeeping in a kernel),
``throttle`` (rate limiting), ``svg`` and ``summary`` (small pictures and
numbers).
"""
from .inspector import Inspector, inspect
from .live import Snapshot
from .monitor import TrainingMonitor
from .player import TapePlayer

__all__ = ["inspect", "Inspector", "TrainingMonitor", "TapePlayer", "Snapshot"]

"""Live ipywidgets (work in progress)."""

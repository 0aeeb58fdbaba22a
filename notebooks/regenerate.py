"""Re-run tutorial notebooks in place, storing only what is the same on every machine.

    python3 notebooks/regenerate.py                 # every tutorial
    python3 notebooks/regenerate.py 05 09           # those whose names start so

Run it from a checkout with the test extras installed.  Pictures are drawn by
graphviz-pure (as the tests pin them), and the per-cell execution timestamps
that nbclient writes are dropped, so a re-run changes a file only where an
output really changed.
"""
import os
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent


def clean(nb):
    """Drop what changes with the clock; keep outputs and execution counts.

    >>> nb = {"cells": [{"metadata": {"execution": {"iopub.status.busy": "2026"}, "tags": []}}]}
    >>> clean(nb)["cells"][0]["metadata"]
    {'tags': []}
    """
    for cell in nb["cells"]:
        cell.get("metadata", {}).pop("execution", None)
    return nb


def regenerate(path, timeout=600):
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    nbformat.write(clean(nb), path)


def main(prefixes):
    os.environ.setdefault("NBTAPE_GRAPHVIZ", "graphviz-pure")
    # the kernel must import this checkout's nbtape, whatever is installed
    root = str(HERE.parent)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (root, os.environ.get("PYTHONPATH")) if p)
    paths = sorted(p for p in HERE.glob("*.ipynb")
                   if not prefixes or p.name.startswith(tuple(prefixes)))
    for path in paths:
        print(f"running {path.name} ...", flush=True)
        regenerate(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

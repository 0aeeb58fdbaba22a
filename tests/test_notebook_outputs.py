"""Stored tutorial outputs must read the same on every machine.

nbval compares each cell's fresh output with the stored one, so a stored output
that names a line inside IPython, a path of this checkout or an nbtape source
file passes here and fails on a machine with another IPython release or another
checkout path (the first wave's fresh-clone failure).  This reads the files
only: it runs no kernel.
"""
import json
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

# what betrays a library's internals, a machine, a path or an address
_LEAKS = [
    ("a frame inside IPython", re.compile(r"\brun_code\b|interactiveshell\.py|ipykernel_\d+")),
    ("an installed package's path", re.compile(r"site-packages|dist-packages")),
    ("an nbtape source file", re.compile(r"nbtape[/\\][\w/\\]*\.py")),
    ("a memory address", re.compile(r"\bat 0x[0-9a-fA-F]+")),
    ("an absolute path", re.compile(r"(?<![\w.:/])/(?:home|root|tmp|usr|opt|work|var|Users)/")),
]


def _outputs(nb):
    for index, cell in enumerate(nb.get("cells", [])):
        for out in cell.get("outputs", []):
            yield index, json.dumps(out)


def leaks_in(text, checkout=str(ROOT)):
    """The names of the leaks found in one output's text."""
    found = [name for name, pattern in _LEAKS if pattern.search(text)]
    if checkout in text:
        found.append("this checkout's path")
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_outputs_hold_nothing_machine_dependent(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    bad = [f"cell {i}: {', '.join(found)}" for i, text in _outputs(nb)
           if (found := leaks_in(text))]
    assert not bad, f"{path.name} stores outputs that change from machine to machine:\n" \
        + "\n".join(bad)


@pytest.mark.parametrize("text, kind", [
    ('"op 1: custom_gradient(f) at line 3508 in run_code"', "a frame inside IPython"),
    ('File "/usr/lib/python3/site-packages/x.py"', "an installed package's path"),
    ('raise in nbtape/tape.py line 4', "an nbtape source file"),
    ('<Foo object at 0x7f00aa>', "a memory address"),
    ('saved to /tmp/out.png', "an absolute path"),
])
def test_the_check_sees_each_kind_of_leak(text, kind):
    assert kind in leaks_in(text)


def test_the_check_passes_ordinary_output():
    assert leaks_in('"op 1: np.sin at line 3", "<svg xmlns=\\"http://www.w3.org/2000/svg\\">"') == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_cell_stores_the_time_it_ran(path):
    # nbclient writes per-cell timestamps; notebooks/regenerate.py drops them
    nb = json.loads(path.read_text(encoding="utf-8"))
    stamped = [i for i, c in enumerate(nb["cells"]) if "execution" in c.get("metadata", {})]
    assert not stamped, f"{path.name}: cells {stamped} store when they ran " \
        "(re-run it with `python3 notebooks/regenerate.py`)"

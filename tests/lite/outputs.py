"""What a tutorial printed on the server against what it prints in the browser.

The saved notebooks hold the numbers the server kernel printed (nbval checks
those).  In the browser the same cells must print the same numbers: Pyodide's
numpy is another build (WebAssembly, no BLAS threads), so numbers are compared
to a relative 1e-4, and cells whose output nbval ignores (timings) are skipped.
"""
import re

NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
VOLATILE_TAGS = {"nbval-ignore-output", "nbval-skip", "raises-exception"}


def numbers(text):
    """The numbers in ``text``, in order.

    >>> numbers("dz/dx = [[8. 8.]] and 1e-3, -2")
    [8.0, 8.0, 0.001, -2.0]
    """
    return [float(m) for m in NUMBER.findall(text)]


def saved_prints(nb):
    """``{cell index: what the saved run printed to stdout}`` for checkable cells."""
    out = {}
    for k, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        if VOLATILE_TAGS & set(cell.get("metadata", {}).get("tags", ())):
            continue
        text = "".join("".join(o["text"]) if isinstance(o["text"], list) else o["text"]
                       for o in cell.get("outputs", [])
                       if o.get("output_type") == "stream" and o.get("name") == "stdout")
        if numbers(text):
            out[k] = text
    return out


def _first_difference(saved, shown):
    r"""The first line that differs.

    >>> _first_difference("a\nb 1", "a\nb 1 2")
    "line 2: 'b 1 2' where the server printed 'b 1'"
    """
    a, b = saved.splitlines(), shown.splitlines()
    for k, (x, y) in enumerate(zip(a, b), 1):
        if x != y:
            return f"line {k}: {y[:300]!r} where the server printed {x[:300]!r}"
    return f"{len(b)} line(s) where the server printed {len(a)}"


def mismatch(saved, shown, rtol=1e-4, atol=1e-9):
    """Why ``shown`` does not print ``saved``'s numbers, or None.

    >>> mismatch("w = 0.029952", "w = 0.0299521") is None
    True
    >>> mismatch("m = 2.0", "m = 1.5")
    'printed 1.5 where the server printed 2'
    >>> mismatch("a 1 b 2", "a 1")
    "printed 1 number(s) where the server printed 2: line 1: 'a 1' where the server printed 'a 1 b 2'"
    """
    want, got = numbers(saved), numbers(shown)
    if len(want) != len(got):
        return (f"printed {len(got)} number(s) where the server printed {len(want)}: "
                f"{_first_difference(saved, shown)}")
    for w, g in zip(want, got):
        if abs(w - g) > atol + rtol * abs(w):
            return f"printed {g:g} where the server printed {w:g}"
    return None


WARNING = "warning: "
WARNING_CHARS = 48          # enough of a warning's words to know it, before its numbers


def saved_warnings(nb):
    """``{cell index: [the start of each warning line]}``: the warnings a tutorial printed
    on the server (with its ``printed_warnings()``), which the browser must print too.

    >>> saved_warnings({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [
    ...     {"output_type": "stream", "name": "stdout",
    ...      "text": ["warning: overflow encountered in exp (in np.exp)\\n", "y = inf\\n"]}]}]})
    {0: ['warning: overflow encountered in exp (in np.exp)']}
    """
    out = {}
    for k, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code" or {"nbval-skip", "nbval-ignore-output"} & set(
                cell.get("metadata", {}).get("tags", ())):
            continue
        text = "".join("".join(o["text"]) if isinstance(o["text"], list) else o["text"]
                       for o in cell.get("outputs", [])
                       if o.get("output_type") == "stream" and o.get("name") == "stdout")
        starts = [line[:WARNING_CHARS] for line in text.splitlines() if line.startswith(WARNING)]
        if starts:
            out[k] = starts
    return out


def missing_warnings(starts, shown):
    """The warnings of ``starts`` that ``shown`` does not print (in order, each once).

    >>> missing_warnings(["warning: overflow encountered in exp", "warning: x is NaN"],
    ...                  "warning: x is NaN\\ny = inf")
    ['warning: overflow encountered in exp']
    """
    lines = [line[:WARNING_CHARS] for line in shown.splitlines() if line.startswith(WARNING)]
    missing = []
    for start in starts:
        if start in lines:
            lines.remove(start)
        else:
            missing.append(start)
    return missing

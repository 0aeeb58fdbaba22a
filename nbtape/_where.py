"""Find the user's line for an operation, an escape or an error."""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _internal(f):
    name = f.f_globals.get("__name__", "")
    return name == "nbtape" or name.startswith(("nbtape.", "numpy"))


def caller(depth=1):
    """``(filename, lineno, function)`` of the nearest frame outside nbtape/numpy."""
    try:
        f = sys._getframe(depth)
    except ValueError:
        return None
    while f is not None and _internal(f):
        f = f.f_back
    if f is None:
        return None
    return (f.f_code.co_filename, f.f_lineno, f.f_code.co_name)


def describe(where):
    """'line 3 of <cell>' style text for a ``caller()`` result."""
    if not where:
        return "an unknown line"
    filename, lineno, func = where
    base = os.path.basename(filename)
    if filename.startswith("<") or base.startswith("<"):
        return f"line {lineno} of {filename}"
    return f"line {lineno} of {base}" + (f" (in {func})" if func not in ("<module>",) else "")


def source_line(where):
    """The text of that line, when it can be found."""
    if not where:
        return ""
    import linecache
    return linecache.getline(where[0], where[1]).strip()

"""Find the user's line for an operation, an escape or an error."""
import os
import sys

import numpy as _np

_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_NUMPY = os.path.dirname(os.path.abspath(_np.__file__)) + os.sep
_SKIP = (_HERE, _NUMPY)


def caller(depth=2):
    """``(filename, lineno, function)`` of the nearest frame outside nbtape/numpy.

    Called once per recorded op, so it compares file-name prefixes only, starting
    ``depth`` frames up (the recorder passes the depth where the user's frame
    usually is, so the common case checks a single frame).
    """
    f = sys._getframe(depth)
    while f is not None:
        code = f.f_code
        if not code.co_filename.startswith(_SKIP):
            return (code.co_filename, f.f_lineno, code.co_name)
        f = f.f_back
    return None


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

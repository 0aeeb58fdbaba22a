"""Find the user's line for an operation, an escape or an error."""
import os
import sys
import warnings

import numpy as _np

# The one root of "is this frame nbtape's?": the package's folder, found from this
# module's place in it (nbtape/diagnostics/). Every module that tells nbtape's frames
# from the user's imports it, so moving a module between subpackages cannot make one
# of them misjudge the user's line (test_user_line checks every kind of op).
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
NUMPY_DIR = os.path.dirname(os.path.abspath(_np.__file__)) + os.sep
# the file-name prefixes that are not the user's (the tape inlines caller_raw's walk)
SKIP_PREFIXES = (PACKAGE_DIR, NUMPY_DIR)
_SKIP = SKIP_PREFIXES
frame_at = sys._getframe


def caller(depth=2):
    """``(filename, lineno, function)`` of the nearest frame outside nbtape/numpy.

    Called once per recorded op, so it compares file-name prefixes only, starting
    ``depth`` frames up (the recorder passes the depth where the user's frame
    usually is, so the common case checks a single frame).
    """
    try:
        f = sys._getframe(depth)
    except ValueError:          # a shallow stack (top of a script)
        f = sys._getframe(1)
    while f is not None:
        code = f.f_code
        if not code.co_filename.startswith(_SKIP):
            return (code.co_filename, f.f_lineno, code.co_name)
        f = f.f_back
    return None


def _is_cell(filename):
    # IPython compiles cells to <ipython-input-N-...> or .../ipykernel_PID/NNNN.py;
    # those names change every run, so they are shown as "a notebook cell"
    if filename.startswith("<ipython-input-"):
        return True
    parent = os.path.basename(os.path.dirname(filename))
    return parent.startswith("ipykernel_") and os.path.basename(filename)[:-3].isdigit()


def caller_raw(depth=2):
    """Like ``caller`` but cheap: ``(code, last instruction)``, decoded by ``decode``.

    A frame's ``f_lineno`` costs more than the rest of recording an op put
    together, so ops store this and the line is worked out only when shown.
    """
    try:
        f = sys._getframe(depth)
    except ValueError:
        f = sys._getframe(1)
    while f is not None:
        code = f.f_code
        if not code.co_filename.startswith(_SKIP):
            return (code, f.f_lasti)
        f = f.f_back
    return None


def decode(raw):
    """``(filename, lineno, function)`` from a ``caller_raw`` result (or already one)."""
    if raw is None or type(raw[0]) is str:
        return raw
    code, lasti = raw
    lineno = code.co_firstlineno
    for start, end, line in code.co_lines():
        if start <= lasti < end:
            if line is not None:
                lineno = line
            break
    return (code.co_filename, lineno, code.co_name)


class LazyWhere:
    """A ``where`` property that decodes the raw ``(code, lasti)`` form kept in ``_where``
    the first time it is asked for (recording stays cheap; explain and pictures pay)."""

    __slots__ = ()

    @property
    def where(self):
        """``(filename, lineno, function)`` of the user's line, or None."""
        w = self._where
        if w is not None and type(w[0]) is not str:
            w = self._where = decode(w)
        return w

    @property
    def raw_where(self):
        """The user's line as kept: ``(code, last instruction)`` until ``where`` decoded
        it, then ``(filename, lineno, function)`` (a cheap look at the file and function)."""
        return self._where


def describe(where):
    """'line 3 of <cell>' style text for a ``caller()`` result."""
    where = decode(where)
    if not where:
        return "an unknown line"
    filename, lineno, func = where
    base = os.path.basename(filename)
    inside = f" (in {func})" if func not in ("<module>",) else ""
    if _is_cell(filename):
        return f"line {lineno} of a notebook cell{inside}"
    if filename.startswith("<") or base.startswith("<"):
        return f"line {lineno} of {filename}"
    return f"line {lineno} of {base}" + (f" (in {func})" if func not in ("<module>",) else "")


def source_line(where):
    """The text of that line, when it can be found."""
    where = decode(where)
    if not where:
        return ""
    import linecache
    return linecache.getline(where[0], where[1]).strip()


def numpy_fill(how):
    """``how``, or ``"np.full"`` / ``"np.full_like"`` when numpy's own np.full is what
    converts a tensor fill value (numpy dispatches np.full on none of its arguments,
    np.full_like on ``a`` only), after warning at the user's line: the result is a
    plain array, so a gradient through it would be None far from here."""
    f, level = sys._getframe(1), 1
    while f is not None and f.f_code.co_filename.startswith(PACKAGE_DIR):
        f, level = f.f_back, level + 1
    if f is None or f.f_code.co_name not in ("full", "full_like") \
            or not f.f_code.co_filename.startswith(NUMPY_DIR):
        return how
    name = "np." + f.f_code.co_name
    warnings.warn(
        f"{name} with a tensor fill value returns a plain numpy array: numpy does not hand "
        f"{name} to nbtape for its fill value, so the tape cannot follow it and gradients "
        "through it are None. Write np.broadcast_to(t, shape) or t * np.ones(shape) "
        "instead (np.full_like(x, t) with a tensor x works too).", UserWarning,
        stacklevel=level + 2)     # (the line that called np.full)
    return name

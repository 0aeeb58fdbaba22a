"""nbtape's exceptions and warnings, and how they reach the user's line.

Public entry points (``@user_facing``) re-raise a mistake that nbtape itself
detected (an ``NbtapeError``, or a ``ValueError`` or ``TypeError`` raised by
nbtape's own code) with a fresh traceback, so the user sees their own line, not the
backward pass's internals.  Python still lists the one frame that re-raised
it; pytest hides it (``__tracebackhide__``), and IPython, which never hides
the last frame, is given a ``_render_traceback_`` that leaves it out.  An
exception that came out of the user's own code (a function given to
``nt.grad``, a custom gradient) keeps every frame: those are the user's.
"""
import functools
import sys
import types
import warnings

from .user_line import PACKAGE_DIR



class NbtapeError(Exception):
    """Base class for errors that explain a user mistake."""


class NoGradientRuleError(NbtapeError, LookupError):
    """A gradient had to flow through a numpy function that has no rule."""


class InvalidArgumentError(NbtapeError, TypeError, ValueError):
    """A value nbtape cannot use where it was given: a variable update of another
    dtype or shape, a custom gradient of the wrong shape.  (A ``TypeError`` and a
    ``ValueError``, so code catching either keeps working.)"""


class NumericsError(NbtapeError, FloatingPointError):
    """An op made a NaN or inf from finite inputs inside ``nt.check_numerics()``, or numpy
    raised inside a derivative under ``np.errstate(...="raise")`` (``nt.NumericsError``)."""


class TapeConsumedError(NbtapeError, RuntimeError):
    """A tape that can no longer give a gradient: a non-persistent tape asked for a
    second one, or a tape retired (``tape.retire``) when its records were dropped."""


def _raised_by_nbtape(tb):
    """True when every frame of ``tb`` is nbtape's own code (no user code in between)."""
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(PACKAGE_DIR):
            return False
        tb = tb.tb_next
    return True


def user_facing(fn):
    """Decorator for public entry points: errors nbtape raises start at the caller's line.

    >>> @user_facing
    ... def half(x):
    ...     if x < 0:
    ...         raise ValueError("half() takes a number >= 0")
    ...     return x / 2
    >>> half(4)
    2.0
    """
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        __tracebackhide__ = True  # noqa: F841  (IPython and pytest hide this frame)
        try:
            return fn(*args, **kwargs)
        except NbtapeError as e:
            _render_from_user(e)
            raise e.with_traceback(None) from None
        except (ValueError, TypeError) as e:
            # raised by nbtape's own argument checks: the user's line says it all (other
            # kinds from nbtape's code would be its bugs, and keep their frames)
            if _raised_by_nbtape(e.__traceback__):
                _render_from_user(e)
                raise e.with_traceback(None)
            raise
    return wrapper


def without_nbtape_tail(tb):
    """``tb`` without the nbtape frames at its end (the wrappers that re-raised).

    ``None`` stays ``None``; a traceback of nbtape frames only is kept whole.
    """
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    keep = len(entries)
    while keep > 1 and entries[keep - 1].tb_frame.f_code.co_filename.startswith(PACKAGE_DIR):
        keep -= 1
    if keep == len(entries):
        return entries[0] if entries else None
    out = None
    for e in reversed(entries[:keep]):
        out = types.TracebackType(out, e.tb_frame, e.tb_lasti, e.tb_lineno)
    return out


def shown_from_user(exc):
    """``exc``, made to draw in IPython without the nbtape frames at its end: for an
    error nbtape raises from inside an op (``nt.check_numerics``), where no public entry
    point re-raises it.

    >>> shown_from_user(NbtapeError("x")).args
    ('x',)
    """
    _render_from_user(exc)
    return exc


def _render_from_user(exc):
    """Let IPython draw ``exc``'s traceback without the frame that re-raised it."""
    if getattr(exc, "_render_traceback_", None) is not None:
        return

    def render():
        from IPython import get_ipython          # only IPython calls this
        shell = get_ipython()
        tb = without_nbtape_tail(exc.__traceback__)
        if shell is None:                        # another tool that knows the protocol
            import traceback
            return traceback.format_exception(type(exc), exc, tb)
        return shell.InteractiveTB.structured_traceback(type(exc), exc, tb)
    render.nbtape = True
    try:
        exc._render_traceback_ = render
    except (AttributeError, TypeError):
        pass          # an exception type without a __dict__: the full traceback it is


def warn_user(message, category=UserWarning):
    """``warnings.warn`` attributed to the first line outside nbtape (the user's).

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_user("careful")
    >>> caught[0].message.args, caught[0].filename.endswith("errors.py")
    (('careful',), False)
    """
    level, f = 2, sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(PACKAGE_DIR):
        level, f = level + 1, f.f_back
    warnings.warn(message, category, stacklevel=level)

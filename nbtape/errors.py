"""nbtape's exceptions, and how they reach the user's line.

Public entry points catch ``NbtapeError`` subclasses raised deep in the engine
and re-raise them with a fresh traceback, so the user sees their own line and
one frame of nbtape, not the backward pass's internals.
"""
import functools


class NbtapeError(Exception):
    """Base class for errors that explain a user mistake."""


class NoGradientRuleError(NbtapeError, LookupError):
    """A gradient had to flow through a numpy function that has no rule."""


class InvalidArgumentError(NbtapeError, TypeError, ValueError):
    """A value nbtape cannot use where it was given: a variable update of another
    dtype or shape, a custom gradient of the wrong shape.  (A ``TypeError`` and a
    ``ValueError``, so code catching either keeps working.)"""


class TapeConsumedError(NbtapeError, RuntimeError):
    """A non-persistent tape was asked for a second gradient."""


def user_facing(fn):
    """Decorator for public entry points: shorten tracebacks of NbtapeErrors."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        __tracebackhide__ = True  # noqa: F841  (IPython and pytest hide this frame)
        try:
            return fn(*args, **kwargs)
        except NbtapeError as e:
            raise e.with_traceback(None) from None
    return wrapper

"""The random generators a function can reach, and their states: one search for
``nt.function`` (which refuses a trace that drew from them) and ``recompute_grad``
(whose re-run must draw what the first run drew).

A function reaches numpy's global generator (``np.random.rand``), Python's ``random``
module (``random.gauss``, ``random.shuffle``), and every ``np.random.Generator``,
``np.random.RandomState`` and ``random.Random`` found from its arguments, a
``functools.partial``'s arguments, a bound method's object, its closure, the globals its
code names (nested functions' code included) and, three levels down, the attributes,
items and values of those (a model holding its generator).  A generator it cannot reach
(one made inside the function, one a helper module keeps) is not found here: the
tracer's second trace finds those (``nbtape/transforms/function.py``).
"""
import contextlib
import functools
import inspect
import random

import numpy as np

from ..core.tensor import TensorLike

GENERATORS = (np.random.Generator, np.random.RandomState, random.Random)

# Python's random module stands for its hidden global generator (random.getstate)
PYTHON_RANDOM = random


def random_states(fn, args=(), kwargs=None):
    """``[(generator, its state)]`` now: numpy's global generator (``None``), Python's
    ``random`` module, and each generator ``fn`` can reach (see the module docstring).

    >>> rng = np.random.default_rng(0)
    >>> states = random_states(lambda x: rng.normal(size=x), (3,))
    >>> [g is rng for g, _ in states]
    [False, False, True]
    >>> _ = rng.normal(); drawn(states)
    "a Generator's methods (e.g. rng.normal)"
    """
    seeds = list(args) + list((kwargs or {}).values())
    f = fn
    while isinstance(f, functools.partial):
        seeds += [*f.args, *f.keywords.values()]
        f = f.func
    owner = getattr(f, "__self__", None)
    if owner is not None and not inspect.ismodule(owner):
        seeds.append(owner)
    f = getattr(f, "__func__", f)
    code = getattr(f, "__code__", None)
    if code is not None:
        seeds += [c.cell_contents for c in (f.__closure__ or ()) if _filled(c)]
        g = getattr(f, "__globals__", {})
        seeds += [g[n] for n in sorted(_names(code)) if n in g]
    elif not inspect.isroutine(f):
        seeds.append(f)     # a callable object: its attributes
    found = {}
    _find(seeds, found, 3, set())
    return [(None, state_of(None)), (PYTHON_RANDOM, state_of(PYTHON_RANDOM))] + [
        (gen, state_of(gen)) for gen in found.values()]


def _names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= _names(const)
    return names


def _filled(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:      # a cell not yet filled
        return False


def _find(objs, found, depth, seen):
    for o in objs:
        if id(o) in seen or isinstance(o, (np.ndarray, TensorLike, str, bytes, int, float)) \
                or o is None:
            continue
        seen.add(id(o))
        if isinstance(o, GENERATORS):
            found[id(o)] = o
            continue
        if depth <= 0:
            continue
        if isinstance(o, dict):
            inner = list(o.values())
        elif isinstance(o, (list, tuple, set)):
            inner = list(o)
        elif hasattr(o, "__dict__") and not (inspect.ismodule(o) or inspect.isroutine(o)
                                             or inspect.isclass(o)):
            inner = list(vars(o).values())      # a model, a layer: its attributes
        else:
            continue
        _find(inner[:200], found, depth - 1, seen)


def state_of(gen):
    """The state of ``gen`` (``None``: numpy's global generator; the ``random`` module:
    Python's), in a form ``set_state`` takes back."""
    if gen is None:
        return np.random.get_state(legacy=False)
    if gen is PYTHON_RANDOM or isinstance(gen, random.Random):
        return gen.getstate()
    if isinstance(gen, np.random.RandomState):
        return gen.get_state(legacy=False)
    return gen.bit_generator.state


def set_state(gen, state):
    """Give ``gen`` the ``state`` that ``state_of`` read."""
    if gen is None:
        np.random.set_state(state)
    elif gen is PYTHON_RANDOM or isinstance(gen, random.Random):
        gen.setstate(state)
    elif isinstance(gen, np.random.RandomState):
        gen.set_state(state)
    else:
        gen.bit_generator.state = state


@contextlib.contextmanager
def replayed(states):
    """The generators in the states ``states`` holds while the block runs; afterwards,
    as they were before it (the user's streams go on untouched)."""
    now = [(g, state_of(g)) for g, _ in states]
    for g, state in states:
        set_state(g, state)
    try:
        yield
    finally:
        for g, state in now:
            set_state(g, state)


def same_state(a, b):
    """Whether two states ``state_of`` read are the same (no draw in between).

    >>> same_state(state_of(None), state_of(None))
    True
    """
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            same_state(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return isinstance(b, (tuple, list)) and len(a) == len(b) and all(
            same_state(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


def drawn(before):
    """What drew random numbers since ``before`` (``random_states``), in words, or ''."""
    gen = drawn_from(before)
    if gen is False:
        return ""
    if gen is None:
        return "np.random's global generator (e.g. np.random.rand, np.random.normal)"
    if gen is PYTHON_RANDOM:
        return "Python's random module (e.g. random.gauss, random.shuffle)"
    return f"a {type(gen).__name__}'s methods (e.g. rng.normal)"


def drawn_from(before):
    """The first generator of ``before`` (``random_states``) whose state moved since
    (``None``: numpy's global one), or False when none did."""
    for gen, state in before:
        if not same_state(state, state_of(gen)):
            return gen
    return False

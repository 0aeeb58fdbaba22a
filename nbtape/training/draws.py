"""The recorded ops behind ``nt.random``: numbers computed from a counter, not a stream.

A generator's whole state is three unsigned 64-bit words, ``(key0, key1, count)``,
held in an ``nt.Variable``.  Draw number ``count`` comes from numpy's Philox (a
counter-based bit generator) keyed by ``(key0, key1)`` with its counter starting at
``(0, 0, 0, count)``; the generator then adds ``STEP`` to the state.  So each draw is
a pure function of the state it reads: nothing about it is hidden in a Python object.
That is what lets ``nt.function`` replay draws without knowing anything about random
numbers: a draw is a numpy-level call whose input is a variable's value, and the
update is an ordinary ``assign_add``, both recorded like any other step, so every
replay computes fresh numbers from the state it reads at that moment, bit for bit
those of an eager run from the same state.  (Each draw gets a stream of 2**192
Philox blocks to itself, more than any one call can use, so draws never overlap.)

Each method (numpy ``Generator``'s name: ``standard_normal``, ``integers``, ...) is its
own op, ``nt.random.<method>``, so a program listing says what was drawn.  They have
no gradient: numbers drawn are constants to a tape.  ``nt.random.Generator`` builds
the differentiable distributions on top (``normal(loc, scale)`` is ``loc + scale *``
a standard draw, recorded arithmetic).

>>> state = np.array([1, 2, 0], dtype=np.uint64)
>>> a = numbers_of(state, "standard_normal", (("size", (2,)),))
>>> b = numbers_of(state, "standard_normal", (("size", (2,)),))
>>> bool(np.array_equal(a, b)), a.shape
(True, (2,))
"""
import numpy as np

from ..core.primitive import primitive
from ..core.registry import defnondiff, defprimitive

#: what one draw adds to the state: the draw count (the key stays)
STEP = np.array([0, 0, 1], dtype=np.uint64)
STEP.flags.writeable = False

#: numpy ``Generator`` methods that have an op of their own (the ones ``nt.random``
#: calls: the standard draws its reparameterised distributions are built from, and
#: those whose parameters get no gradient)
METHODS = ("random", "standard_normal", "standard_exponential", "standard_gamma",
           "integers", "permutation", "choice", "binomial", "negative_binomial", "poisson",
           "geometric", "hypergeometric", "beta", "chisquare", "standard_t",
           "standard_cauchy", "multinomial", "dirichlet", "laplace", "logistic", "gumbel",
           "vonmises", "wald", "weibull", "pareto", "power", "rayleigh", "zipf",
           "logseries", "triangular", "f", "noncentral_chisquare", "noncentral_f")


def initial_state(key):
    """The state of a new generator with Philox key ``key`` (two uint64 words).

    >>> initial_state(np.array([7, 9], dtype=np.uint64))
    array([7, 9, 0], dtype=uint64)
    """
    key = np.asarray(key, dtype=np.uint64)
    return np.array([key[0], key[1], 0], dtype=np.uint64)


def philox_at(state):
    """numpy's ``Generator`` over Philox, keyed and positioned by ``state``.

    >>> g = philox_at(np.array([1, 2, 5], dtype=np.uint64))
    >>> type(g.bit_generator).__name__, int(g.bit_generator.state["state"]["counter"][3])
    ('Philox', 5)
    """
    counter = np.zeros(4, dtype=np.uint64)
    counter[3] = state[2]
    return np.random.Generator(np.random.Philox(key=state[:2], counter=counter))


def numbers_of(state, method, options, *params):
    """The numbers ``method`` draws from ``state``: numpy ``Generator.<method>(*params,
    **dict(options))`` (``options``: ``(name, value)`` pairs of plain Python values),
    as an array (a 0-d one where numpy gives a scalar).

    >>> s = np.array([3, 4, 0], dtype=np.uint64)
    >>> numbers_of(s, "integers", (("size", (4,)),), 0, 10).shape
    (4,)
    >>> numbers_of(s, "standard_normal", ()).shape     # numpy's scalar, as a 0-d array
    ()
    """
    out = getattr(philox_at(state), method)(*params, **dict(options))
    return np.asarray(out)


def _op(method):
    def draw(state, options, *params):
        return numbers_of(state, method, options, *params)
    draw.__name__ = draw.__qualname__ = method
    draw.__doc__ = f"``numbers_of(state, {method!r}, options, *params)``, one recorded op."
    defprimitive(draw, f"nt.random.{method}")
    defnondiff(draw)        # the numbers are constants to a tape: no gradient flows back
    return primitive(draw)


#: method name -> its op: ``DRAWS["standard_normal"](state_variable, options, *params)``
#: reads the variable (a recorded read) and returns the numbers as a tensor
DRAWS = {method: _op(method) for method in METHODS}

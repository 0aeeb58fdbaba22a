"""``nt.random``: random numbers that tapes and ``nt.function`` understand.

``nt.random.Generator(seed)`` has numpy ``Generator``'s method names (``normal``,
``uniform``, ``integers``, ``permutation``, ``choice``, ``binomial``, ...) and returns
tensors.  Its whole state is an ``nt.Variable`` (``gen.state``, not trainable), and each
draw is one recorded op that reads it, followed by an ``assign_add`` that moves it on
(see ``draws``).  So inside ``nt.function`` a draw is part of the program: every replay
draws fresh numbers, the same, bit for bit, as an eager run from the same seed.

Gradients flow where a draw is a smooth function of its parameters: ``normal``,
``uniform``, ``exponential``, ``lognormal``, ``gamma``'s scale, ``laplace``,
``logistic`` and ``gumbel`` are ``loc + scale * (a standard draw)``, recorded
arithmetic (the reparameterisation trick), and ``permutation``/``choice`` of an array
pick its entries with a recorded ``np.take``.  The other parameters (a binomial's
``p``, a gamma's shape) get no gradient: the numbers drawn do not depend smoothly on
them.

>>> import numpy as np, nbtape as nt
>>> gen = nt.random.Generator(0)
>>> loc = nt.Variable(1.0)
>>> with nt.GradientTape() as tape:
...     x = gen.normal(loc, 2.0, size=3)
...     total = np.sum(x)
>>> x.shape, float(tape.gradient(total, loc))
((3,), 3.0)
>>> again = nt.random.Generator(0)
>>> bool(np.array_equal(again.normal(1.0, 2.0, size=3), x))     # same seed, same numbers
True
"""
import copy
import inspect

import numpy as np

from ..core.state import tracing
from ..core.tensor import TensorLike, constant
from ..core.variable import Variable
from ..diagnostics.errors import InvalidArgumentError, user_facing
from .draws import DRAWS, STEP, initial_state

_P = inspect.Parameter
_REQUIRED = _P.empty


# argument checks -------------------------------------------------------------------------
def _seed_sequence(seed):
    """numpy's ``SeedSequence`` for ``seed``: None (fresh entropy from the OS), a whole
    number >= 0, a list of them, or a ``SeedSequence``.

    >>> _seed_sequence(5).entropy, _seed_sequence([1, 2]).entropy
    (5, [1, 2])
    """
    if seed is None or isinstance(seed, np.random.SeedSequence):
        return seed if seed is not None else np.random.SeedSequence()
    items = list(seed) if isinstance(seed, (list, tuple)) else [seed]
    for s in items:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(
                f"nt.random.Generator's seed must be a whole number >= 0 (or a list of "
                f"them, or None for a fresh random seed), not {seed!r} "
                f"({type(s).__name__}). Pass an int such as 42.")
        if s < 0:
            raise ValueError(
                f"nt.random.Generator's seed must be >= 0, got {seed!r}. Pass a "
                "non-negative whole number such as 42.")
    return np.random.SeedSequence([int(s) for s in items] if isinstance(seed, (list, tuple))
                                  else int(seed))


def _shape_of_size(size):
    """``size`` (None, an int or a sequence of ints) as None or a tuple of ints.

    >>> _shape_of_size(3), _shape_of_size((2, np.int64(4))), _shape_of_size(None)
    ((3,), (2, 4), None)
    """
    if size is None:
        return None
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        return (int(size),)
    try:
        shape = tuple(size)
    except TypeError:
        shape = None
    if shape is None or not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool)
                                for s in shape):
        raise TypeError(f"size must be None, a whole number or a tuple of them (a shape), "
                        f"not {size!r}.")
    return tuple(int(s) for s in shape)


def _raw(p):
    return p._value if isinstance(p, TensorLike) else np.asarray(p)


def _param(p):
    """A parameter as the op takes it: tensors and variables as they are (recorded),
    lists as arrays."""
    return np.asarray(p) if isinstance(p, (list, tuple)) else p


def _picked_from(x):
    """An array to pick entries from as a tensor (``np.take`` dispatches on its first
    argument alone: the picks of a plain array must still be a recorded op)."""
    return x if isinstance(x, TensorLike) else constant(np.asarray(x))


def _at_least_zero(method, name, value):
    raw = _raw(value)
    if np.any(raw < 0):
        got = f"{name}={raw.item()!r}" if raw.size == 1 else \
            f"a {name} with negative entries (the smallest {np.min(raw).item()!r})"
        raise InvalidArgumentError(
            f"nt.random.Generator.{method} got {got}, but {name} must be >= 0 (numpy's "
            f"rule too). Pass a non-negative {name} (np.abs(...) of it, if its sign "
            "was a slip).")


def _out_shape(method, size, *params):
    """The shape of a draw: ``size``, which the parameters must broadcast to, or else
    the parameters' broadcast shape."""
    shapes = [np.shape(_raw(p)) for p in params]
    shape = _shape_of_size(size)
    try:
        common = np.broadcast_shapes(*shapes) if shapes else ()
        if shape is None:
            return common
        if np.broadcast_shapes(shape, common) == shape:
            return shape
    except ValueError:
        pass
    raise InvalidArgumentError(
        f"nt.random.Generator.{method}: parameters of shapes {shapes} do not broadcast to "
        f"size={shape}. Give size=None (the parameters' broadcast shape) or a size "
        "they broadcast to.")


def _is(value, number):
    return type(value) in (int, float) and value == number


def _affine(loc, scale, z):
    """``loc + scale * z``, recorded (a Python 0 or 1 is left out)."""
    out = z if _is(scale, 1) else scale * z
    return out if _is(loc, 0) else loc + out


# the defaults' names, without numpy's dtype-name lookup (a tenth of a small draw's cost)
_DEFAULT_NAMES = {np.float64: "float64", np.float32: "float32", np.int64: "int64"}


def _dtype_name(dtype):
    name = _DEFAULT_NAMES.get(dtype) if isinstance(dtype, type) else None
    return name or np.dtype(dtype).name


# the generator ---------------------------------------------------------------------------
class Generator:
    """Random numbers with numpy ``Generator``'s method names, drawn by recorded ops.

    ``seed`` is a whole number >= 0, a list of them, a ``np.random.SeedSequence``, or
    None for a fresh random seed.  ``state`` is the ``nt.Variable`` (three uint64
    words, not trainable) that holds everything the generator knows; copies
    (``copy.copy``, ``copy.deepcopy``, ``pickle``) get their own state variable, with
    the same value: they draw what the original would draw next, independently.

    >>> import numpy as np, nbtape as nt
    >>> gen = nt.random.Generator(42)
    >>> w = nt.Variable(np.zeros(3))
    >>> @nt.function
    ... def noisy_step(x):
    ...     w.assign_add(x + gen.normal(scale=0.1, size=3))
    >>> for _ in range(3):
    ...     noisy_step(np.ones(3))
    >>> eager_gen, eager_w = nt.random.Generator(42), np.zeros(3)
    >>> for _ in range(3):
    ...     eager_w = eager_w + (np.ones(3) + eager_gen.normal(scale=0.1, size=3)).numpy()
    >>> bool(np.array_equal(w.numpy(), eager_w)), noisy_step.trace_count
    (True, 1)
    """

    @user_facing
    def __init__(self, seed=None):
        self._seed = _seed_sequence(seed)
        self.state = Variable(initial_state(self._seed.generate_state(2, np.uint64)),
                              trainable=False, name="random_state")

    def _draw(self, method, options, *params):
        try:
            numbers = DRAWS[method](self.state, options, *params)
        except (ValueError, TypeError) as e:       # numpy's check of the parameters
            raise InvalidArgumentError(
                f"nt.random.Generator.{method} cannot draw with these parameters: numpy "
                f"says {str(e)!r}. Check the parameters against numpy's "
                f"Generator.{method}, which takes the same ones.") from None
        self.state.assign_add(STEP)
        return numbers

    # standard draws --------------------------------------------------------------------
    def _standard(self, method, size, dtype):
        # size=None is (): numpy's scalar would lose a float32 dtype
        return self._draw(method, (("size", _out_shape(method, size)),
                                   ("dtype", _dtype_name(dtype))))

    @user_facing
    def random(self, size=None, dtype=np.float64):
        """Uniform numbers in [0, 1) (``dtype`` float64 or float32).

        >>> import nbtape as nt
        >>> u = nt.random.Generator(0).random((2, 2))
        >>> u.shape, bool(((u >= 0) & (u < 1)).numpy().all())
        ((2, 2), True)
        """
        return self._standard("random", size, dtype)

    @user_facing
    def standard_normal(self, size=None, dtype=np.float64):
        """Normal numbers of mean 0 and standard deviation 1."""
        return self._standard("standard_normal", size, dtype)

    @user_facing
    def standard_exponential(self, size=None, dtype=np.float64):
        """Exponential numbers of mean 1."""
        return self._standard("standard_exponential", size, dtype)

    @user_facing
    def standard_gamma(self, shape, size=None, dtype=np.float64):
        """Gamma numbers of scale 1 (no gradient with respect to ``shape``)."""
        _at_least_zero("standard_gamma", "shape", shape)
        return self._draw("standard_gamma", (("size", _out_shape("standard_gamma", size, shape)),
                                             ("dtype", _dtype_name(dtype))), _param(shape))

    # reparameterised: gradients flow to the location and scale ----------------------------
    @user_facing
    def normal(self, loc=0.0, scale=1.0, size=None, dtype=np.float64):
        """``loc + scale * standard_normal(...)``: differentiable in ``loc`` and ``scale``.

        >>> import numpy as np, nbtape as nt
        >>> float(np.round(np.std(nt.random.Generator(1).normal(0.0, 3.0, 20000)), 1))
        3.0
        """
        _at_least_zero("normal", "scale", scale)
        z = self.standard_normal(_out_shape("normal", size, loc, scale), dtype)
        return _affine(_param(loc), _param(scale), z)

    @user_facing
    def uniform(self, low=0.0, high=1.0, size=None, dtype=np.float64):
        """``low + (high - low) * random(...)``: differentiable in ``low`` and ``high``.

        >>> import nbtape as nt
        >>> u = nt.random.Generator(0).uniform(-1.0, 1.0, 1000)
        >>> bool((u >= -1).numpy().all() and (u < 1).numpy().all())
        True
        """
        u = self.random(_out_shape("uniform", size, low, high), dtype)
        low, high = _param(low), _param(high)
        return _affine(low, high - low, u)

    @user_facing
    def exponential(self, scale=1.0, size=None, dtype=np.float64):
        """``scale * standard_exponential(...)``: differentiable in ``scale``."""
        _at_least_zero("exponential", "scale", scale)
        e = self.standard_exponential(_out_shape("exponential", size, scale), dtype)
        return _affine(0, _param(scale), e)

    @user_facing
    def lognormal(self, mean=0.0, sigma=1.0, size=None, dtype=np.float64):
        """``exp(normal(mean, sigma, ...))``: differentiable in ``mean`` and ``sigma``."""
        _at_least_zero("lognormal", "sigma", sigma)
        return np.exp(self.normal(mean, sigma, size, dtype))

    @user_facing
    def gamma(self, shape, scale=1.0, size=None, dtype=np.float64):
        """``scale * standard_gamma(shape, ...)``: differentiable in ``scale`` (not in
        ``shape``)."""
        _at_least_zero("gamma", "scale", scale)
        g = self.standard_gamma(shape, _out_shape("gamma", size, shape, scale), dtype)
        return _affine(0, _param(scale), g)

    def _location_scale(self, method, loc, scale, size):
        _at_least_zero(method, "scale", scale)
        s = self._draw(method, (("size", _out_shape(method, size, loc, scale)),), 0.0, 1.0)
        return _affine(_param(loc), _param(scale), s)

    @user_facing
    def laplace(self, loc=0.0, scale=1.0, size=None):
        """``loc + scale * laplace(0, 1)``: differentiable in ``loc`` and ``scale``."""
        return self._location_scale("laplace", loc, scale, size)

    @user_facing
    def logistic(self, loc=0.0, scale=1.0, size=None):
        """``loc + scale * logistic(0, 1)``: differentiable in ``loc`` and ``scale``."""
        return self._location_scale("logistic", loc, scale, size)

    @user_facing
    def gumbel(self, loc=0.0, scale=1.0, size=None):
        """``loc + scale * gumbel(0, 1)``: differentiable in ``loc`` and ``scale``."""
        return self._location_scale("gumbel", loc, scale, size)

    # integers, orders and picks -------------------------------------------------------
    @user_facing
    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        """Whole numbers in ``[low, high)`` (``[0, low)`` without ``high``; ``endpoint=True``
        includes ``high``).

        >>> import nbtape as nt
        >>> k = nt.random.Generator(3).integers(0, 10, size=1000).numpy()
        >>> k.dtype, int(k.min()), int(k.max())
        (dtype('int64'), 0, 9)
        """
        return self._draw("integers", (("size", _shape_of_size(size)),
                                       ("dtype", _dtype_name(dtype)),
                                       ("endpoint", bool(endpoint))),
                          _param(low), _param(high))

    @user_facing
    def permutation(self, x, axis=0):
        """A shuffled ``arange(x)`` for a whole number ``x``; for an array or tensor, a
        shuffled copy along ``axis`` (a recorded ``np.take``: gradients reach ``x``).

        >>> import numpy as np, nbtape as nt
        >>> sorted(nt.random.Generator(0).permutation(5).numpy().tolist())
        [0, 1, 2, 3, 4]
        """
        if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
            return self._draw("permutation", (), int(x))
        x = _picked_from(x)
        if np.ndim(_raw(x)) == 0:
            raise InvalidArgumentError(
                "nt.random.Generator.permutation takes a whole number n (for a shuffled "
                "arange(n)) or an array with at least one axis to shuffle, not a scalar "
                f"{_raw(x)!r}.")
        order = self._draw("permutation", (), np.shape(_raw(x))[axis])
        return np.take(x, order, axis=axis)

    @user_facing
    def shuffle(self, x, axis=0):
        """Shuffle ``x`` in place along ``axis``: an ``nt.Variable`` (a recorded assign, so
        ``nt.function`` replays it) or a numpy array (eagerly only).  Returns None.

        >>> import numpy as np, nbtape as nt
        >>> v = nt.Variable(np.arange(4.0))
        >>> nt.random.Generator(0).shuffle(v)
        >>> sorted(v.numpy().tolist())
        [0.0, 1.0, 2.0, 3.0]
        """
        if isinstance(x, Variable):
            x.assign(self.permutation(x, axis))
            return None
        if isinstance(x, np.ndarray):
            if tracing():
                raise InvalidArgumentError(
                    "nt.random.Generator.shuffle cannot shuffle a numpy array in place "
                    "inside nt.function: a replay runs its numpy calls on the values it "
                    "computes and never touches this array, so only the first call would "
                    "shuffle it. Shuffle an nt.Variable (gen.shuffle(v): a recorded "
                    "assign), or take a shuffled copy with x = gen.permutation(x).")
            order = self.permutation(x.shape[axis]).numpy()
            x[...] = np.take(x, order, axis=axis)
            return None
        raise InvalidArgumentError(
            f"nt.random.Generator.shuffle changes its argument in place, so it takes an "
            f"nt.Variable or a numpy array, not a {type(x).__name__} (tensors are "
            "immutable). Use gen.permutation(x), which returns a shuffled copy.")

    @user_facing
    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        """Entries of ``a`` (or of ``arange(a)`` for a whole number) picked at random, as
        numpy's ``choice``; picks of an array are a recorded ``np.take`` (gradients reach
        ``a``, never ``p``).

        >>> import numpy as np, nbtape as nt
        >>> nt.random.Generator(0).choice(3, size=4, p=[0.0, 1.0, 0.0]).numpy()
        array([1, 1, 1, 1])
        """
        whole = isinstance(a, (int, np.integer)) and not isinstance(a, bool)
        if not whole:
            a = _picked_from(a)
            if np.ndim(_raw(a)) == 0:
                raise InvalidArgumentError(
                    "nt.random.Generator.choice takes a whole number n (to pick from "
                    f"arange(n)) or an array with at least one axis, not a scalar {_raw(a)!r}.")
        n = int(a) if whole else np.shape(_raw(a))[axis]
        picks = self._draw("choice", (("shuffle", bool(shuffle)),), n, _shape_of_size(size),
                           bool(replace), _param(p))
        return picks if whole else np.take(a, picks, axis=axis)

    # new generators -------------------------------------------------------------------
    @user_facing
    def spawn(self, n_children):
        """``n_children`` new generators with streams independent of this one and of each
        other (numpy's ``SeedSequence.spawn``); the same for the same seed.

        >>> import numpy as np, nbtape as nt
        >>> a, b = nt.random.Generator(0).spawn(2)
        >>> bool(np.array_equal(a.random(3), b.random(3)))
        False
        """
        if isinstance(n_children, bool) or not isinstance(n_children, (int, np.integer)) \
                or n_children < 0:
            raise InvalidArgumentError(
                f"spawn takes a whole number >= 0 of new generators, not {n_children!r}.")
        return [Generator(s) for s in self._seed.spawn(int(n_children))]

    # copies: each with a state variable of its own (a variable's copy is a new variable),
    # so the copy and the original draw the same numbers next and then go their own ways
    def __copy__(self):
        return _rebuilt(copy.copy(self.state), copy.deepcopy(self._seed))

    def __deepcopy__(self, memo):
        return _rebuilt(copy.deepcopy(self.state, memo), copy.deepcopy(self._seed, memo))

    def __reduce__(self):       # pickle (the variable pickles as a new variable)
        return (_rebuilt, (self.state, self._seed))

    def __repr__(self):
        n = int(self.state._value[2])
        return f"nt.random.Generator(Philox, {n} draw{'' if n == 1 else 's'} so far)"


def _rebuilt(state, seed):
    """A generator with this state variable and seed sequence (copies, unpickling)."""
    new = object.__new__(Generator)
    new._seed, new.state = seed, state
    return new


def _plain_draw(method, *params):
    """A ``Generator`` method that hands its parameters (``(name, default)`` pairs) to
    numpy's method of the same name; no gradient flows to them."""
    sig = inspect.Signature([_P(name, _P.POSITIONAL_OR_KEYWORD, default=d) for name, d in params]
                            + [_P("size", _P.POSITIONAL_OR_KEYWORD, default=None)])

    @user_facing
    def draw(self, *args, **kwargs):
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"nt.random.Generator.{method}{sig}: {e}") from None
        bound.apply_defaults()
        values = list(bound.arguments.values())
        size = _shape_of_size(values.pop())
        return self._draw(method, (("size", size),), *[_param(v) for v in values])

    draw.__name__, draw.__qualname__ = method, f"Generator.{method}"
    draw.__signature__ = sig.replace(parameters=[_P("self", _P.POSITIONAL_ONLY)]
                                     + list(sig.parameters.values()))
    draw.__doc__ = (f"numpy ``Generator.{method}``'s numbers, drawn by a recorded op "
                    "(the parameters get no gradient).")
    return draw


# numpy's other distributions, their parameters as numpy names them
for _method, _params in {
        "binomial": (("n", _REQUIRED), ("p", _REQUIRED)),
        "negative_binomial": (("n", _REQUIRED), ("p", _REQUIRED)),
        "poisson": (("lam", 1.0),),
        "geometric": (("p", _REQUIRED),),
        "hypergeometric": (("ngood", _REQUIRED), ("nbad", _REQUIRED), ("nsample", _REQUIRED)),
        "beta": (("a", _REQUIRED), ("b", _REQUIRED)),
        "chisquare": (("df", _REQUIRED),),
        "standard_t": (("df", _REQUIRED),),
        "standard_cauchy": (),
        "multinomial": (("n", _REQUIRED), ("pvals", _REQUIRED)),
        "dirichlet": (("alpha", _REQUIRED),),
        "vonmises": (("mu", _REQUIRED), ("kappa", _REQUIRED)),
        "wald": (("mean", _REQUIRED), ("scale", _REQUIRED)),
        "weibull": (("a", _REQUIRED),),
        "pareto": (("a", _REQUIRED),),
        "power": (("a", _REQUIRED),),
        "rayleigh": (("scale", 1.0),),
        "zipf": (("a", _REQUIRED),),
        "logseries": (("p", _REQUIRED),),
        "triangular": (("left", _REQUIRED), ("mode", _REQUIRED), ("right", _REQUIRED)),
        "f": (("dfnum", _REQUIRED), ("dfden", _REQUIRED)),
        "noncentral_chisquare": (("df", _REQUIRED), ("nonc", _REQUIRED)),
        "noncentral_f": (("dfnum", _REQUIRED), ("dfden", _REQUIRED), ("nonc", _REQUIRED)),
}.items():
    setattr(Generator, _method, _plain_draw(_method, *_params))
del _method, _params


@user_facing
def default_rng(seed=None):
    """``nt.random.Generator(seed)``, under numpy's name for making a generator.

    >>> import nbtape as nt
    >>> nt.random.default_rng(7)
    nt.random.Generator(Philox, 0 draws so far)
    """
    return Generator(seed)

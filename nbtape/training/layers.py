"""Keras-style layers: ``Dense``, ``Dropout`` and ``Sequential``, with numpy inside.

A layer owns ``Variable`` weights, created the first time it is called (when
the input's last dimension is known), and its ``__call__`` is ordinary
recorded numpy, so a tape around a model call sees every matmul and
activation.  As in Keras, weights are float32 by default and floating inputs
are cast to the layer's dtype.

Random initial weights come from a seedable ``numpy.random.Generator``: pass
``seed=`` an int, or one shared ``np.random.default_rng(...)`` to several
layers to make a whole model reproducible.  A ``Dropout`` mask, drawn at every
training call, comes from an ``nt.random.Generator`` instead, whose draws
``nt.function`` replays afresh; ``training=`` reaches the layers whose ``call``
takes it, as in Keras.
"""
import inspect
import re

import numpy as np

from ..diagnostics.errors import user_facing
from ..core.tensor import TensorLike, constant
from ..core.variable import Variable
from . import nn
from .random import Generator

ACTIVATIONS = {
    "linear": None, "relu": nn.relu, "sigmoid": nn.sigmoid, "softmax": nn.softmax,
    "softplus": nn.softplus, "log_softmax": nn.log_softmax, "tanh": np.tanh,
}


def get_activation(activation):
    """A string (``"relu"``, ``"sigmoid"``, ...), a callable or ``None`` as a callable (or None).

    >>> get_activation("relu") is nn.relu, get_activation(None) is None
    (True, True)
    """
    if activation is None or callable(activation):
        return activation
    if isinstance(activation, str) and activation in ACTIVATIONS:
        return ACTIVATIONS[activation]
    raise ValueError(
        f"unknown activation {activation!r}. Use one of {sorted(ACTIVATIONS)}, None for "
        "no activation, or any function of one tensor (e.g. nt.nn.relu or np.tanh).")


# --- initializers --------------------------------------------------------------------------
def _fans(shape):
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = int(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


def _glorot_uniform(shape, dtype, rng):
    fan_in, fan_out = _fans(shape)
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-limit, limit, size=shape).astype(dtype)


def _he_uniform(shape, dtype, rng):
    limit = np.sqrt(6.0 / _fans(shape)[0])
    return rng.uniform(-limit, limit, size=shape).astype(dtype)


INITIALIZERS = {
    "glorot_uniform": _glorot_uniform,
    "he_uniform": _he_uniform,
    "zeros": lambda shape, dtype, rng: np.zeros(shape, dtype),
    "ones": lambda shape, dtype, rng: np.ones(shape, dtype),
}


def _initial_value(init, shape, dtype, rng):
    if isinstance(init, str):
        if init not in INITIALIZERS:
            raise ValueError(f"unknown initializer {init!r}; use one of {sorted(INITIALIZERS)} "
                             "or a function (shape, dtype) -> array.")
        return INITIALIZERS[init](shape, dtype, rng)
    if callable(init):
        value = np.asarray(init(shape, dtype))
        if value.shape != tuple(shape):
            raise ValueError(f"the initializer returned shape {value.shape}, expected {shape}.")
        return value.astype(dtype)
    raise TypeError(f"an initializer is a name or a function (shape, dtype) -> array, "
                    f"not {type(init).__name__}.")


def _snake(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _batchless(shape):
    """The shape Keras prints: the first (batch) axis as None."""
    return (None,) + tuple(shape[1:]) if len(shape) >= 2 else tuple(shape)


# --- Layer -------------------------------------------------------------------------------------
class Layer:
    """Base class: weights made on first call by ``build``, computation in ``call``.

    Subclasses define ``call(self, inputs)`` and, if they own weights,
    ``build(self, input_shape)`` using ``add_weight``.

    >>> import numpy as np, nbtape as nt
    >>> class Scale(nt.layers.Layer):
    ...     def build(self, input_shape):
    ...         self.s = self.add_weight("s", (input_shape[-1],), "ones")
    ...     def call(self, x):
    ...         return x * self.s
    >>> layer = Scale()
    >>> layer(np.ones((2, 3))).shape, [v.name for v in layer.trainable_variables]
    ((2, 3), ['scale/s'])
    """

    def __init__(self, name=None, trainable=True, dtype="float32"):
        self._auto_name = name is None
        self.name = name or _snake(type(self).__name__)
        self.dtype = np.dtype(dtype)
        self._weights = []
        self._trainable = bool(trainable)
        self.built = False
        self.output_shape = None

    # weights ---------------------------------------------------------------------------------
    def add_weight(self, name, shape, initializer="glorot_uniform", trainable=True, rng=None):
        """Create a ``Variable`` named ``"<layer>/<name>"`` owned by this layer."""
        rng = rng if rng is not None else np.random.default_rng()
        value = _initial_value(initializer, tuple(shape), self.dtype, rng)
        v = Variable(value, trainable=trainable and self._trainable, name=f"{self.name}/{name}")
        self._weights.append(v)
        return v

    @property
    def variables(self):
        """Every variable of the layer (trainable or not), in creation order."""
        return list(self._weights)

    weights = variables

    @property
    def trainable_variables(self):
        """The variables a tape watches and an optimizer updates."""
        return [v for v in self.variables if v.trainable]

    @property
    def non_trainable_variables(self):
        """The variables that training leaves alone (frozen layers, optimizer-free state)."""
        return [v for v in self.variables if not v.trainable]

    @property
    def trainable(self):
        """``False`` freezes the layer: its variables become non-trainable."""
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        self._trainable = bool(value)
        for v in self._weights:
            v.trainable = self._trainable

    def count_params(self):
        """The number of scalar weights (0 before the layer is built)."""
        return int(sum(v.size for v in self.variables))

    def get_weights(self):
        """The variables' values as numpy arrays (copies).  Inside ``nt.function`` this
        is ``v.numpy()``'s escape (refused at the user's line: a replay would return the
        values of the traced call)."""
        return [v.numpy() for v in self.variables]

    def set_weights(self, weights):
        """Assign values to the variables, in the order of ``variables``."""
        weights = list(weights)
        if len(weights) != len(self.variables):
            raise ValueError(f"layer {self.name!r} has {len(self.variables)} weights, but "
                             f"set_weights got {len(weights)}.")
        for v, w in zip(self.variables, weights):
            v.assign(w)

    # calling ----------------------------------------------------------------------------------
    def build(self, input_shape):
        """Create the weights for inputs of ``input_shape`` (layers without weights: nothing)."""
        self.built = True

    def call(self, inputs):
        """The computation (the identity here); subclasses override this."""
        return inputs

    def compute_output_shape(self, input_shape):
        """The output shape for ``input_shape`` (batch as None), found by a run on zeros."""
        shape = tuple(1 if s is None else s for s in input_shape)
        out = self.call(np.zeros(shape, self.dtype))
        return _batchless(np.shape(out._value if isinstance(out, TensorLike) else out))

    def _cast(self, x):
        if isinstance(x, TensorLike):
            return x.astype(self.dtype) if x.dtype != self.dtype else x
        return np.asarray(x, dtype=self.dtype)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # as in Keras, ``training`` reaches only the layers whose call takes it
        cls._call_takes_training = "training" in inspect.signature(cls.call).parameters

    _call_takes_training = False

    @user_facing
    def __call__(self, inputs, training=None):
        """``call(inputs)`` after building the layer on first use; ``training=True``
        (training mode: a ``Dropout`` drops) reaches the layers whose ``call`` takes it."""
        inputs = self._cast(inputs)
        if not self.built:
            self.build(inputs.shape)
            self.built = True
        if self._call_takes_training:
            out = self.call(inputs, training=training)
        else:
            out = self.call(inputs)
        self.output_shape = _batchless(out.shape)
        return out

    def __repr__(self):
        return f"<nt.layers.{type(self).__name__} name={self.name!r} built={self.built}>"


class Dense(Layer):
    """``activation(inputs @ kernel + bias)``, as ``keras.layers.Dense``.

    The kernel is Glorot-uniform and the bias zeros by default; both are made
    on the first call, from the input's last dimension.

    >>> import numpy as np, nbtape as nt
    >>> layer = nt.layers.Dense(2, activation="relu", seed=0)
    >>> y = layer(np.ones((1, 3)))
    >>> y.shape, [(v.name, v.shape) for v in layer.trainable_variables]
    ((1, 2), [('dense/kernel', (3, 2)), ('dense/bias', (2,))])
    """

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", seed=None, name=None, trainable=True, dtype="float32"):
        super().__init__(name=name, trainable=trainable, dtype=dtype)
        if not isinstance(units, (int, np.integer)) or units < 1:
            raise ValueError(f"Dense needs a positive whole number of units, got {units!r}.")
        self.units = int(units)
        self.activation = get_activation(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self._rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        self.kernel = self.bias = None

    def build(self, input_shape):
        if not input_shape or input_shape[-1] is None:
            raise ValueError(
                f"Dense layer {self.name!r} needs inputs with a known last dimension (the "
                f"number of features), got shape {input_shape}. Give it an array of shape "
                "(batch, features).")
        fan_in = int(input_shape[-1])
        self.kernel = self.add_weight("kernel", (fan_in, self.units), self.kernel_initializer,
                                      rng=self._rng)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.units,), self.bias_initializer, rng=self._rng)
        self.built = True

    def call(self, inputs):
        fan_in = self.kernel.shape[0]
        if not inputs.shape or inputs.shape[-1] != fan_in:
            self._wrong_features(inputs.shape, fan_in)
        y = inputs @ self.kernel
        if self.use_bias:
            y = y + self.bias
        return self.activation(y) if self.activation is not None else y

    def _wrong_features(self, shape, fan_in):
        got = f"shape {shape}, with {shape[-1]}" if shape else "a scalar, with no"
        other = f"{shape[-1]}-feature" if shape else "those"
        raise ValueError(
            f"Dense layer {self.name!r} was built for inputs with {fan_in} features on the "
            f"last axis (its kernel has shape {self.kernel.shape}), but this call got "
            f"{got} features. A layer makes its weights on its first call, for that call's "
            f"number of features: give it inputs of shape (batch, {fan_in}), or use a new "
            f"Dense layer for {other} inputs.")

    def compute_output_shape(self, input_shape):
        """``input_shape`` with its last axis replaced by ``units``."""
        return _batchless(tuple(input_shape[:-1]) + (self.units,))


class Dropout(Layer):
    """Sets each input to 0 with probability ``rate`` and scales the rest by
    ``1 / (1 - rate)``, when called with ``training=True``; otherwise the identity.  As
    ``keras.layers.Dropout``.

    The mask comes from an ``nt.random.Generator`` (``seed``: a whole number, None, an
    ``nt.random.Generator`` to share, or a numpy ``Generator`` to take a seed from), so
    inside ``nt.function`` every call drops afresh, exactly as the eager run with the
    same seed would.  ``noise_shape`` (e.g. ``(batch, 1)``: one choice per row) has
    None for the input's own length on that axis.  The layer keeps its inputs' dtype.

    >>> import numpy as np, nbtape as nt
    >>> drop = nt.layers.Dropout(0.5, seed=0)
    >>> drop(np.ones((2, 4)), training=True).numpy()
    array([[2., 2., 0., 2.],
           [2., 2., 0., 2.]])
    >>> drop(np.ones((1, 2))).numpy()          # not training: the identity
    array([[1., 1.]])
    """

    @user_facing
    def __init__(self, rate, seed=None, *, noise_shape=None, name=None, **kwargs):
        # (seed second, as nbtape's API has it; noise_shape, Keras's second, by keyword)
        super().__init__(name=name, **kwargs)
        if isinstance(rate, bool) or not isinstance(rate, (int, float, np.integer, np.floating)) \
                or not 0 <= rate < 1:
            raise ValueError(
                f"Dropout's rate is the fraction of inputs to drop, a number in [0, 1), not "
                f"{rate!r}. Use e.g. nt.layers.Dropout(0.2); rate=1 would drop everything.")
        self.rate = float(rate)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        if isinstance(seed, Generator):
            self.generator = seed
        elif isinstance(seed, np.random.Generator):
            self.generator = Generator(int(seed.integers(2 ** 63)))
        else:
            self.generator = Generator(seed)

    def _cast(self, x):
        return x if isinstance(x, TensorLike) else constant(x)

    def call(self, inputs, training=None):
        if not training or self.rate == 0.0:
            return inputs
        keep = 1.0 - self.rate
        # float32 draws: half the Philox words of float64, and 2**-24 is fine grain for a rate
        kept = self.generator.random(self._mask_shape(inputs.shape), np.float32) < keep
        return np.where(kept, inputs / keep, 0)

    def _mask_shape(self, shape):
        if self.noise_shape is None:
            return tuple(shape)
        if len(self.noise_shape) != len(shape):
            raise ValueError(
                f"Dropout layer {self.name!r} has noise_shape {self.noise_shape}, with "
                f"{len(self.noise_shape)} axes, but its input has shape {tuple(shape)}: "
                "give noise_shape one entry per axis of the input (None for the input's "
                "own length, 1 to share the mask along that axis).")
        return tuple(n if s is None else s for s, n in zip(self.noise_shape, shape))

    def compute_output_shape(self, input_shape):
        """The input's shape: dropping never changes it."""
        return _batchless(tuple(input_shape))


class _Function(Layer):
    """A plain function used as a layer in ``Sequential`` (like Keras's ``Lambda``)."""

    def __init__(self, fn):
        super().__init__(name=getattr(fn, "__name__", "function").strip("<>"))
        self.fn = fn

    def _cast(self, x):
        return x

    def call(self, inputs):
        return self.fn(inputs)


class Sequential(Layer):
    """A stack of layers, each feeding the next, as ``keras.Sequential``.

    Plain functions (``nt.nn.relu``, a lambda) may be mixed in as weightless layers.

    >>> import numpy as np, nbtape as nt
    >>> model = nt.Sequential([nt.layers.Dense(4, "relu", seed=0), nt.layers.Dense(2, seed=1)])
    >>> model(np.zeros((5, 3))).shape, len(model.trainable_variables)
    ((5, 2), 4)
    >>> model.summary()
    Model: "sequential"
    _________________________________________________________________
    Layer (type)                 Output Shape              Param #
    =================================================================
    dense (Dense)                (None, 4)                 16
    dense_1 (Dense)              (None, 2)                 10
    =================================================================
    Total params: 26
    Trainable params: 26
    Non-trainable params: 0
    _________________________________________________________________
    """

    def __init__(self, layers=None, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        self._layers = []
        for layer in layers or ():
            self.add(layer)

    def add(self, layer):
        """Append a layer (or a function of one tensor) to the stack."""
        if not isinstance(layer, Layer):
            if not callable(layer):
                raise TypeError(f"Sequential takes layers or functions, not "
                                f"{type(layer).__name__}.")
            layer = _Function(layer)
        taken = {existing.name for existing in self._layers}
        if layer._auto_name:
            base, k = layer.name, 0
            while layer.name in taken:
                k += 1
                layer.name = f"{base}_{k}"
        elif layer.name in taken:
            raise ValueError(
                f"this Sequential model already has a layer named {layer.name!r}; layer "
                "names must be unique within a model (they name its variables). Give the "
                "new layer another name=, or leave name out to get one made up.")
        self._layers.append(layer)
        self.built = False

    @property
    def layers(self):
        """The layers, in calling order (functions appear wrapped as layers)."""
        return list(self._layers)

    @property
    def variables(self):
        """Every layer's variables, in layer order, each once."""
        seen, out = set(), []
        for layer in self._layers:
            for v in layer.variables:
                if id(v) not in seen:
                    seen.add(id(v))
                    out.append(v)
        return out

    weights = variables

    @Layer.trainable.setter
    def trainable(self, value):
        self._trainable = bool(value)
        for layer in self._layers:
            layer.trainable = value

    def build(self, input_shape):
        """Build every layer for inputs of ``input_shape`` (e.g. ``(None, 64)``)."""
        shape = tuple(input_shape)
        for layer in self._layers:
            if not layer.built:
                layer.build(shape)
                layer.built = True
            shape = layer.compute_output_shape(shape)
            layer.output_shape = shape
        self.output_shape = shape
        self.built = True

    def _cast(self, x):
        return x if isinstance(x, TensorLike) else np.asarray(x)

    def call(self, inputs, training=None):
        """Feed ``inputs`` through each layer in turn (``training`` to each)."""
        x = inputs
        for layer in self._layers:
            x = layer(x, training=training)
        return x

    def compute_output_shape(self, input_shape):
        """The last layer's output shape for inputs of ``input_shape``."""
        shape = tuple(input_shape)
        for layer in self._layers:
            shape = layer.compute_output_shape(shape)
        return shape

    def summary(self, line_length=65, print_fn=None):
        """Print a table of the layers, their output shapes and parameter counts."""
        widths = [int(line_length * f) for f in (0.45, 0.85)]
        def row(a, b, c):
            return (a.ljust(widths[0] - 1) + " " + b.ljust(widths[1] - widths[0] - 1) + " "
                    + c).rstrip()
        lines = [f'Model: "{self.name}"', "_" * line_length,
                 row("Layer (type)", "Output Shape", "Param #"), "=" * line_length]
        for layer in self._layers:
            shape = str(layer.output_shape) if layer.built and layer.output_shape else "?"
            params = str(layer.count_params()) if layer.built else "0 (unbuilt)"
            lines.append(row(f"{layer.name} ({type(layer).__name__})", shape, params))
        total = self.count_params()
        trainable = int(sum(v.size for v in self.trainable_variables))
        lines += ["=" * line_length, f"Total params: {total:,}",
                  f"Trainable params: {trainable:,}",
                  f"Non-trainable params: {total - trainable:,}", "_" * line_length]
        (print_fn or print)("\n".join(lines))

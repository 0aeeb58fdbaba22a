"""Elementwise functions (numpy ufuncs): one line per derivative."""
import numpy as np

from .registry import defjvp, defnondiff, defvjp
from .util import conj

defvjp(np.exp, lambda g, ans, x: g * conj(ans))
defvjp(np.log, lambda g, ans, x: g / conj(x))
defvjp(np.sin, lambda g, ans, x: g * conj(np.cos(x)))
defvjp(np.cos, lambda g, ans, x: -g * conj(np.sin(x)))
defvjp(np.tanh, lambda g, ans, x: g * conj(1 - ans ** 2))
defvjp(np.sqrt, lambda g, ans, x: g * conj(0.5 / ans))
defvjp(np.square, lambda g, ans, x: g * conj(2 * x))

defjvp(np.exp, lambda t, ans, x: t * ans)
defjvp(np.log, lambda t, ans, x: t / x)
defjvp(np.sin, lambda t, ans, x: t * np.cos(x))
defjvp(np.cos, lambda t, ans, x: -t * np.sin(x))
defjvp(np.tanh, lambda t, ans, x: t * (1 - ans ** 2))
defjvp(np.sqrt, lambda t, ans, x: t * 0.5 / ans)
defjvp(np.square, lambda t, ans, x: t * 2 * x)

defnondiff(np.isnan, np.isinf, np.isfinite, np.signbit)

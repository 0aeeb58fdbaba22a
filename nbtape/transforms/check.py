"""``check_gradients``: the tape's gradient against central finite differences."""
import numpy as np

from ..diagnostics.errors import user_facing
from ..display.numbers import number
from ..tape.gradient_tape import GradientTape, UnconnectedGradients
from ..core.tensor import Tensor, TensorLike


def _sum_value(f, args):
    y = f(*args)
    return float(np.sum(np.asarray(y._value if isinstance(y, TensorLike) else y)).real)


def numerical_gradient(f, args, index, eps):
    """Central differences of ``sum(f(*args))`` with respect to ``args[index]``."""
    x = np.array(np.asarray(args[index]._value if isinstance(args[index], TensorLike)
                            else args[index]), dtype=np.result_type(args[index], np.float64), order="C")
    grad = np.zeros_like(x)
    flat, gflat = x.reshape(-1), grad.reshape(-1)
    parts = [1.0, 1j] if x.dtype.kind == "c" else [1.0]
    for k in range(flat.size):
        for unit in parts:
            orig = flat[k]
            flat[k] = orig + eps * unit
            plus = _sum_value(f, _with(args, index, x))
            flat[k] = orig - eps * unit
            minus = _sum_value(f, _with(args, index, x))
            flat[k] = orig
            gflat[k] += unit * (plus - minus) / (2 * eps)
    return grad


def _with(args, index, value):
    args = list(args)
    args[index] = Tensor(value.copy())
    return args


@user_facing
def check_gradients(f, *args, eps=1e-6, rtol=1e-5, atol=1e-6):
    """Compare the tape's gradient of ``sum(f(*args))`` with central differences.

    Raises ``AssertionError`` showing both where they differ; returns the
    largest absolute difference otherwise.  Only float and complex arguments
    are checked (integer ones, like an exponent, are passed as they are); a
    call with none has nothing to check and raises ``TypeError``.

    >>> import numpy as np, nbtape as nt
    >>> err = nt.check_gradients(np.sin, np.array([0.1, 0.2]))
    >>> err < 1e-8
    True
    """
    tensors = [a if isinstance(a, TensorLike) else Tensor(np.asarray(a)) for a in args]
    which = [k for k, a in enumerate(tensors) if a.dtype.kind in "fc"]
    if not which:
        raise TypeError(_nothing_to_check(f, tensors))
    with GradientTape() as tape:
        for k in which:
            tape.watch(tensors[k])
        y = f(*tensors)
    grads = tape.gradient(y, [tensors[k] for k in which],
                          unconnected_gradients=UnconnectedGradients.ZERO)
    worst = 0.0
    for k, g in zip(which, grads):
        analytic = np.asarray(g._value)
        numeric = numerical_gradient(f, tensors, k, eps)
        diff = np.abs(analytic - numeric)
        worst = max(worst, float(np.max(diff)) if diff.size else 0.0)
        close = np.isclose(analytic, numeric, rtol=rtol, atol=atol, equal_nan=False)
        if not np.all(close):
            raise AssertionError(
                f"gradient of {getattr(f, '__name__', 'f')} w.r.t. argument {k} differs from "
                f"central finite differences (eps={eps}) at {int(np.sum(~close))} of "
                f"{diff.size} entries:\n" + side_by_side(analytic, numeric, close))
    return worst


def side_by_side(analytic, numeric, close, rows=8):
    """The entries where the two gradients differ, one row each: tape, numerical, difference.

    Numbers are written as every nbtape display writes them (the same text on any
    numpy), and at most ``rows`` rows are listed.

    >>> print(side_by_side(np.array([3.0, 6.0]), np.array([2.0, 4.0]), np.array([False, False])))
      entry  tape  numerical  difference
      [0]    3.0   2.0        1.0
      [1]    6.0   4.0        2.0
      largest absolute difference: 2.0
    """
    bad = np.argwhere(~np.asarray(close).reshape(np.shape(analytic)))
    table = [("entry", "tape", "numerical", "difference")]
    for index in bad[:rows]:
        a, n = analytic[tuple(index)], numeric[tuple(index)]
        table.append(("[" + ", ".join(str(int(i)) for i in index) + "]",
                      number(a), number(n), number(a - n)))
    widths = [max(len(row[c]) for row in table) for c in range(3)]
    lines = ["  " + "  ".join(text.ljust(w) for text, w in zip(row, widths + [0])).rstrip()
             for row in table]
    if len(bad) > rows:
        lines.append(f"  ... and {len(bad) - rows} more")
    diff = np.abs(analytic - numeric)
    lines.append("  largest absolute difference: " + number(np.max(diff) if diff.size else 0.0))
    return "\n".join(lines)


def _nothing_to_check(f, tensors):
    name = getattr(f, "__name__", "f")
    if not tensors:
        return (f"check_gradients({name}) got no arguments to check: pass the values to "
                f"differentiate at, e.g. nt.check_gradients({name}, np.array([0.5, 1.0])).")
    kinds = ", ".join(str(t.dtype) for t in tensors)
    first = np.asarray(tensors[0]._value).ravel()[:1]
    hint = ""
    if first.size and first.dtype.kind in "iu":
        hint = (f" (e.g. {float(first[0])!r} instead of {int(first[0])}, or "
                "np.asarray(x, dtype=float))")
    return (f"check_gradients({name}) has nothing to check: its arguments are {kinds}, and "
            "only float or complex arguments have gradients, so no finite difference would "
            f"be compared. Pass float values{hint}.")

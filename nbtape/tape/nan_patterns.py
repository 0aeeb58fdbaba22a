"""What to say about a NaN or inf: the known patterns behind one and their fixes.

numerics.py finds where a NaN or inf was born; this module names it.  A pattern is a
pair (what happened, what to do): a derivative infinite at 0 (sqrt, log, a division, a
norm), an overflow (exp, a power, a product), 0 x inf behind a ``where``, a NaN that came
in with the user's data.  The advice prefers the double ``where`` (or a safe norm) to an
epsilon, and says what an epsilon costs.  ``headline`` says it all in one first line of
at most ``HEADLINE`` characters (where, what, the fix); the detail follows it.

>>> backward_pattern("np.sqrt", {"input": 0.0}, False)[0]
'sqrt at 0: the derivative 1/(2*sqrt(x)) is infinite at x = 0'
"""
import math

from ..diagnostics.user_line import describe, source_line

# np.sqrt(x + 1e-12) is the advice one finds everywhere: finite, but steep
_EPS_SQRT = ("np.sqrt(x + eps), stays finite but steep: its slope at 0 is 1/(2*sqrt(eps)), "
             "5e5 for eps = 1e-12, enough to wreck an update")
_SAFE_NORM = ("a safe norm, the double where on the sum of squares: s = np.sum(x**2); "
              "np.where(s > 0, np.sqrt(np.where(s > 0, s, 1.0)), 0.0). An epsilon, "
              + _EPS_SQRT.replace("np.sqrt(x + eps)", "np.sqrt(s + eps)"))
# op names whose derivative is infinite at 0, with what to say and what to do
_AT_ZERO = {
    "np.sqrt": ("sqrt at 0: the derivative 1/(2*sqrt(x)) is infinite at x = 0",
                "the double where, np.where(x > 0, np.sqrt(np.where(x > 0, x, 1.0)), 0.0) "
                "(for a norm, a safe norm: the same on the sum of squares). An epsilon, "
                + _EPS_SQRT),
    "np.cbrt": ("cbrt at 0: the derivative is infinite at x = 0",
                "keep the input away from 0, or use the double where"),
    "np.log": ("log at 0: the derivative 1/x is infinite at x = 0",
               "keep the logarithm's input positive (mask 0 with the double where), or use "
               "np.log1p / np.logaddexp for log(1 + ...); np.log(x + eps) stays finite but "
               "its slope at 0 is 1/eps (1e12 for eps = 1e-12)"),
    "np.log2": ("log2 at 0: the derivative is infinite at x = 0", "keep the input positive"),
    "np.log10": ("log10 at 0: the derivative is infinite at x = 0", "keep the input positive"),
    "np.true_divide": ("division by 0: the derivative of a / b is infinite where b = 0",
                       "keep the divisor away from 0 (b + eps), or mask it with the double "
                       "where"),
    "np.divide": ("division by 0: the derivative of a / b is infinite where b = 0",
                  "keep the divisor away from 0 (b + eps), or mask it with the double where"),
    "np.reciprocal": ("1/x at 0: the derivative is infinite at x = 0",
                      "keep the input away from 0"),
    "np.power": ("a power at 0: the derivative of x**p with p < 1 is infinite at x = 0",
                 "keep the base away from 0 (x + eps), or use the double where"),
    "np.arcsin": ("arcsin at +-1: its derivative is infinite there", "clip the input to "
                  "(-1 + eps, 1 - eps)"),
    "np.arccos": ("arccos at +-1: its derivative is infinite there", "clip the input to "
                  "(-1 + eps, 1 - eps)"),
    "np.linalg.norm": ("a norm at 0: the derivative x/|x| is 0/0 at x = 0", _SAFE_NORM),
    "np.linalg.vector_norm": ("a norm at 0: the derivative x/|x| is 0/0 at x = 0", _SAFE_NORM),
}
_OVERFLOW = {
    "np.exp": ("overflow in exp: e^x is inf past x = 88.7 in float32 (709.8 in float64)",
               "compute log(1 + e^x) as np.logaddexp(0, x), a softmax or log-sum-exp with "
               "nt.nn.softmax / nt.nn.logsumexp (they subtract the maximum first), or give "
               "the function a custom gradient that stays finite"),
    "np.expm1": ("overflow in expm1", "rewrite it so that the exponent stays small"),
    "np.exp2": ("overflow in exp2", "rewrite it so that the exponent stays small"),
    "np.cosh": ("overflow in cosh", "rewrite it with np.logaddexp"),
    "np.sinh": ("overflow in sinh", "rewrite it with np.logaddexp"),
    "np.power": ("overflow in a power", "rescale before raising to the power"),
    "np.square": ("overflow in a square", "rescale before squaring"),
    "np.multiply": ("overflow in a product", "rescale the factors"),
}
_ZERO_TIMES_INF = (
    "0 x inf: the cotangent reaching this op was 0 at this element (a branch that "
    "np.where, a mask, np.clip or np.nan_to_num throws away still has its gradient "
    "taken), and the op's local derivative there is infinite, so the chain rule gives "
    "0 x inf = NaN")
_ZERO_TIMES_INF_FIX = (
    "make the discarded branch safe where it is discarded (the \"double where\"): "
    "np.where(x > 0, np.sqrt(np.where(x > 0, x, 1.0)), 0.0) instead of "
    "np.where(x > 0, np.sqrt(x), 0.0)")


_REPEATED = {
    "np.linalg.eigh": (
        "eigh at repeated eigenvalues: numpy picks any basis of an eigenspace, and the "
        "gradient reaching the eigenvectors couples two of one eigenspace, so it is not "
        "determined there (nbtape gives NaN; TensorFlow drops the term, a wrong 0)",
        "write the function of the matrix without its eigenvectors where you can (S @ S, "
        "np.trace, np.linalg.eigvalsh), or keep the eigenvalues apart"),
    "np.linalg.svd": (
        "svd at repeated singular values: numpy picks any basis of their singular "
        "vectors, and the gradient reaching them couples two of one such space, so it is "
        "not determined there (nbtape gives NaN; TensorFlow drops the term, a wrong 0)",
        "write the function without the singular vectors where you can (np.linalg.norm, "
        "np.linalg.svd(a, compute_uv=False)), or keep the singular values apart"),
}
# the fix in a few words, for the first line (the detail after it says it in full)
_SHORT_FIX = {
    "0 x inf": "the double where (below)",
    "sqrt at 0": "the double where, not an epsilon (below)",
    "overflow in exp": "stable forms (below)",
    "a norm at 0": "a safe norm (below)",
    "log at 0": "keep its input positive (below)",
    "log of 0 is -inf": "keep its input positive",
    "division by 0": "mask the divisor (below)",
    "a power at 0": "keep the base away from 0",
    "eigh at repeated eigenvalues": "avoid its eigenvectors",
    "svd at repeated singular values": "avoid its vectors",
    "a NaN came in with the data": "clean the data first",
    "an inf came in with the data": "clean the data first",
    "the NaN came in with output_gradients": "check the seed you pass",
    "the inf came in with output_gradients": "check the seed you pass",
}
HEADLINE = 120


def _short(pattern):
    """A pattern's name: its words before the colon ("sqrt at 0")."""
    head = pattern.split(":", 1)[0]
    if len(head) <= 48:
        return head
    if "derivative is not finite" in head:      # the generic pattern: the op is named
        return "its derivative is not finite"
    return head[:45].rsplit(" ", 1)[0] + "..."


def headline(kinds, what, label, birth):
    """The warning's first line, at most ``HEADLINE`` characters: what is not finite,
    where it was born (the op, its line), the pattern, and the fix in a few words.

    ``birth`` is a ``numerics.Birth`` (its phase, name, where, pattern and fix are read).

    >>> from types import SimpleNamespace
    >>> b = SimpleNamespace(phase="backward", name="np.sqrt", where=("cell.py", 4, "f"),
    ...                     pattern="0 x inf: ...", fix="make the discarded branch safe ...")
    >>> headline("1 NaN", "gradient", "`x`", b)
    '1 NaN in the gradient of `x`, born at np.sqrt (line 4): 0 x inf. Fix: the double where (below).'
    """
    named = not label.startswith("the source")      # an unnamed source: the detail says
    if birth is None:
        start = f"{kinds} in the {what}" + (f" of {label}" if named else "")
        return start + ": this tape kept no values to say where. Fix: nt.check_numerics()."
    short = _short(birth.pattern)
    fix = _SHORT_FIX.get(short)
    if fix is None and birth.fix:
        fix = birth.fix if len(birth.fix) <= 36 else "below"
    lineno = (birth.where or (None, None))[1]
    line = f" (line {lineno})" if lineno is not None else ""
    text = ""
    for of in ((f" of {label}" if named else ""), ""):      # a long name goes first
        start = f"{kinds} in the {what}{of}"
        if birth.phase == "seed":
            text = f"{start}: {short}"
        elif birth.phase == "data":
            text = f"{start}: {short} at {birth.name}{line}"
        elif birth.phase == "forward":
            at = f" (line {lineno}, forward pass)" if lineno is not None else " (forward pass)"
            text = f"{start}, born at {birth.name}{at}: {short}"
        else:
            text = f"{start}, born at {birth.name}{line}: {short}"
        for f in (fix, "below"):
            if f and len(text) + len(f) + 8 <= HEADLINE:
                return text + f". Fix: {f}."
    text += "."
    return text if len(text) <= HEADLINE else text[:HEADLINE - 3] + "..."



def sentence(text):
    """``text`` as the start of a sentence: capitalised, unless it starts with code (an
    op's name such as ``np.log`` keeps its spelling).

    >>> sentence("sqrt at 0"), sentence("np.log's derivative"), sentence("custom_gradient(f)")
    ('Sqrt at 0', "np.log's derivative", 'custom_gradient(f)')
    """
    first = text.split(" ", 1)[0]
    if any(c in first for c in "._(") or not text:
        return text
    return text[0].upper() + text[1:]


def nan_number(v):
    if isinstance(v, float):
        if math.isfinite(v):
            return repr(v)
        return "nan" if v != v else ("inf" if v > 0 else "-inf")
    return repr(v)


def backward_pattern(name, values, forward_bad):
    g, contribution, x, out = (values.get("cotangent"), values.get("contribution"),
                               values.get("input"), values.get("output"))
    if name.startswith("custom_gradient") or name.startswith("recompute_grad"):
        return (f"the gradient function of {name} returned a non-finite value",
                "check the function your custom gradient returns at this element")
    if g == 0 and contribution is not None and contribution != contribution:
        if forward_bad and name in _OVERFLOW:
            return (_ZERO_TIMES_INF + f"; here the forward value itself overflowed "
                    f"({_OVERFLOW[name][0]})", _OVERFLOW[name][1])
        return _ZERO_TIMES_INF, _ZERO_TIMES_INF_FIX
    zero = (x == 0 if x is not None else out == 0 if out is not None else False)
    if name in _AT_ZERO and (zero or name.startswith(("np.arcs", "np.arcc"))
                             or "divide" in name or "norm" in name):
        return _AT_ZERO[name]
    if name in _OVERFLOW:
        return _OVERFLOW[name]
    if name in _REPEATED:
        return _REPEATED[name]
    return (f"{name}'s derivative is not finite at this element", None)


def forward_pattern(name, values):
    x, out = values.get("input"), values.get("output")
    if name in _OVERFLOW and out is not None and out in (math.inf, -math.inf):
        return _OVERFLOW[name]
    if name in ("np.log", "np.log2", "np.log10") and x == 0:
        return ("log of 0 is -inf", "keep the logarithm's input positive")
    if name in ("np.true_divide", "np.divide", "np.reciprocal"):
        return ("a division by 0", "keep the divisor away from 0")
    if name in ("np.subtract", "np.add") and out != out:
        return ("inf - inf: two infinite values cancelled into NaN",
                "find where the infinities came from (an overflow, a log of 0)")
    if name == "np.multiply" and out != out:
        return ("inf times 0 is NaN: a product of an infinite value and 0",
                "find where the infinity came from")
    if name in ("np.sqrt", "np.log", "np.log2", "np.log10") and x is not None and x < 0:
        what = "square root" if name == "np.sqrt" else "log"
        return (f"{what} of a negative number: {name}({nan_number(x)}) is NaN",
                "keep the input non-negative")
    return (f"{name} gave a non-finite value from finite inputs", None)


def derivative_raised(name, where, error, mode):
    """The text of the ``NumericsError`` for numpy raising (``np.errstate(...="raise")``)
    inside ``name``'s derivative: the op, its line, numpy's words, the pattern and fix.

    >>> print(derivative_raised("np.sqrt", None, FloatingPointError("divide by zero"),
    ...                         "backward pass"))   # doctest: +ELLIPSIS
    numpy raised "divide by zero" while nbtape computed the derivative of np.sqrt ...
    """
    code = source_line(where)
    at = describe(where) + (f": {code}" if code else "")
    words = str(error)
    table = _OVERFLOW if "overflow" in words else _AT_ZERO
    pattern, fix = table.get(name, (f"{name}'s derivative is not finite here", None))
    return (f'numpy raised "{words}" while nbtape computed the derivative of {name} in the '
            f"{mode} (the op at {at}), because np.errstate asks for 'raise' there: nbtape "
            f"raises its NumericsError instead, as for any NaN or inf it makes. "
            f"{sentence(pattern)}." + (f" Fix: {fix}." if fix else ""))



DATA_PATTERN = ("a NaN came in with the data: nbtape did not make it, no op of this tape "
                 "did; a mask on the result does not help, since the gradient still "
                 "multiplies it by 0 (0 x NaN = NaN)")
DATA_FIX = ("find it in your data (np.isnan(data).any()) and clean or mask it before it "
             "meets the tape: np.where(np.isnan(data), 0.0, data)")

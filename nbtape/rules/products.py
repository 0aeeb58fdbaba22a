"""Products and contractions: einsum, dot, inner, tensordot, kron, outer, vdot.

Every product is multilinear, so its JVP is a sum of the product with one operand
replaced by its tangent, and its VJP contracts the output adjoint with the other
operands.  Products other than matmul are spelled as einsum subscripts, so they
share einsum's VJP.  Complex values follow TensorFlow: the VJP of a holomorphic
``f`` is ``g * conj(f'(x))``, which for matrices means conjugate transposes
(``util.H``).  ``np.linalg`` (inverses, factorizations, norms) is in ``linalg.py``.
"""
import string

import numpy as np

from ..extend import defjvp, defvjp
from .core_ops import matmul_vjp_x, matmul_vjp_y
from ..core.registry import VARARGS, defrule, numpy_function
from .util import conj, shape_of


def _ndim(a):
    return len(shape_of(a))


# --- einsum -------------------------------------------------------------------------------
_LABELS = string.ascii_uppercase + string.ascii_lowercase   # in sorting order, as numpy's


def _labels(sublist):
    return "".join("..." if s is Ellipsis else _LABELS[s] for s in sublist)


def einsum_spec(args):
    """``(inputs, output, positions)`` of an einsum call, fully explicit.

    Ellipses become letters, an implicit output becomes explicit, and the
    interleaved ``einsum(x, [0, 1], y, [1, 2])`` form becomes letters too.

    >>> einsum_spec(("...j,jk", np.ones((2, 3, 4)), np.ones((4, 5))))
    (['ABj', 'jk'], 'ABk', [1, 2])
    """
    if isinstance(args[0], str):
        positions = list(range(1, len(args)))
        ins, arrow, out = args[0].replace(" ", "").partition("->")
        ins = ins.split(",")
    else:
        positions = list(range(0, len(args) - 1, 2))
        ins = [_labels(args[k + 1]) for k in positions]
        arrow = len(args) % 2
        out = _labels(args[-1]) if arrow else ""
    ndims = [_ndim(args[k]) for k in positions]
    used = set("".join(ins) + out)
    free = [c for c in _LABELS if c not in used]
    n_ell = max([n - len(s) + 3 for s, n in zip(ins, ndims) if "..." in s], default=0)
    ell = "".join(free[:n_ell])
    ins = [s.replace("...", ell[len(ell) - (n - len(s) + 3):]) if "..." in s else s
           for s, n in zip(ins, ndims)]
    if arrow:
        out = out.replace("...", ell)
    else:
        letters = "".join(ins)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1
                                   and c not in ell))
    return ins, out, positions


def _sizes(subs, operands):
    sizes = {}
    for s, op in zip(subs, operands):
        for c, n in zip(s, shape_of(op)):
            sizes[c] = max(sizes.get(c, 1), n)
    return sizes


def contract_adjoint(g, ins, out, operands, k, optimize=False):
    """VJP of ``einsum(ins -> out)`` for operand ``k``: contract ``g`` with the others.

    A letter only operand ``k`` has was summed there, so it comes back as ones; a
    letter it repeats is a diagonal, so it comes back through an identity matrix.

    >>> contract_adjoint(np.float64(1.0), ["ii"], "", [np.zeros((2, 2))], 0)   # of a trace
    array([[1., 0.],
           [0., 1.]])
    """
    terms = [(conj(op), s) for j, (op, s) in enumerate(zip(operands, ins)) if j != k]
    terms.append((g, out))
    have = set("".join(s for _, s in terms))
    sizes = _sizes(ins, operands)
    spare = iter(c for c in _LABELS if c not in sizes)
    target = ""
    for c in ins[k]:
        if c in target:
            fresh = next(spare)
            terms.append((np.eye(sizes[c]), c + fresh))
            target += fresh
            continue
        if c not in have:
            terms.append((np.ones(sizes[c]), c))
            have.add(c)
        target += c
    ops, subs = zip(*terms)
    return np.einsum(",".join(subs) + "->" + target, *ops, optimize=optimize)


def _contract_tangent(ts, ins, out, operands, optimize=False):
    """JVP of ``einsum(ins -> out)``: the sum over operands of einsum with one tangent."""
    spec = ",".join(ins) + "->" + out
    total = None
    for k, t in enumerate(ts):
        if t is not None:
            term = np.einsum(spec, *operands[:k], t, *operands[k + 1:], optimize=optimize)
            total = term if total is None else total + term
    return total


def _optimize(kw):
    # a precomputed contraction path is for the forward einsum only
    opt = kw.get("optimize", False)
    return opt if isinstance(opt, (bool, str)) else True


def _einsum_vjp(g, ans, args, kw, needs):
    ins, out, pos = einsum_spec(args)
    ops = [args[p] for p in pos]
    grads = [None] * len(args)
    for k, p in enumerate(pos):
        if needs[p]:
            grads[p] = contract_adjoint(g, ins, out, ops, k, _optimize(kw))
    return grads


def _einsum_jvp(ts, ans, args, kw):
    ins, out, pos = einsum_spec(args)
    return _contract_tangent([ts[p] for p in pos], ins, out, [args[p] for p in pos],
                            _optimize(kw))


defrule(np.einsum, _einsum_vjp, _einsum_jvp, kind=VARARGS)


def _contraction_vjps(spec, prepare=None):
    """VJPs of a product of two arrays that is ``einsum(*spec(a, b, ...))``.

    ``prepare(a, b)`` gives the arrays the einsum sees (kron adds axes, outer
    flattens); the output adjoint is reshaped to the einsum's output, and each
    operand's adjoint back to the operand's own shape.
    """
    prepare = prepare or (lambda a, b: (a, b))

    def vjp(k):
        def adjoint(g, ans, a, b, *args, **kw):
            kw.pop("out", None)
            ins, out = spec(a, b, *args, **kw)
            ops = prepare(a, b)
            sizes = _sizes(ins, ops)
            g = np.reshape(g, tuple(sizes[c] for c in out))
            return np.reshape(contract_adjoint(g, ins, out, ops, k), shape_of((a, b)[k]))
        return adjoint
    return vjp(0), vjp(1)


def _defbilinear(fn, vjps):
    """Register a bilinear ``fn(a, b, ...)``: its JVP is ``fn(t, b) + fn(a, t)``."""
    defvjp(fn, *vjps)

    def jvp(k):
        def tangent(t, ans, a, b, *args, **kw):
            kw.pop("out", None)
            return fn(t, b, *args, **kw) if k == 0 else fn(a, t, *args, **kw)
        return tangent
    defjvp(fn, jvp(0), jvp(1))


def _summing(a, b, ia, ib):
    """Subscripts of summing axes ``ia`` of a against ``ib`` of b (tensordot's layout)."""
    na, nb = _ndim(a), _ndim(b)
    ia, ib = [i % na for i in ia], [j % nb for j in ib]
    sa, sb = _LABELS[:na], list(_LABELS[na:na + nb])
    for i, j in zip(ia, ib):
        sb[j] = sa[i]
    return [sa, "".join(sb)], "".join(c for i, c in enumerate(sa) if i not in ia) + \
        "".join(c for j, c in enumerate(sb) if j not in ib)


def _dot_spec(a, b):
    both = _ndim(a) and _ndim(b)
    return _summing(a, b, [-1] if both else [], [max(_ndim(b) - 2, 0)] if both else [])


def _inner_spec(a, b):
    both = _ndim(a) and _ndim(b)
    return _summing(a, b, [-1] if both else [], [-1] if both else [])


def _tensordot_spec(a, b, axes=2):
    if isinstance(axes, (int, np.integer)):
        return _summing(a, b, range(_ndim(a) - axes, _ndim(a)), range(axes))
    return _summing(a, b, *([x] if isinstance(x, (int, np.integer)) else x for x in axes))


def _kron_prepare(a, b):
    n = max(_ndim(a), _ndim(b))
    return tuple(np.reshape(x, (1,) * (n - _ndim(x)) + tuple(shape_of(x))) for x in (a, b))


def _kron_spec(a, b):
    n = max(_ndim(a), _ndim(b))
    sa, sb = _LABELS[:n], _LABELS[n:2 * n]
    return [sa, sb], "".join(x + y for x, y in zip(sa, sb))


def _outer_prepare(a, b):
    return np.ravel(a), np.ravel(b)


def _array(a):
    """A list or number operand as an array (tensors and arrays pass through)."""
    return a if hasattr(a, "ndim") else np.array(a)


def _matmul_like(a, b):
    return 1 <= _ndim(a) <= 2 and 1 <= _ndim(b) <= 2


# dot is matmul for vectors and matrices (BLAS, and no einsum parsing), einsum otherwise
_dot_vjps = _contraction_vjps(_dot_spec)


def _dot_vjp(k):
    matmul_vjp = (matmul_vjp_x, matmul_vjp_y)[k]

    def vjp(g, ans, a, b, out=None):
        if _matmul_like(a, b):
            return matmul_vjp(g, ans, _array(a), _array(b))
        return _dot_vjps[k](g, ans, a, b)
    return vjp


# np.linalg.tensordot, outer, matmul and vecdot (the array API's spellings) are numpy 2 only
_defbilinear(np.dot, (_dot_vjp(0), _dot_vjp(1)))
_defbilinear(np.inner, _contraction_vjps(_inner_spec))
_defbilinear(np.tensordot, _contraction_vjps(_tensordot_spec))
_defbilinear(numpy_function("linalg.tensordot"), _contraction_vjps(_tensordot_spec))
_defbilinear(np.kron, _contraction_vjps(_kron_spec, _kron_prepare))
_defbilinear(np.outer, _contraction_vjps(lambda a, b: (["i", "j"], "ij"), _outer_prepare))
_defbilinear(numpy_function("linalg.outer"),
             _contraction_vjps(lambda a, b: (["i", "j"], "ij"), _outer_prepare))
_defbilinear(numpy_function("linalg.matmul"),
             (lambda g, ans, a, b: matmul_vjp_x(g, ans, _array(a), _array(b)),
              lambda g, ans, a, b: matmul_vjp_y(g, ans, _array(a), _array(b))))

# vdot and vecdot conjugate their first argument, so they are not holomorphic in it:
# the adjoint of a in sum(conj(a) * b) is conj(g) * b, that of b is g * a.
defvjp(np.vdot, lambda g, ans, a, b: np.reshape(conj(g) * np.ravel(b), shape_of(a)),
       lambda g, ans, a, b: np.reshape(g * np.ravel(a), shape_of(b)))
defjvp(np.vdot, lambda t, ans, a, b: np.vdot(t, b), lambda t, ans, a, b: np.vdot(a, t))


def _vecdot_vjp(k):
    def vjp(g, ans, x1, x2, *args, axis=-1, **kw):
        g = np.expand_dims(g, axis)
        return conj(g) * x2 if k == 0 else g * x1
    return vjp


# (the ufunc np.vecdot has no rule: its axis= keyword does not reach ufunc rules)
_defbilinear(numpy_function("linalg.vecdot"), (_vecdot_vjp(0), _vecdot_vjp(1)))

# The gufuncs np.vecdot, np.matvec and np.vecmat (numpy >= 2.2) called without
# keywords; with axis=/axes= they are refused by name (those keywords do not reach
# ufunc rules).  vecdot and vecmat conjugate their vector argument.
vecdot, matvec, vecmat = (numpy_function(n) for n in ("vecdot", "matvec", "vecmat"))
defvjp(vecdot, _vecdot_vjp(0), _vecdot_vjp(1))
defjvp(vecdot, lambda t, ans, a, b: vecdot(t, b), lambda t, ans, a, b: vecdot(a, t))
defvjp(matvec, lambda g, ans, a, x: g[..., :, None] * conj(x)[..., None, :],
       lambda g, ans, a, x: matvec(conj(np.swapaxes(a, -1, -2)), g))
defjvp(matvec, lambda t, ans, a, x: matvec(t, x), lambda t, ans, a, x: matvec(a, t))
defvjp(vecmat, lambda g, ans, x, a: matvec(a, conj(g)),
       lambda g, ans, x, a: x[..., :, None] * g[..., None, :])
defjvp(vecmat, lambda t, ans, x, a: vecmat(t, a), lambda t, ans, x, a: vecmat(x, t))

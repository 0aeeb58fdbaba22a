"""``ForwardAccumulator``: forward-mode differentiation (Jacobian-vector products)."""
import warnings
import weakref
from contextlib import contextmanager
from types import MappingProxyType

import numpy as np

from ..core.state import outer_only, pop_recorder, push_recorder, tls
from ..core.recorder import Listener
from ..core.arrays import UNIMPLEMENTED, is_foreign, unimplemented_error
from .backward import derivative_error, raw_value, raw_output
from .breaks import object_array_refusal
from ..diagnostics.errors import NoGradientRuleError, user_facing
from .check_numerics import say_nonfinite
from .numerics import count, nonfinite_results
from ..rules.util import same_shape, shape_of
from ..core.structure import flatten, unflatten
from ..core.tensor import Tensor, TensorLike


class NoJvp:
    """Marks a tangent that could not be computed: no rule for ``name``, or the
    rule refused (``error``, a NoGradientRuleError saying why)."""
    __slots__ = ("name", "where", "error")

    def __init__(self, name, where, error=None):
        self.name, self.where, self.error = name, where, error


def call_jvp(rule, tangents, ans, args, kwargs):
    """The output tangent of one op, from its operands' tangents (None = zero)."""
    kw = kwargs or {}
    if rule.zero:
        return np.zeros_like(ans)
    if rule.jvp_all is not None:
        return rule.jvp_all(tangents, ans, args, kw)
    if rule.jvps:
        total = None
        for f, t in zip(rule.jvps, tangents):
            if t is None or f is None:
                continue
            c = f(t, ans, *args, **kw)
            total = c if total is None else total + c
        return total
    if rule.has_vjp and not rule.multi:
        return jvp_from_vjp(rule, tangents, ans, args, kw)
    return None


def jvp_from_vjp(rule, tangents, ans, args, kwargs):
    """JVP by transposing the (linear) VJP: d/du <vjp(u), t>, with a small tape."""
    from .backward import call_vjp
    from ..rules.util import unbroadcast
    from .gradient_tape import GradientTape
    u = Tensor(np.zeros(shape_of(ans), dtype=np.result_type(ans)) if not is_foreign(ans)
               else np.zeros_like(ans))
    needs = [t is not None for t in tangents]
    with GradientTape() as tape:
        tape.watch(u)
        grads = call_vjp(rule, u, ans, args, kwargs, needs)
        total = None
        for g, t in zip(grads, tangents):
            if g is None or t is None:
                continue
            g = unbroadcast(g, shape_of(t), np.result_type(t))
            term = np.sum(g * np.conj(t)) if np.result_type(t).kind == "c" else np.sum(g * t)
            total = term if total is None else total + term
    if total is None:
        return None
    out = tape.gradient(total, u)
    return out


class ForwardAccumulator(Listener):
    """Forward mode: carry tangents alongside values while operations run.

    >>> import numpy as np, nbtape as nt
    >>> x = nt.constant([1.0, 2.0])
    >>> with nt.ForwardAccumulator(x, nt.constant([1.0, 0.0])) as acc:
    ...     y = np.sum(x ** 2)
    >>> float(acc.jvp(y))
    2.0
    """

    def __init__(self, primals, tangents):
        ps, ts = flatten(primals), flatten(tangents)
        if len(ps) != len(ts):
            raise ValueError(f"ForwardAccumulator got {len(ps)} primals but {len(ts)} tangents; "
                             "give one tangent per primal, with the primal's shape.")
        self._tangents = {}     # tensor id -> tangent
        self._refs = {}         # tensor id -> weakref to the tensor (None for primals)
        self._limit = 256       # purge tangents of dead tensors past this many entries
        for p, t in zip(ps, ts):
            if not isinstance(p, TensorLike):
                raise TypeError("ForwardAccumulator primals must be nbtape tensors or "
                                f"variables, not {type(p).__name__}; wrap with nt.constant.")
            tv = t._value if isinstance(t, TensorLike) and not isinstance(t, Tensor) else t
            if np.shape(tv) != p.shape:
                raise ValueError(f"tangent shape {np.shape(tv)} does not match its primal's "
                                 f"shape {p.shape}.")
            if is_foreign(tv):
                tv = tv if tv.dtype == p.dtype else tv.astype(p.dtype)
            elif not isinstance(tv, Tensor):
                tv = np.asarray(tv, dtype=p.dtype)
            self._tangents[p._id] = tv
            self._refs[p._id] = None

    def __enter__(self):
        push_recorder(self)
        return self

    def __exit__(self, *exc):
        pop_recorder(self)
        return False

    # the Recorder protocol (nbtape/core/recorder.py)
    def record(self, rule, args, kwargs, operands, ids, outs):
        tans = self._tangents
        ts = [tans.get(i) if i is not None else None for i in ids]
        if all(t is None for t in ts) or rule.stop:
            return
        for t in ts:
            if type(t) is NoJvp:
                self._store(outs, t, rule)
                return
        if _makes_object_array(outs):
            # an object array holds Python objects: its tangent cannot be followed, so it
            # (and all computed from it) carries a refusal that acc.jvp raises, as reverse
            # mode does (nbtape.tape.breaks); the rule's tangent would be dropped, or worse
            from ..diagnostics import user_line
            where = user_line.caller()
            self._store(outs, NoJvp(rule.name, where, object_array_refusal(
                rule.name, where, "tangent")), rule)
            return
        # no JVP, and no single-output VJP to transpose (call_jvp would give None)
        if not rule.has_jvp and (rule.multi or not rule.has_vjp):
            from ..diagnostics import user_line
            self._store(outs, NoJvp(rule.name, user_line.caller()), rule)
            return
        # only recorders outside this accumulator see the tangent computations
        lazy = False
        for t in ts:
            if is_foreign(t._value if type(t) is Tensor else t):
                lazy = True
                break
        try:
            with outer_only(self), _refusing_dask_fallback(lazy):
                tensor_mode = bool(tls.stack)
                if tensor_mode:
                    tangent = call_jvp(rule, ts, outs, args, kwargs)
                else:
                    ts = [raw_value(t) for t in ts]
                    tangent = call_jvp(rule, ts, raw_output(outs), [raw_value(a) for a in args],
                                       {k: raw_value(v) for k, v in kwargs.items()} if kwargs
                                       else None)
        except FutureWarning as w:
            if UNIMPLEMENTED not in str(w):
                raise
            from ..diagnostics import user_line
            tangent = NoJvp(rule.name, user_line.caller(), unimplemented_error(rule.name, w,
                                                                               "forward"))
        except FloatingPointError as e:     # np.errstate(...="raise") inside a rule
            from ..diagnostics import user_line
            raise derivative_error(rule.name, user_line.caller(), e, "forward mode") from None
        except NoGradientRuleError as e:
            # a refusal stops the tangent, not the computation: acc.jvp raises it if asked
            from ..diagnostics import user_line
            tangent = NoJvp(rule.name, user_line.caller(), e)
        self._store(outs, tangent, rule)

    def _store(self, outs, tangent, rule):
        if tangent is None:
            return
        if rule.multi:
            if type(tangent) is NoJvp:     # no rule: every output is poisoned alike
                tangent = [tangent] * len(outs)
            for o, t in zip(outs, tangent):
                if isinstance(t, NoGradientRuleError):     # this output alone is refused
                    from ..diagnostics import user_line
                    t = NoJvp(rule.name, user_line.caller(), t)
                if isinstance(o, Tensor) and o.dtype.kind in "fcO" and t is not None:
                    self._keep(o, t if type(t) is NoJvp else _fit(t, o))
        elif isinstance(outs, Tensor) and outs.dtype.kind in "fcO":
            self._keep(outs, tangent if type(tangent) is NoJvp else _fit(tangent, outs))

    def _keep(self, tensor, tangent):
        # a tangent lives as long as its tensor (as in TensorFlow): dead ones are
        # purged in batches, so forward mode's memory follows what is alive
        tans = self._tangents
        tans[tensor._id] = tangent
        self._refs[tensor._id] = weakref.ref(tensor)
        if len(tans) > self._limit:
            refs = self._refs
            for i in [i for i, r in refs.items() if r is not None and r() is None]:
                del refs[i], tans[i]
            self._limit = max(256, 2 * len(tans))

    @property
    def tangents(self):
        """Read-only ``{tensor id: tangent}`` of what this accumulator follows (for
        pictures).

        >>> import nbtape as nt
        >>> x = nt.constant(1.0)
        >>> with nt.ForwardAccumulator(x, 1.0) as acc:
        ...     y = x * 3.0
        >>> float(acc.tangents[y._id])
        3.0
        """
        return MappingProxyType(self._tangents)

    @user_facing
    def jvp(self, primals, unconnected_gradients="none"):
        """The tangent (Jacobian-vector product) of each of ``primals``."""
        from .gradient_tape import UnconnectedGradients, unconnected_policy
        policy = unconnected_policy(unconnected_gradients)
        out = []
        for p in flatten(primals):
            if not isinstance(p, TensorLike):
                raise TypeError(
                    f"acc.jvp takes nbtape tensors computed while the accumulator was active, "
                    f"not {type(p).__name__}: a value that is not a tensor carries no tangent "
                    "(it left the accumulator, e.g. through np.asarray, float() or .numpy()). "
                    "Pass the tensor itself, and keep the computation on tensors.")
            t = self._tangents.get(p._id)
            if type(t) is NoJvp:
                from ..diagnostics.user_line import describe
                if t.error is not None:
                    raise NoGradientRuleError(
                        f"{t.error} (forward mode, at {describe(t.where)})")
                raise NoGradientRuleError(
                    f"nbtape has no forward-mode rule for {t.name} (called at "
                    f"{describe(t.where)}), and this tangent flows through it. Use a reverse-"
                    "mode GradientTape there, or a function nt.coverage() lists as forward-"
                    "differentiable.")
            if t is None:
                out.append(Tensor(np.zeros(p.shape, p.dtype) if not is_foreign(p._value)
                                  else np.zeros_like(p._value))
                           if policy is UnconnectedGradients.ZERO else None)
            else:
                out.append(t if isinstance(t, Tensor) else
                           Tensor(t if is_foreign(t) else np.asarray(t)))
        bad = nonfinite_results(out)    # one pass over the tangents
        if bad:
            nan, inf, size = count(out[bad[0]]._value)
            say_nonfinite(f"The tangent (acc.jvp) of target {bad[0]} has {nan} NaN and {inf} "
                          f"inf element(s) (of {size}); forward mode keeps no record of where "
                          "they were born: run the computation inside "
                          "`with nt.check_numerics():` (entered before the accumulator) to "
                          "stop at the op that makes one.", [out[k] for k in bad])
        return unflatten(primals, out)


def _makes_object_array(outs):
    """Does an op's result hold a numpy object array (``astype(object)``, ``np.frompyfunc``)?"""
    if type(outs) is Tensor:
        return outs.dtype.kind == "O"
    return isinstance(outs, (tuple, list)) and any(
        isinstance(o, Tensor) and o.dtype.kind == "O" for o in outs)


def _fit(t, out):
    """Give a tangent its output's shape and dtype (rules may return broadcastable values)."""
    shape = out.shape
    tshape = shape_of(t)
    if tshape != shape and not same_shape(tshape, shape):     # (Dask's unknown lengths)
        t = np.broadcast_to(t, shape)
    dt = out.dtype
    tdt = t.dtype if isinstance(t, TensorLike) or is_foreign(t) else np.result_type(t)
    if tdt != dt:
        if tdt.kind == "c" and dt.kind != "c":
            t = np.real(t)
        t = t.astype(dt) if isinstance(t, TensorLike) or is_foreign(t) \
            else np.asarray(t).astype(dt)
    return t


@contextmanager
def _refusing_dask_fallback(lazy):
    """With Dask tangents, a function Dask lacks raises (it would compute in memory)."""
    if not lazy:
        yield
        return
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*" + UNIMPLEMENTED, category=FutureWarning)
        yield

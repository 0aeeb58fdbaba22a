"""``GradientTape``: record operations, then play them back in reverse."""
import weakref
from contextlib import nullcontext

import numpy as np

from ..diagnostics import user_line
from ..diagnostics.user_line import SKIP_PREFIXES, frame_at
from ..core.state import next_id, standing_in, push_recorder, pop_recorder, suspended, tls
from ..core.arrays import FLOAT_SCALARS, SCALAR_METAS, is_foreign as _is_foreign
from .backward import backward, whole_reach
from .records import (NUMBERS, Records, free_records, operand_metas, saved_args, small_tape,
                      some_constant)
from .breaks import object_rule, off_float_path
from ..diagnostics.errors import TapeConsumedError, user_facing, warn_user
from ..core.observe import Observable, notify
from ..core.recorder import Recorder
from ..core.owned import own_outputs
from .snapshot import KEPT_AS_IS, snapshot_kwargs
from ..core.structure import flatten, unflatten
from .jacobians import tape_batch_jacobian, tape_jacobian
from .arguments import (UnconnectedGradients, checked_sources, int_source_message,
                        not_a_tensor_message, target_seeds, unconnected_policy)
from .bookkeeping import GradientRecord, Note, Watched
from .view import TapeView
from .numerics import finite, finite_all
from .none_warnings import warn_escape, warn_partial
from .check_numerics import say_where_born
from ..core.tensor import Tensor, TensorLike
from ..core.variable import Variable


# Tapes up to this many ops keep every op's output and the user's line (for pictures,
# explain and the tape player) and every adjoint of their latest gradient; ops past it
# keep only what their rules need (and their line only when they have no gradient rule,
# for the error that names it).
DISPLAY_OPS = 1000
# ... and a used non-persistent tape keeps those values and adjoints only while they
# add up to at most this many bytes (a classroom picture, not a training step).
DISPLAY_BYTES = 1 << 20
# A picture shows a summary of a big array anyway: outputs above this are not kept.
_KEEP_BYTES = DISPLAY_BYTES // 16


def _users_line(inside):
    """``(code, last instruction)`` of the user's frame that made this call, or None:
    ``user_line.caller_raw`` with its file test cached per tape (``inside``: file name ->
    inside nbtape or numpy?).  Frames 1-3 are always nbtape's (this function, record,
    and record's callers; test_backward), and a frame's first read costs most."""
    try:
        f = frame_at(4)
    except ValueError:      # nothing above nbtape's frames: no user's line
        return None
    while f is not None:
        code = f.f_code
        skip = inside.get(code.co_filename)
        if skip is None:
            skip = inside[code.co_filename] = code.co_filename.startswith(SKIP_PREFIXES)
        if not skip:
            return (code, f.f_lasti)
        f = f.f_back
    return None


class _Paused(Recorder):
    """Stands in for a tape inside ``stop_recording``: notes uses, records nothing
    (a ``Recorder`` whose ``paused`` is the tape)."""

    __slots__ = ("paused",)

    def __init__(self, tape):
        self.paused = tape

    def record(self, rule, args, kwargs, operands, ids, outs):
        tape = self.paused
        tracked = tape._tracked
        for i in ids:
            if i is not None and i in tracked:
                tape._notes.append(Note("stop_recording", i, user_line.caller(), rule.name))
                return

    def on_variable_read(self, v):
        tape = self.paused
        if tape._watch_accessed and v.trainable and v._id not in tape._variables:
            tape._notes.append(Note("stop_recording", v._id, user_line.caller(), "reading it"))

    def note_escape(self, t, how):
        pass

    def on_assign(self, var, source, how, before):
        pass


class GradientTape(TapeView, Observable, Recorder):
    """Records operations on watched values so their gradients can be computed (a
    ``Recorder``: nbtape/core/recorder.py says what each hook must do).

    >>> import numpy as np, nbtape as nt
    >>> x = nt.Variable(3.0)
    >>> with nt.GradientTape() as tape:
    ...     y = x ** 3
    >>> tape.gradient(y, x).numpy()
    array(27.)
    """

    paused = None       # (Recorder) a tape stands for itself; _Paused stands in for it

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = bool(persistent)
        self._watch_accessed = bool(watch_accessed_variables)
        self._consumed = False
        self._observers = None
        self._interrupted = False
        self._retired = None      # why the tape's records were dropped (set by retire())
        self._clear()

    def _clear(self):
        self._small = None        # whether the latest gradient found the tape small
        self._ops = Records()
        self._tracked = set()
        self._variables = {}      # id -> Variable, watched
        self._watched = {}        # id -> Watched (bookkeeping.py)
        self._leaves = {}         # id -> weakref to a watched Tensor (labels pictures)
        self._notes = []          # Notes (bookkeeping.py): escapes, assigns, pauses, dtypes
        # note index -> the serial when a value escaped: a target made later may be built
        # from it, one made earlier cannot (which escape a None gradient names)
        self._escaped_at = {}
        self._asked = ()          # the ids of the targets of the gradient being computed
        self._object_origins = {}  # id of an object array -> (op name, where) that made it
        self._shared_metas = {}   # operand metas -> the one tuple of them the ops keep
        self._inside = {}         # file name -> whether the user's line is further out
        self.last_gradient = None  # GradientRecord of the latest gradient() call
        self._numerics = None     # Birth of the latest non-finite gradient (explain says it)

    @property
    def persistent(self):
        return self._persistent

    @property
    def recording(self):
        """True while this tape is on the current thread's recording stack."""
        return self in tls.stack

    # context manager ----------------------------------------------------------------
    def __enter__(self):
        if self._consumed:
            raise TapeConsumedError(
                "This non-persistent GradientTape has already computed its gradient; "
                "make a new tape (or use GradientTape(persistent=True)).")
        if self.recording:
            raise ValueError("This tape is already recording (its `with` block is active), so "
                             "entering it again would record every operation twice. Use the "
                             "open tape, or make a new nt.GradientTape().")
        push_recorder(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        self._pop()
        if exc_type is KeyboardInterrupt:
            self._interrupted = True
        return False

    def _pop(self):
        pop_recorder(self)        # (or its stand-in, if paused)

    # watching ------------------------------------------------------------------------
    @user_facing
    def watch(self, tensor):
        """Ensure ``tensor`` (or a list/tuple/dict of them) is traced by this tape."""
        for t in flatten(tensor):
            if isinstance(t, Variable):
                self._watch_variable(t)
            elif isinstance(t, Tensor):
                if t._id not in self._tracked:
                    self._tracked.add(t._id)
                    self._watched[t._id] = Watched(next_id(), user_line.caller(), "tensor")
                    self._leaves[t._id] = weakref.ref(t)
            else:
                raise TypeError(not_a_tensor_message("watch", t))

    def _watch_variable(self, v, depth=3):
        # the user's line is looked for from ``depth`` frames up (caller_raw's own frame is 0)
        if v._id not in self._variables:
            self._variables[v._id] = v
            self._tracked.add(v._id)
            self._watched[v._id] = Watched(next_id(), user_line.caller_raw(depth), "variable")

    def watched_variables(self):
        """The variables this tape watched, in the order they were created."""
        return tuple(sorted(self._variables.values(), key=lambda v: v._id))

    # the Recorder protocol (nbtape/core/recorder.py) ------------------------------------------
    def on_variable_read(self, v):
        if self._watch_accessed and v.trainable and v._id not in self._variables:
            # from the frame above Variable._read's caller (private, so always nbtape's)
            self._watch_variable(v, 5)

    def record(self, rule, args, kwargs, operands, ids, outs):
        """Keep what a gradient through this call will need, when it is connected to
        what the tape follows; in steps: connected? (an operand followed), the outputs
        followed (float ones), what is saved (``_saved``: the arrays a rule reads, a
        changeable one snapshot), the operands' shapes, the user's line
        (``_users_line``), and the record appended.  The common cases stay inline: this
        runs once per op of the user's loop."""
        tracked = self._tracked
        if len(ids) == 2:       # x * y, unrolled
            i, j = ids
            if i in tracked:
                constant_operand = j is not None and j not in tracked
            elif j in tracked:
                constant_operand = i is not None
            else:
                return
        else:
            constant_operand = some_constant(ids, tracked)
            if constant_operand is None:
                return
        all_ids = None
        if constant_operand:
            # an operand this tape does not watch (yet) is a constant for this op,
            # even if it gets watched later (TensorFlow's semantics)
            all_ids = ids
            ids = tuple([i if i in tracked else None for i in ids])
        if not rule.multi and type(outs) is Tensor and (type(outs._value) in FLOAT_SCALARS
                                                        or outs._value.dtype.kind in "fc"):
            out_ids = (outs._id,)
        else:
            rule, out_ids = self._followed_outputs(rule, args, kwargs, ids, outs)
            if rule is None:
                return
        save = rule.save
        sel = save is not None and not rule.save_all    # keep only what the rule needs
        # an operand tensor is saved as its array (all_ids says whose), so a long tape keeps
        # no Tensor for the cyclic GC to walk (backward.saved_tensors rebuilds them)
        raw = operands is args      # x * y, np.sin(x): every argument an operand
        if raw and len(args) == 2 and (not sel or len(save) >= 2) and \
                type(args[0]) in KEPT_AS_IS and type(args[1]) in KEPT_AS_IS:
            a, b = args
            ta, tb = type(a), type(b)
            # Python numbers are kept even when unused: they label pictures, and cost nothing
            saved = ((a._value if ta is Tensor else a) if not sel or save[0] or ta in NUMBERS
                     else None,
                     (b._value if tb is Tensor else b) if not sel or save[1] or tb in NUMBERS
                     else None)
        elif raw and len(args) == 1 and type(args[0]) is Tensor and (not sel or save):
            saved = (args[0]._value if not sel or save[0] else None,)
        else:
            raw = False
            saved = saved_args(args, save if sel else None, self._ops)
        if kwargs:
            kwargs = snapshot_kwargs(kwargs, self._ops)
        metas = operand_metas(operands)
        metas = self._shared_metas.setdefault(metas, metas)     # one tuple per kind of op
        ops = self._ops
        if len(ops) < DISPLAY_OPS:
            where = _users_line(self._inside)
            out = (outs if type(outs) is not Tensor or type(outs._value) in SCALAR_METAS
                   or outs._value.nbytes <= _KEEP_BYTES else None)
        else:       # a long tape is a loop: its lines are those of its first ops
            where = user_line.caller_raw(3) if not rule.vjps and not rule.has_vjp else None
            out = None
        ans = None
        if rule.save_ans:
            ans = outs._value if type(outs) is Tensor else outs
        key = ops.keys.get(rule)
        if key is None:
            key = ops.key(rule)
        # the record: an exact tuple (which the cyclic GC stops tracking) of the fields
        # in records.FIELDS order (test_records checks this line's names against it)
        ops.append((key, saved, kwargs, ans, ids, metas, out_ids, where, out,
                    ids if all_ids is None else all_ids, raw))
        if not rule.stop:
            if len(out_ids) == 1:
                tracked.add(out_ids[0])
            else:
                tracked.update(o for o in out_ids if o is not None)

    def _followed_outputs(self, rule, args, kwargs, ids, outs):
        """``(rule, out_ids)`` for a call whose result is not one float tensor: several
        outputs (each float one followed; an object array gets a rule that refuses), or
        an integer/bool/Python result, which ends the path (``rule`` None: not recorded)."""
        if rule.multi:
            own_outputs(outs, args, kwargs)     # np.broadcast_arrays(buf, x) views buf
            out_ids = tuple(o._id if isinstance(o, Tensor) and o.dtype.kind in "fcO" else None
                            for o in outs)
            if any(isinstance(o, Tensor) and o.dtype.kind == "O" for o in outs):
                rule = object_rule(rule, ids, out_ids, self._object_origins)
            return rule, out_ids
        rule = off_float_path(rule, ids, outs, self._notes, self._object_origins)
        return (rule, (outs._id,)) if rule is not None else (None, None)

    def note_escape(self, t, how):
        if t._id in self._tracked:
            self._escaped_at[len(self._notes)] = next_id()
            self._notes.append(Note("escape", t._id, user_line.caller(), how))

    def on_assign(self, var, source, how, before):
        sid = source._leaf()._id if isinstance(source, TensorLike) else None
        if var._id in self._tracked or (sid is not None and sid in self._tracked):
            self._notes.append(Note("assign", var._id, user_line.caller(), (how, sid)))

    # recording control ---------------------------------------------------------------------
    def stop_recording(self):
        """Context manager: operations inside it are not recorded.

        >>> import nbtape as nt
        >>> x = nt.constant(3.0)
        >>> with nt.GradientTape() as t:
        ...     t.watch(x)
        ...     with t.stop_recording():
        ...         y = x * x
        >>> print(t.gradient(y, x))
        None
        """
        return _StopRecording(self)

    def reset(self):
        """Forget everything recorded so far; the tape keeps recording if it was."""
        self._clear()
        self._consumed = False
        self._retired = None

    # gradients ------------------------------------------------------------------------------
    @user_facing
    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """d(target)/d(sources), with the structure of ``sources``.

        A non-scalar target (or a list of targets) is summed, or weighted by
        ``output_gradients``.  Sources without a path give ``None`` (or zeros with
        ``unconnected_gradients="zero"``).
        """
        policy = unconnected_policy(unconnected_gradients)
        self._check_usable("gradient")
        flat_sources, int_sources = checked_sources(sources)
        targets = flatten(target)
        seeds = target_seeds(targets, output_gradients, int_sources, flat_sources,
                             self._tracked, self._notes, self._ops,
                             zeros=policy is UnconnectedGradients.ZERO)
        if self._notes:     # (an escape's warning looks for the one on the asked path)
            self._asked = [t._id for t in targets if isinstance(t, TensorLike)]
        results = self._run(seeds, flat_sources, policy)
        # one pass over the results (a NaN is said while the records last)
        if not finite_all([r._value for r in results if r is not None]):
            self._check_finite(seeds, targets, flat_sources, results, "gradient")
        if self._notes:     # something left the tape: say if it came back as a constant
            self._warn_partial(flat_sources, results, seeds)
        self._finish()
        self._tell_observers(flat_sources, results)
        return unflatten(sources, results)

    def _check_finite(self, seeds, targets, sources, results, what):
        # one pass over the results; a NaN or inf is said while the records are whole
        for r in results:
            if r is not None and not finite(r._value):
                self._numerics = say_where_born(self._ops, seeds, targets, sources, results,
                                                what)
                return

    def _check_usable(self, what):
        if self._retired:
            # its records are gone: any answer (None, zeros) would be silently wrong
            raise TapeConsumedError(
                f"This GradientTape was retired, so its records are gone and it cannot "
                f"compute a {what} (a None here would be silently wrong). Why: "
                f"{self._retired} Use the tape that replaced it, or record the computation "
                "on a new tape.")
        if self._consumed:
            raise TapeConsumedError(
                f"This GradientTape is not persistent and has already computed a gradient, "
                f"so it cannot compute another ({what}). Create it with "
                "nt.GradientTape(persistent=True) to ask it several times, or record a new "
                "tape for each gradient.")

    def _run(self, seeds, flat_sources, policy):
        ids = [s._id for s in flat_sources]
        # every adjoint is kept for pictures only on a small tape (its adjoints are
        # about the size of its outputs), so the pass never doubles a big tape's memory
        ops = self._ops
        keep_all = self._small = small_tape(ops, DISPLAY_OPS, DISPLAY_BYTES)
        reached = (whole_reach(ops, self._tracked)
                   if seeds and self._watched.keys() <= set(ids) else None)
        if not seeds:
            adj = {}
        elif not tls.stack:         # the usual case: nothing records, nothing to set aside
            adj = backward(ops, seeds, ids, False, keep_all, reached)
        else:
            with self._stepping_aside():
                adj = backward(ops, seeds, ids, bool(tls.stack), keep_all, reached)
        kept = adj if keep_all else {i: adj[i] for i in ids if i in adj}
        self.last_gradient = GradientRecord(
            list(seeds), ids, {k: (v._value if isinstance(v, Tensor) else v)
                               for k, v in kept.items()}, keep_all)
        return [self._result(s, adj.get(i), policy) for s, i in zip(flat_sources, ids)]

    def _stepping_aside(self):
        """A persistent tape asked inside its own `with` block records the pass itself (as
        TensorFlow's does), so the result can be differentiated again; else it steps aside."""
        return nullcontext() if self._persistent and self in tls.stack else suspended(self)

    def _result(self, source, g, policy):
        dtype = source.dtype
        if dtype.kind not in "fc":
            warn_user(int_source_message(source))
            return None
        if type(g) is np.ndarray:       # the common case: a plain array from the pass
            return Tensor(g if g.dtype == dtype else g.astype(dtype))
        if g is None:
            self._warn_escape(source, policy)
            if policy is UnconnectedGradients.ZERO:
                v = source._value
                return Tensor(np.zeros(source.shape, dtype=dtype) if not _is_foreign(v)
                              else np.zeros_like(v))
            return None
        if isinstance(g, Tensor):
            return g
        if not _is_foreign(g):
            g = np.asarray(g)
        if g.dtype != dtype:
            g = g.astype(dtype)
        return Tensor(g)

    def _warn_escape(self, source, policy=UnconnectedGradients.NONE):
        warn_escape(self._notes, self._escaped_at, self._asked, self._ops, source,
                    zeros=policy is UnconnectedGradients.ZERO)

    def _warn_partial(self, sources, results, seeds):
        warn_partial(self.ops, self._notes, self._ops, sources, results, seeds)

    def _finish(self):
        if not self._persistent:
            self._consumed = True
            ops = self._ops
            small = self._small
            if small is None:
                small = small_tape(ops, DISPLAY_OPS, DISPLAY_BYTES)
            free_records(ops, keep_output=small)
            self._pop()

    def _tell_observers(self, sources, results):
        if self._observers:
            self._notify("gradient", sources=sources, gradients=results)
        for s, g in zip(sources, results):
            if isinstance(s, Variable) and g is not None:
                notify(s, "gradient", gradient=g, tape=self)

    @user_facing
    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """Jacobian of ``target`` w.r.t. each source: shape ``target.shape + source.shape``;
        a list (or tuple, dict) of targets gives one such Jacobian per target."""
        policy = unconnected_policy(unconnected_gradients)
        self._check_usable("jacobian")
        with self._stepping_aside():
            result, unconnected = tape_jacobian(self, target, sources, policy)
        for s in unconnected:
            self._warn_escape(s, policy)     # None or zeros: say so when a value escaped
        self._check_finite(None, flatten(target), flatten(sources), flatten(result), "Jacobian")
        self._finish()
        return result

    @user_facing
    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Per-example Jacobians: shape ``(batch,) + target.shape[1:] + source.shape[1:]``."""
        policy = unconnected_policy(unconnected_gradients)
        self._check_usable("batch_jacobian")
        with self._stepping_aside():
            result = tape_batch_jacobian(self, target, source, policy)
        self._check_finite(None, [target], [source], [result], "batch Jacobian")
        self._finish()
        return result

    def __len__(self):
        return len(self._ops)


class _StopRecording:
    def __init__(self, tape):
        self.tape = tape

    def __enter__(self):
        self.swap = standing_in(self.tape, _Paused(self.tape))
        if not self.swap.__enter__().placed:
            raise RuntimeError("stop_recording() needs a tape that is recording: use it "
                               "inside the tape's `with` block.")
        return self

    def __exit__(self, *exc):
        return self.swap.__exit__(*exc)

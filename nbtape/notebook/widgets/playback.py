"""The tape as a sequence of frames: each forward op, then each step of the reverse pass.

This is the story the tape player tells (and its static text): frame 0 is the
whole tape; then every op the target depends on, in recording order, with the
value it produced; then the reverse pass in the engine's own order (newest op
first, as ``tape.backward_steps`` lists it), each step showing the chain-rule
product that sends the op's adjoint ("grad") to its inputs; the last frame
gives the gradients.  Values come from what the tape kept; a non-persistent
tape whose gradient was taken has freed the operands, and the steps then say
which grads flowed without the local products.
"""
import collections

import numpy as np

from ...tape.view import finite
from ...core.tensor import Tensor
from ...display.numbers import number
from ..graph.labels import where_text
from ..graph.model import TapeModel, ids_of, operand_arg
from ..graph.nonfinite import born_note, born_word, gradient_birth
from .array_stats import describe_array

Frame = collections.namedtuple("Frame", "phase op caption options")
Frame.__doc__ = ("One picture: ``phase`` is 'start', 'forward', 'backward' or 'done'; "
                 "``op`` a tape position or None; ``options`` for ``tape_graph``.")


def _plain(a):
    if type(a) is Tensor:
        return a._value
    if isinstance(a, list):
        return [x._value if type(x) is Tensor else x for x in a]
    return a


def value_str(v):
    """A value as the pictures print it: numbers for scalars, a summary for arrays.

    >>> value_str(np.float64(9.0)), value_str(np.array([1.0, 2.0])), value_str(None)
    ('9.0', '[1.0, 2.0]', '?')
    """
    if v is None:
        return "?"
    a = np.asarray(v)
    return number(a.item()) if a.size == 1 and a.ndim == 0 else describe_array(a)


class Playback:
    """The frames of one tape and target (see the module docstring).

    >>> import nbtape as nt
    >>> x = nt.Variable(3.0, name="x")
    >>> with nt.GradientTape(persistent=True) as tape:
    ...     y = x * x
    >>> pb = Playback(tape, y, names={y: "y"})
    >>> for f in pb.frames: print(f.caption)
    The tape recorded 1 op; the target y depends on 1 of them. Play it forward, then back.
    Forward 1/1 (line 2): y = np.multiply(x, x) = 9.0
    Backward 1/1: y = np.multiply(x, x) passes grad(y) = 1.0 to its input. grad(x) += grad(y) × ∂y/∂x = 1.0 × 3.0 = 3.0, twice (x is used 2 times here): grad(x) = 6.0, complete.
    Done: d(y)/d(x) = 6.0.
    """

    def __init__(self, tape, target=None, sources=None, names=None):
        self.tape = tape
        record = tape.last_gradient
        if target is None and record is None:
            raise ValueError(
                "TapePlayer needs a target to play the reverse pass towards: "
                "nt.TapePlayer(tape, loss), or call tape.gradient(loss, sources) first so "
                "that the player can use the same target and sources.")
        model = TapeModel(tape, names)
        objects = (ids_of(target, "target") if target is not None else []) + \
            (ids_of(sources, "sources") if sources is not None else [])
        model.objects = {t._id: t for t in objects}
        self.model = model
        if target is not None:
            self.target_ids = [t._id for t in ids_of(target, "target")]
        else:
            self.target_ids = list(record.target_ids)
        if sources is not None:
            self.source_ids = [t._id for t in ids_of(sources, "sources")]
        elif record is not None and set(record.target_ids) == set(self.target_ids):
            self.source_ids = list(record.source_ids)
        else:
            self.source_ids = [t for t, leaf in model.leaves.items() if leaf.kind != "constant"]
        for t in self.source_ids:
            model.add_leaf(t)
        self._labels = {}
        self.options = dict(target=target, sources=sources, names=names)
        # a NaN tape's gradient already warned once: replaying its products (0 x inf)
        # for the captions should not warn again, nor raise under np.errstate
        with np.errstate(all="ignore"):
            self.frames = self._frames()

    # names ---------------------------------------------------------------------------
    def label(self, tid):
        """What the captions call a tensor: the name its box in the picture carries.

        That is the user's name, else the function that made it (``np.add``), which
        is all an unnamed result's box shows; where two unnamed results share the
        function, the tape position tells them apart (``np.add (op 3)``, as
        ``explain`` writes it and the box's tooltip says).
        """
        if tid in self._labels:
            return self._labels[tid]
        name = self.model.name(tid)
        if name is None:
            where = self.model.producer.get(tid)
            if where is not None:
                i, m = where
                rule = self.model.ops[i].rule
                name = rule.name + (f"[{m}]" if rule.multi else "")
                if self._unnamed_makers()[rule.name] > 1:
                    name += f" (op {i})"
            else:
                leaf = self.model.leaves.get(tid)
                name = f"{leaf.kind} {leaf.index}" if leaf is not None else "a value"
        self._labels[tid] = name
        return name

    def _unnamed_makers(self):
        """How many ops of each function made a result the user did not name."""
        if not hasattr(self, "_makers"):
            model = self.model
            self._makers = collections.Counter(
                op.rule.name for op in model.ops
                if any(o is not None and model.name(o) is None for o in op.out_ids))
        return self._makers

    def _call_text(self, i):
        op = self.model.ops[i]
        args = []
        for k, tid in enumerate(op.in_ids):
            if tid is not None:
                args.append(self.label(tid))
            else:
                arg = operand_arg(op, k)
                # a constant operand the rule did not need to keep
                args.append(value_str(_plain(arg)) if arg is not None else "const")
        call = f"{op.rule.name}({', '.join(args)})"
        outs = [o for o in op.out_ids if o is not None]
        if len(outs) == 1 and not op.rule.multi and self.model.name(outs[0]) is None:
            return call          # its box shows just the function: "np.add(a, b)", no "x ="
        labels = [self.label(o) for o in outs]
        lhs = labels[0] if len(labels) == 1 else "(" + ", ".join(labels) + ")"
        return f"{lhs} = {call}"

    # frames ---------------------------------------------------------------------------
    def _frames(self):
        model = self.model
        known = [t for t in self.target_ids if model.known(t)]
        tname = ", ".join(self.label(t) for t in self.target_ids) or "target"
        shown, _ = model.upstream(known, through_stop=True) if known else (set(), set())
        forward = sorted(shown)
        n = len(model.ops)
        opts = dict(self.options)
        frames = [Frame("start", None,
                        f"The tape recorded {n} op{'s' if n != 1 else ''}; the target "
                        f"{tname} depends on {len(forward)} of them. Play it forward, "
                        "then back.", dict(opts, show_grads=False))]
        path_ops, path_t = model.path(self.source_ids, known) if known else (set(), set())
        adj, note = model.adjoints(known, self.source_ids, path_t) if path_ops else (None, None)
        born = self._births(forward, known, path_t, adj)
        for k, i in enumerate(forward):
            op = model.ops[i]
            out = [value_str(model.value(o)) for o in op.out_ids if o is not None]
            value = out[0] if len(out) == 1 else "(" + ", ".join(out) + ")"
            frames.append(Frame("forward", i, _with_birth(
                f"Forward {k + 1}/{len(forward)} ({where_text(op.where)}): "
                f"{self._call_text(i)} = {value}", born.get(("forward", i))),
                dict(opts, highlight=i, show_grads=False)))
        if not path_ops:
            frames.append(Frame("done", None,
                                f"No gradient flows: {tname} does not depend on the sources "
                                "through recorded, differentiable ops.",
                                dict(opts, show_grads=False)))
            return frames
        # the engine's own order, as the picture's backward_step counts it
        steps = self.tape.backward_steps(self.options["target"], self.options["sources"])
        walk = _Walk(self, path_ops, path_t, adj or {})
        for k, i in enumerate(steps):
            frames.append(Frame("backward", i, _with_birth(
                f"Backward {k + 1}/{len(steps)}: " + walk.step(i), born.get(("backward", i))),
                dict(opts, backward_step=k)))
        done = self._done_text(tname, adj, note)
        b = born.get("gradient")
        if b is not None:
            at = (f"backward step {steps.index(b.position) + 1}" if b.phase == "backward"
                  and b.position in steps else f"the {b.phase} pass")
            done += (f" The {born_word(b)} was born at {b.name} (op {b.position}), {at}: "
                     "tape.explain(target, source) says why and how to fix it.")
        frames.append(Frame("done", None, done, dict(opts, backward_step=len(steps))))
        return frames

    def _births(self, forward, known, path_t, adj):
        """``{(phase, op): Birth}`` for the frames at which a NaN or inf is born (and
        ``"gradient"``: the gradient's own), as the pictures of those frames mark them;
        empty for a finite tape, which pays one ``isfinite`` per value."""
        model, out = self.model, {}
        if adj is not None and not all(finite(adj[t]) for t in path_t if t in adj):
            b = gradient_birth(model, known, self.source_ids)
            if b is not None:
                out["gradient"] = out[(b.phase, b.position)] = b
        values = (model.value(o) for i in forward for o in model.ops[i].out_ids
                  if o is not None)
        if not all(finite(v) for v in values):
            b = model.tape.forward_birth()
            if b is not None:
                out.setdefault(("forward", b.position), b)
        return out

    def _done_text(self, tname, adj, note):
        if adj is None:
            return f"Done: the gradients are not shown ({note})."
        parts = []
        for s in self.source_ids:
            g = adj.get(s)
            parts.append(f"d({tname})/d({self.label(s)}) = "
                         + (value_str(g) if g is not None else "None (no path)"))
        return "Done: " + "; ".join(parts) + "."


class _Walk:
    """Replays the reverse pass op by op, keeping how much of each grad has arrived."""

    def __init__(self, pb, path_ops, path_t, adj):
        self.pb, self.model, self.adj = pb, pb.model, adj
        self.path_t = path_t
        self.uses = {t: sum(1 for j, _ in self.model.consumers.get(t, ()) if j in path_ops)
                     for t in path_t}
        self.arrived = collections.Counter()

    def step(self, i):
        model, pb = self.model, self.pb
        op = model.ops[i]
        outs = [o for o in op.out_ids if o is not None]
        g = [self.adj.get(o) for o in outs]
        if any(x is None for x in g):
            # a used non-persistent tape keeps only the sources' grads
            gtext = "its grad" if len(outs) == 1 else "their grads"
        else:
            gtext = ", ".join(f"grad({pb.label(o)}) = {value_str(x)}" for o, x in zip(outs, g))
        inputs = [(k, t) for k, t in enumerate(op.in_ids) if t is not None and t in self.path_t]
        head = (f"{pb._call_text(i)} passes {gtext} to its "
                f"input{'s' if len({t for _, t in inputs}) != 1 else ''}.")
        contrib, why = self._contributions(i, g)
        partials, _ = model.partials(i) if not op.rule.multi else ([None] * len(op.in_ids),
                                                                    "multi")
        texts, seen = [], collections.Counter(t for _, t in inputs)
        done = set()
        for k, t in inputs:
            if t in done:
                continue
            done.add(t)
            reps = seen[t]
            self.arrived[t] += reps
            texts.append(self._share(i, k, t, reps, outs, g, contrib, partials))
        tail = f" ({why})" if why else ""
        return head + " " + "; ".join(texts) + "." + tail

    def _share(self, i, k, t, reps, outs, g, contrib, partials):
        """The sentence for operand ``k`` (tensor ``t``) of op ``i``."""
        pb, op = self.pb, self.model.ops[i]
        name = pb.label(t)
        out = pb.label(outs[0]) if len(outs) == 1 else op.rule.name
        c = contrib[k] if contrib is not None else None
        p = partials[k] if partials is not None else None
        if c is None:
            text = f"grad({name}) gets its share"
        elif p is not None and np.size(p) == 1 and np.size(c) == 1 and len(g) == 1:
            text = (f"grad({name}) += grad({out}) × ∂{out}/∂{name} = "
                    f"{value_str(g[0])} × {value_str(np.reshape(p, ()))} = "
                    f"{value_str(np.reshape(c, ()))}")
        else:
            text = (f"grad({name}) += the VJP of {op.rule.name} applied to grad({out}) "
                    f"= {value_str(c)}")
        if reps > 1:
            text += f", {_times(reps)} ({name} is used {reps} times here)"
        if self.arrived[t] >= self.uses.get(t, 0):
            if t in self.adj:
                return text + f": grad({name}) = {value_str(self.adj[t])}, complete"
            return text + f"; grad({name}) is complete"
        return text + f" ({self.arrived[t]} of {self.uses.get(t, 0)} uses done)"

    def _contributions(self, i, g):
        """Each operand's share of the adjoint, exactly as the engine computes it."""
        op = self.model.ops[i]
        if op.args is None:
            return None, ("the tape freed the values needed for each product in its "
                          "gradient() call; record with GradientTape(persistent=True) to see "
                          "them")
        if any(x is None for x in g) or op.rule.multi:
            return None, ""
        if not op.rule.has_vjp:
            return None, f"{op.rule.name} has no gradient rule, so the engine stops here"
        needs = [t is not None and t in self.path_t for t in op.in_ids]
        try:
            grads = self.model.tape.step_back(op, np.asarray(g[0]), needs)
        except Exception as exc:          # the caption says what went wrong, the player goes on
            return None, f"its VJP failed: {type(exc).__name__}: {str(exc)[:120]}"
        return [np.asarray(gi) if gi is not None else None for gi in grads], ""


def _with_birth(caption, birth):
    """``caption``, and that the NaN is born here when ``birth`` is at this frame's op."""
    if birth is None:
        return caption
    return caption.rstrip(".") + f" — {born_note(birth)}."


def _times(n):
    return {2: "twice", 3: "three times"}.get(n, f"{n} times")

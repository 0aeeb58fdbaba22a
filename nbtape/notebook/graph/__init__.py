"""``tape.graph()``: Graphviz pictures of a tape, its gradients and the chain rule.

Node names come from tape positions, so the same cell draws the same DOT and
SVG on every run: ``op{i}`` is the op at tape position ``i`` (ports ``o{m}`` for
the outputs of multi-output ops), ``op{i}c{k}`` its constant operand ``k``,
``leaf{j}`` the ``j``-th tensor to enter the tape without being computed on it
(variables, watched tensors, constants; then unused sources), ``ext{i}_{m}`` a
result computed outside the part of the tape drawn, ``skip{g}`` the ``g``-th box
of ops folded away, ``note{n}`` a note (a value that left the tape, an
assignment, an op run inside ``stop_recording``).

A picture is made in five stages, one module each: ``model`` reads the tape as a
graph, ``collapse`` chooses what fits in ``max_nodes``, ``labels`` words values
and lines, ``parts`` lays out nodes, edges and notes, and ``draw`` writes the
Graphviz source; this module runs them.  ``nonfinite`` finds the NaN and inf that
``parts`` marks, and where the first was born. Importing it registers ``tape_graph``
with ``nbtape.display.pictures``, which is how ``tape.graph()`` reaches it.
"""
import operator

from ...display import palette, pictures
from . import labels as L
from .collapse import plan
from .draw import PATH, TANGENT, Drawing, TapeDigraph
from .model import TapeModel, ids_of
from .parts import NOTE_LIMIT, Context, draw_everything
from ..render import inline_svg, render  # noqa: F401  (nt.render lives here)

VIEWS = ("tape", "chain", "forward")
RANKDIRS = ("LR", "RL", "TB", "BT")
FALLBACK_NODES = 30
OPTIONS = ("target", "sources", "names", "rankdir", "show_values", "show_grads", "max_nodes",
           "view", "accumulator", "highlight", "backward_step", "scale")

__all__ = ["tape_graph", "render", "inline_svg", "TapeDigraph"]


def tape_graph(tape, target=None, sources=None, names=None, rankdir=None, show_values=True,
               show_grads=True, max_nodes=60, view="tape", accumulator=None, highlight=None,
               backward_step=None, scale=1.0, **unknown):
    """A ``graphviz.Digraph`` of what ``tape`` recorded (``tape.graph(...)`` calls this).

    Leaves (variables by name, watched tensors, constants) and ops (the numpy
    function's name, ``y = ...`` when ``names`` names the result) with their
    values.  After ``tape.gradient(target, sources)`` (or with ``target`` and
    ``sources`` given on a tape that still holds its values) every node on a
    path from a source to the target shows its adjoint ``grad`` = d(target)/d(node),
    the path is drawn in orange-red (vermillion) and the rest in grey; ``stop_gradient``
    ops are dashed, ``custom_gradient`` ops filled purple with a double border, ops
    without a gradient rule dashed and filled orange, and notes mark values that left the
    tape, assignments and ops run inside ``stop_recording``.  A value or grad holding a
    NaN or inf has a thick reddish-purple border and counts them; the op where the first
    was born (the reverse pass's, once ``backward_step`` reaches it, or the forward
    pass's) has a double one and says what happened there.  Colours come from the
    colour-blind-safe palette of ``nbtape.display.palette`` (reverse mode vermillion,
    forward mode blue, in every picture); the legend under the picture shows a swatch
    for every fill and colour it uses, and the labels say in words what colours say.

    Options:

    * ``target``, ``sources``: draw only what the target depends on (or, with
      sources alone, what depends on them); default: those of the latest
      ``gradient`` call, else everything (and, with a target but no sources,
      every watched value is a source).
    * ``names``: ``{tensor: "y", ...}`` labels results with the user's names.
    * ``rankdir``: "LR", "TB", "RL" or "BT"; default: left to right ("LR"), or top to
      bottom ("TB") when left to right would be wider than a 1280-pixel screen shows
      and top to bottom is narrower.  ``show_values``, ``show_grads``.
    * ``scale``: every size times this (text, spacing, lines), from 0.5 to 4.  At 1
      the smallest text is 14.7 px and values are 16 px in the browser: readable from
      the back of a lecture hall on a 1280-pixel projector; 1.5 for a larger room.
    * ``max_nodes``: past it, the picture keeps the first and last repetition
      of a repeated step, then the ops nearest the target, folds the rest into
      boxes that say what they hold, and says so under the picture.
    * ``view="chain"``: each edge into a scalar result is labelled with its local
      partial derivative, so multiplying along a path and summing over paths
      gives the grads (reverse accumulation).  ``view="forward"`` with
      ``accumulator=acc`` (an ``nt.ForwardAccumulator`` active while the tape
      recorded) shows each node's tangent instead (forward accumulation).
    * ``highlight=i``: mark the op at tape position ``i`` (``op{i}``).
    * ``backward_step=k``: the reverse pass after ``k`` steps.  The pass visits
      the ops on a source-to-target path newest first, in the order
      ``tape.backward_steps(target, sources)`` lists their tape positions.
      Step ``k`` processes ``steps[k]``: that op is highlighted, the ops
      ``steps[:k]`` are done and their input edges drawn solid (an adjoint has
      flowed along them), the rest of the path dashed.  A tensor shows its grad
      once every op on the path that uses it is done (the target's, its seed 1,
      from step 0); one with some uses done shows "accumulating (j of n uses
      done)"; the others "grad: pending".  ``k = len(steps)`` is the finished
      pass; ``k`` outside ``0..len(steps)`` is a ValueError.

    >>> import nbtape as nt
    >>> x = nt.Variable(3.0, name="x")
    >>> with nt.GradientTape() as tape:
    ...     y = x * x
    ...     z = y + 1.0
    >>> dz = tape.gradient(z, x)
    >>> g = tape.graph(names={y: "y", z: "z"})
    >>> g.nbtape_nodes["op0"].lines
    ['y = np.multiply', '9.0', 'dz/dy = 1.0']
    >>> sorted(g.nbtape_nodes["leaf0"].tags), g.nbtape_nodes["leaf0"].lines[-1]
    (['path', 'source'], 'dz/dx = 6.0')
    """
    if unknown:
        raise TypeError(f"tape.graph() got unknown option(s) {', '.join(sorted(unknown))}; "
                        f"its options are {', '.join(OPTIONS)}.")
    return _build(tape, dict(target=target, sources=sources, names=names, rankdir=rankdir,
                             show_values=show_values, show_grads=show_grads,
                             max_nodes=max_nodes, view=view, accumulator=accumulator,
                             highlight=highlight, backward_step=backward_step,
                             scale=scale))


_NEED_TARGET = ("this needs a target: call tape.gradient(target, sources) first, or pass "
                "target= (and sources=) to say which gradient to follow.")


def _check(o, tape):
    if o["view"] not in VIEWS:
        raise ValueError(f"view must be one of {', '.join(map(repr, VIEWS))}, not {o['view']!r}.")
    o["scale"] = palette.check_scale(o["scale"])
    if o["rankdir"] is not None and o["rankdir"] not in RANKDIRS:
        raise ValueError(f"rankdir must be one of {', '.join(RANKDIRS)} (or None: left to "
                         f"right unless that is too wide), not {o['rankdir']!r}.")
    if _int(o["max_nodes"]) is None or o["max_nodes"] < 5:
        raise ValueError(f"max_nodes must be an int of at least 5, not {o['max_nodes']!r}.")
    o["max_nodes"] = _int(o["max_nodes"])
    if o["view"] == "forward" and o["accumulator"] is None:
        raise ValueError("view='forward' needs accumulator=acc: the nt.ForwardAccumulator "
                         "that was active (together with this tape) while the values were "
                         "computed, so the picture can show its tangents.")
    h = o["highlight"]
    if h is not None:
        if _int(h) is None or not 0 <= h < len(tape):
            raise ValueError(f"highlight is a tape position, an int from 0 to "
                             f"{len(tape) - 1}; got {h!r}.")
        o["highlight"] = _int(h)
    if o["backward_step"] is not None:
        if _int(o["backward_step"]) is None:
            raise ValueError(f"backward_step must be an int, not {o['backward_step']!r}.")
        o["backward_step"] = _int(o["backward_step"])


def _int(value):
    """``value`` as a Python int when it is an integer (numpy ints too), else None."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def _targets_and_sources(model, tape, target, sources):
    record = tape.last_gradient
    objects = []
    if target is not None:
        objects += ids_of(target, "target")
        target_ids = [t._id for t in ids_of(target, "target")]
    else:
        target_ids = list(record.target_ids) if record is not None else []
    if sources is not None:
        objects += ids_of(sources, "sources")
        source_ids = [t._id for t in ids_of(sources, "sources")]
    elif record is not None and set(record.target_ids) == set(target_ids):
        source_ids = list(record.source_ids)
    else:
        source_ids = [t for t, leaf in model.leaves.items() if leaf.kind != "constant"]
    return target_ids, source_ids, objects


def _build(tape, o, caption_extra=()):
    _check(o, tape)
    model = TapeModel(tape, o["names"])
    target_ids, source_ids, objects = _targets_and_sources(model, tape, o["target"],
                                                           o["sources"])
    model.objects = {t._id: t for t in objects}
    view, acc = o["view"], o["accumulator"]
    caption = []
    if view == "forward":
        source_ids = [t for t in acc.tangents if t in model.leaves]
    for t in source_ids:
        model.add_leaf(t)
    missing = [t for t in target_ids if not model.known(t)]
    target_ids = [t for t in target_ids if model.known(t)]
    if missing:
        caption.append("The target was not computed on this tape from anything it watched, "
                       "so no gradient flows to it.")
    # What to draw: what the target depends on, or what depends on the sources.
    if target_ids:
        shown, need = model.upstream(target_ids, through_stop=True)
        shown |= _dangling_stops(model, need)
    elif o["sources"] is not None:
        shown, _ = model.downstream(source_ids, through_stop=True)
    else:
        shown = set(range(len(model.ops)))
    if o["highlight"] is not None:
        shown.add(o["highlight"])
    # The gradient (or tangent) path, and what is known on it.
    if view == "forward":
        path_ops, path_t = model.downstream(source_ids)
        if target_ids:
            up_ops, up_t = model.upstream(target_ids)
            path_ops, path_t = path_ops & up_ops, path_t & up_t
        active = bool(source_ids)
    else:
        active = bool(target_ids) and bool(source_ids)
        path_ops, path_t = model.path(source_ids, target_ids) if active else (set(), set())
    adj = None
    if active and view != "forward" and o["show_grads"]:
        adj, note = model.adjoints(target_ids, source_ids, path_t)
        if note:
            caption.append(note[0].upper() + note[1:] + ".")
    step = _step_state(model, o["backward_step"], path_ops, path_t, target_ids, active)
    if step is not None:
        caption.append(step["caption"])
    forced = {i for i in (o["highlight"], step and step["current"]) if i is not None}
    seeds = {model.producer[t][0] for t in target_ids if t in model.producer}
    few = [t for t, leaf in model.leaves.items() if leaf.kind in ("variable", "watched")]
    forced_leaves = set(source_ids) | (set(few) if len(few) <= o["max_nodes"] // 3 else set())
    notes = _notes(tape, model)
    the_plan = plan(model, shown, o["max_nodes"], forced | seeds, seeds, forced_leaves,
                    reserve=min(len(notes), NOTE_LIMIT))
    ctx = Context(model, o, the_plan, path_ops, path_t, adj, step, target_ids, source_ids,
                  active)
    drawing = Drawing(o["rankdir"], TANGENT if view == "forward" else PATH, o["scale"])
    draw_everything(ctx, drawing, notes, caption)
    if the_plan.collapsed:
        n_groups = len(the_plan.groups)
        left = the_plan.shown_total - len(the_plan.kept)
        caption.append(
            f"Showing {len(the_plan.kept):,} of {the_plan.shown_total:,} ops "
            f"(max_nodes={o['max_nodes']}); " + (
                f"the other {left:,} are" if left != 1 else "the other one is")
            + f" folded into {n_groups} box{'es' if n_groups != 1 else ''}. Pass a larger "
            "max_nodes, or a target and sources, to see more.")
    if not model.ops:
        caption.append("This tape recorded no operations: nothing it watched was used "
                       "inside its `with` block.")
    caption.extend(caption_extra)
    drawing.caption(caption)
    g = drawing.graph
    # the DOT's graph name is the SVG's <title>: escaped as a label's text is, so a
    # user's name can put no markup there either
    g.nbtape_title = L.tooltip(_title(ctx, step))
    g.name = L.esc(g.nbtape_title, 200)
    if len(g.nbtape_nodes) > FALLBACK_NODES:
        smaller = dict(o, max_nodes=FALLBACK_NODES)
        g.nbtape_fallback = lambda: _build(tape, smaller, (
            "Drawn collapsed: the full picture took too long to lay out.",))
    return g


def _title(ctx, step):
    """What the picture shows, in one line: its SVG's title (what a screen reader says,
    and a browser shows on hover) and the DOT graph's name.

    >>> import nbtape as nt
    >>> x = nt.Variable(3.0, name="x")
    >>> with nt.GradientTape() as tape:
    ...     y = x * x
    >>> _ = tape.gradient(y, x)
    >>> tape.graph(names={y: "y"}).nbtape_title
    'tape of 1 operation: the gradient of y with respect to x'
    """
    model, o = ctx.model, ctx.o
    n = len(model.ops)
    what = f"tape of {n} operation{'' if n == 1 else 's'}"
    if o["view"] == "chain":
        what = "chain rule on the " + what
    if not ctx.active:
        return what
    if o["view"] == "forward":
        src = _names_of(model, ctx.sources) or "the accumulator's primals"
        return f"{what}: forward mode, tangents carried from {src}"
    src = _names_of(model, ctx.sources) or "its sources"
    tgt = L.one_line(ctx.target_name) if ctx.target_name else "the target"
    text = f"{what}: the gradient of {tgt} with respect to {src}"
    if step is not None:
        done = len(step["done"])
        text += (f", reverse pass after {done} step{'' if done == 1 else 's'}"
                 if step["current"] is not None else ", reverse pass complete")
    return text


def _names_of(model, ids, limit=4):
    names = [L.one_line(n) for n in (model.name(t) for t in ids) if n]
    return ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")


def _step_state(model, k, path_ops, path_t, target_ids, active):
    if k is None:
        return None
    if not active:
        raise ValueError("backward_step " + _NEED_TARGET)
    steps = sorted(path_ops, reverse=True)
    if not 0 <= k <= len(steps):
        raise ValueError(f"backward_step must be an int from 0 to {len(steps)} (the reverse "
                         f"pass of this picture has {len(steps)} steps); got {k!r}.")
    done = set(steps[:k])
    uses = {}
    for t in path_t:
        users = {j for j, _ in model.consumers.get(t, ()) if j in path_ops}
        uses[t] = (sum(1 for j in users if j in done), len(users))
    current = steps[k] if k < len(steps) else None
    if current is None:
        text = f"Reverse pass complete ({len(steps)} steps)."
    else:
        op = model.ops[current]
        # named as its highlighted box is titled; k counts the steps done, so the op at
        # work is step k + 1 (backward_step=3 draws step 4 before it passes its grad)
        out = op.out_ids[0] if not op.rule.multi else None
        name = model.name(out) if out is not None else None
        box = f"{name} = {op.rule.name}" if name else op.rule.name
        text = (f"Reverse pass, {k} of {len(steps)} steps done: next, step {k + 1}, "
                f"{box} ({L.where_text(op.where)}) passes its grad to its inputs.")
    return {"done": done, "uses": uses, "current": current, "caption": text}


def _dangling_stops(model, need):
    """``stop_gradient`` ops on what the target needs whose result the tape lost track of.

    Their results are constants for the ops that use them, and when those ops did
    not save them the picture cannot tell where they went; it still shows the cut.
    """
    out = set()
    for i, op in enumerate(model.ops):
        if op.rule.stop and any(t in need for t in op.in_ids if t is not None):
            if not any(o in model.consumers or o in model.link_users
                       for o in op.out_ids if o is not None):
                out.add(i)
    return out


def _notes(tape, model):
    seen, out = set(), []
    for kind, tid, where, detail in tape.notes:
        key = (kind, tid, where, repr(detail))
        if key in seen or not model.known(tid):
            continue
        seen.add(key)
        out.append((kind, tid, where, detail))
    return out


# The engine draws no pictures itself: this is where tape.graph() and the tape's HTML
# card find them (nbtape/display/pictures.py says how a plain `import nbtape` gets here).
pictures.register(tape_graph, inline_svg)

"""The nodes and edges of a tape picture, given what to draw and what is known.

``graph.tape_graph`` decides (which ops, which path, which adjoints, which step
of the reverse pass); this module turns those decisions into labelled, styled
nodes and edges, in tape order so the DOT is the same on every run.
"""
import numpy as np

from ...core.rule import POSITIONAL
from . import labels as L
from .collapse import group_summary
from .draw import GREY, LEAF_STYLE, NAN, OP_STYLE, OTHER_STYLE
from .model import operand_arg
from .nonfinite import born_row, born_short, born_word, nonfinite_count, picture_birth

NOTE_LIMIT = 6

_PROBLEMS = {
    "freed": "Some local derivatives are not shown: the tape freed its saved values in "
             "gradient(); record with GradientTape(persistent=True) to see them.",
    "nonscalar": "Edges into non-scalar results are left unlabelled: their local derivatives "
                 "are Jacobians, not single numbers.",
    "norule": "Ops without a gradient rule have no local derivatives.",
}
_PROBLEMS["multi"] = _PROBLEMS["nonscalar"]
_LEGEND = {
    "chain": "Chain rule, reverse accumulation: each edge shows the local derivative "
             "d(result)/d(input); a node's grad is the sum, over its outgoing edges, of "
             "(edge label x grad where the edge ends).",
    "forward": "Chain rule, forward accumulation: each edge shows the local derivative "
               "d(result)/d(input); a result's tangent is the sum, over its incoming edges, "
               "of (edge label x tangent where the edge starts).",
}
_LEAF_TITLE = {"variable": "Variable", "watched": "watched tensor", "constant": "constant"}


class Context:
    """Everything decided about one picture, and the per-tensor rows it implies."""

    def __init__(self, model, o, the_plan, path_ops, path_t, adj, step, target_ids,
                 source_ids, active):
        self.model, self.o, self.plan = model, o, the_plan
        self.path_ops, self.path_t, self.adj, self.step = path_ops, path_t, adj, step
        self.targets, self.sources, self.active = set(target_ids), list(source_ids), active
        self.kept = set(the_plan.kept)
        self.target_name = next((model.name(t) for t in target_ids if model.name(t)), None)
        self.problems = set()
        self.outside = {}
        self.drawn_leaves = set(the_plan.leaves) | set(source_ids)
        self.birth = None           # where the first NaN or inf was born, when marked
        self.nonfinite = False      # whether a box says it holds a NaN or inf
        self.born_drawn = False     # whether the op where it was born has a box

    def ref(self, tid, create=True):
        """The node (with port) an edge from tensor ``tid`` starts at, or None."""
        model = self.model
        if tid in model.leaves:
            return f"leaf{model.leaves[tid].index}" if tid in self.drawn_leaves else None
        i, m = model.producer[tid]
        if i in self.kept:
            return f"op{i}:o{m}" if model.ops[i].rule.multi else f"op{i}"
        group = self.plan.group_of.get(i)
        if group is not None:
            return group.name
        if not create and tid not in self.outside:
            return None
        return self.outside.setdefault(tid, f"ext{i}_{m}")

    def link(self, i, k):
        """The node an untracked operand computed on the tape comes from, or None."""
        tid = self.model.links.get((i, k))
        return self.ref(tid) if tid is not None else None

    def state(self, on_path):
        if not self.active:
            return []
        return ["path"] if on_path else ["grey"]

    def grad_label(self, tid):
        name = self.model.name(tid)
        if self.target_name and name:
            return f"d{L.one_line(self.target_name)}/d{L.one_line(name)}"
        return "grad"

    def rows(self, tid, prefix=""):
        """Value, grad and tangent rows for tensor ``tid``."""
        model, o = self.model, self.o
        rows = []
        if o["show_values"]:
            v = model.value(tid)
            m = model.meta(tid) if v is None else None
            text = L.value_text(v) if v is not None else L.meta_text(m) if m else None
            if text is not None or prefix:
                rows.append(("value", prefix + (text or "")))
            bad = nonfinite_count(v) if v is not None else None
            if bad:
                rows.append(("nonfinite", f"{prefix}value has {bad}"))
        if not (o["show_grads"] and self.active):
            return rows
        if o["view"] == "forward":
            t = model.tangent(o["accumulator"], tid)
            if isinstance(t, str):
                rows.append(("pending", "tangent: no forward rule"))
            elif t is not None:
                rows.append(("tangent", f"tangent = {L.value_text(t, shape=False)}"))
                bad = nonfinite_count(t)
                if bad:
                    rows.append(("nonfinite", f"tangent has {bad}"))
            return rows
        if tid not in self.path_t:
            return rows
        label = self.grad_label(tid)
        if self.step is not None:
            done, total = self.step["uses"].get(tid, (0, 0))
            if done < total:
                rows.append(("pending", f"{label}: accumulating ({done} of {total} uses done)"
                             if done else f"{label}: pending"))
                return rows
        if self.adj is not None and tid in self.adj:
            seed = " (seed)" if tid in self.targets and not self.step_uses(tid) else ""
            rows.append(("grad", f"{label} = {L.value_text(self.adj[tid], shape=False)}{seed}"))
            bad = nonfinite_count(self.adj[tid])
            if bad:
                rows.append(("nonfinite", f"{label} has {bad}"))
        return rows

    def mark(self, rows, tags, ops=()):
        """Tag a box whose rows count a NaN or inf, and the box of the op (or folded
        ``ops``) where the first one was born, which also gets a line saying so."""
        if any(role == "nonfinite" for role, _ in rows):
            tags.append("nonfinite")
            self.nonfinite = True
        b = self.birth
        if b is not None and b.position in ops:
            # appended: a multi-output op's ports point at the rows above
            rows.append(("born", born_row(b)))
            tags.append("born")
            self.born_drawn = True

    def step_uses(self, tid):
        return [j for j, _ in self.model.consumers.get(tid, ()) if j in self.path_ops]


def draw_everything(ctx, d, notes, caption):
    """Leaves, ops (with their constants), folded groups, edges, notes, caption.

    ``tape_graph`` decides and calls this; what it draws is on the graph:

    >>> import nbtape as nt
    >>> x = nt.Variable(2.0, name="x")
    >>> with nt.GradientTape() as tape:
    ...     y = x * 3.0
    >>> g = tape.graph()
    >>> [(name, info.kind) for name, info in g.nbtape_nodes.items()]
    [('leaf0', 'leaf'), ('op0', 'op'), ('op0c1', 'const')]
    """
    model = ctx.model
    ctx.birth = picture_birth(ctx)
    for tid, leaf in model.leaves.items():
        if tid in ctx.drawn_leaves:
            _leaf(ctx, d, tid, leaf)
    for i in ctx.plan.kept:
        _op(ctx, d, i)
    for g in ctx.plan.groups:
        on = any(i in ctx.path_ops for i in g.ops)
        rows, tags = [("info", line) for line in group_summary(model, g)], ctx.state(on)
        ctx.mark(rows, tags, g.ops)
        d.node(g.name, "group", rows, [OTHER_STYLE["group"]], tags)
    for i in ctx.plan.kept:
        _op_edges(ctx, d, i)
    for g in ctx.plan.groups:
        _group_edges(ctx, d, g)
    for tid, name in list(ctx.outside.items()):
        i, _ = model.producer[tid]
        title = model.name(tid) or f"result of op {i}"
        rows, tags = [("title", title)] + ctx.rows(tid), ctx.state(tid in ctx.path_t)
        ctx.mark(rows, tags)
        d.node(name, "outside", rows, [LEAF_STYLE["outside"]], tags)
    _notes(ctx, d, notes, caption)
    caption[:0] = _legend(ctx, d)
    caption.extend(dict.fromkeys(_PROBLEMS[p] for p in sorted(ctx.problems) if p in _PROBLEMS))


def _leaf(ctx, d, tid, leaf):
    model = ctx.model
    title = model.name(tid) or ("source" if tid in model.unused else _LEAF_TITLE[leaf.kind])
    rows = [("title", title)] + ctx.rows(tid)
    if tid not in model.consumers:
        rows.append(("info", "not used on this tape"))
    tags = ctx.state(tid in ctx.path_t)
    if ctx.active and tid in ctx.sources:
        tags.append("source")
    if ctx.active and tid in ctx.targets:
        tags.append("target")
    ctx.mark(rows, tags)
    watched = model.tape.watched.get(tid)
    tip = leaf.kind + (f", watched at {L.where_text(watched.where)}" if watched else "")
    d.node(f"leaf{leaf.index}", "leaf", rows, [LEAF_STYLE[leaf.kind]], tags, tip=tip)


def _op_kind(rule):
    if rule.stop:
        return "stop"
    if rule.name.startswith("custom_gradient"):
        return "custom"
    if not rule.has_vjp:
        return "norule"
    return "op"


_KIND_NOTE = {"stop": "no gradient flows back", "custom": "your gradient function",
              "norule": "no gradient rule"}


def _op(ctx, d, i):
    model = ctx.model
    op = model.ops[i]
    kind = _op_kind(op.rule)
    outs = list(op.out_ids)
    single = not op.rule.multi
    name = model.name(outs[0]) if single and outs[0] is not None else None
    rows = [("title", f"{name} = {op.rule.name}" if name else op.rule.name)]
    params = _params(op)
    if params:
        rows.append(("info", params))
    if kind in _KIND_NOTE:
        rows.append(("info", _KIND_NOTE[kind]))
    ports = {}
    for m, tid in enumerate(outs):
        if tid is None:
            continue
        if single:
            rows.extend(ctx.rows(tid))
        else:
            label = model.name(tid)
            ports[len(rows)] = f"o{m}"
            tid_rows = ctx.rows(tid, prefix=f"[{m}] " + (f"{label}: " if label else ""))
            if not tid_rows:
                tid_rows = [("value", f"[{m}]")]
            rows.extend(tid_rows)
    tags = ctx.state(i in ctx.path_ops)
    if any(t in ctx.targets for t in outs):
        tags.append("target")
    if ctx.step is not None and i in ctx.step["done"]:
        tags.append("done")
    if i == ctx.o["highlight"] or (ctx.step is not None and i == ctx.step["current"]):
        tags.append("highlight")
    ctx.mark(rows, tags, (i,))
    tip = f"op {i}: {op.rule.name} at {L.where_text(op.where)}"
    if "born" in tags:
        tip += f" ({rows[-1][1]})"
    d.node(f"op{i}", "op", rows, [OP_STYLE[kind]], tags, ports=ports, tip=tip)
    consts = []
    for k, tid in enumerate(op.in_ids):
        if tid is None and ctx.link(i, k) is None:
            value = operand_arg(op, k)
            text = _const_text(value) if value is not None else _const_meta(op, k)
            # a constant tensor's id (the tape may have saved only its array)
            cid = value._id if hasattr(value, "_id") else op.saved_id(k)
            name = model.name(cid) if cid is not None else None
            consts.append(f"op{i}c{k}")
            d.node(consts[-1], "const", [("value", f"{name} = {text}" if name else text)],
                   [OTHER_STYLE["const"]], ctx.state(False))
    d.same_rank([f"op{i}"] + consts)


def _const_meta(op, k):
    """A constant whose value the tape no longer holds (too large to keep once
    ``gradient`` freed it): "constant", and its shape and dtype where known."""
    metas = op.metas
    meta = metas[k] if metas is not None and k < len(metas) else None
    return "constant" if meta is None else "constant\n" + L.meta_text(meta)


def _const_text(value):
    if isinstance(value, (int, float, complex, np.number, np.bool_)):
        return L.number(value)
    try:
        return L.value_text(np.asarray(value))
    except Exception:   # an operand numpy cannot make an array of: show its type
        return type(value).__name__


def _params(op):
    """Non-operand arguments (axis=, an index, ...) in a few characters."""
    args, rule = op.args, op.rule
    parts = []
    if args is not None and rule.kind is POSITIONAL and not rule.zero:
        extra = args[rule.nargs:]
        if rule.name == "getitem" and extra and extra[0] is not None:
            parts.append(f"[{L.short(extra[0])}]")
        else:
            parts.extend(L.short(a) for a in extra if a is not None)
    for key, value in sorted((op.kwargs or {}).items()):
        if value is not None:
            parts.append(f"{key}={L.short(value)}")
    return L.clean(", ".join(parts), 40)


def _edge_label(ctx, partials, k):
    if partials is None:
        return None
    p = partials[k]
    if p is None:
        return None
    arr = np.asarray(p)
    if arr.size == 1:
        return L.number(arr.reshape(()).item())
    if arr.size <= 6:
        return L.value_text(arr).split("\n")[0]
    ctx.problems.add("nonscalar")
    return None


def _op_edges(ctx, d, i):
    op = ctx.model.ops[i]
    partials = None
    if ctx.o["view"] in ("chain", "forward"):
        partials, problem = ctx.model.partials(i)
        if problem and problem != "stop":
            ctx.problems.add(problem)
    step = ctx.step
    for k, tid in enumerate(op.in_ids):
        if tid is None:
            tail = ctx.link(i, k)
            if tail is None:
                d.edge(f"op{i}c{k}", f"op{i}", tags=ctx.state(False))
            else:   # computed on the tape, but a constant for this op: no gradient
                d.edge(tail, f"op{i}", tags=ctx.state(False) + ["const"])
            continue
        tail = ctx.ref(tid)
        if tail is None:
            continue
        on = tid in ctx.path_t and i in ctx.path_ops
        tags = ctx.state(on)
        if on and step is not None and i not in step["done"]:
            tags.append("pending")
        if op.rule.stop:
            tags.append("stop")
        d.edge(tail, f"op{i}", _edge_label(ctx, partials, k), tags)


def _group_edges(ctx, d, g):
    inside = set(g.ops)
    seen = set()
    producer = ctx.model.producer
    links = ctx.model.links
    for i in g.ops:
        for k, tid in enumerate(ctx.model.ops[i].in_ids):
            tid = tid if tid is not None else links.get((i, k))
            if tid is None or producer.get(tid, (None,))[0] in inside:
                continue
            tail = ctx.ref(tid)
            if tail is None or tail in seen:
                continue
            seen.add(tail)
            d.edge(tail, g.name, tags=ctx.state(tid in ctx.path_t))


def _note_text(kind, where, detail):
    at = L.where_text(where)
    if kind == "stop_recording":
        return f"not recorded: {detail} at {at}\n(inside stop_recording)"
    if kind == "escape":
        return f"left the tape through {detail}\nat {at}: gradients cannot follow"
    if kind == "assign":
        how = detail[0] if isinstance(detail, tuple) else detail
        return f"{how} at {at}\n(not differentiable)"
    if kind == "dtype":         # detail: (the op, the integer or bool dtype, the result's id)
        name, dtype = detail[:2]
        return f"became {dtype} through {name}\nat {at}: integers carry no gradient"
    return f"{kind} at {at}"


def _notes(ctx, d, notes, caption):
    drawn = 0
    for kind, tid, where, detail in notes:
        tail = ctx.ref(tid, create=False)
        if tail is None or tail.startswith("skip"):
            continue
        if drawn == NOTE_LIMIT:
            caption.append(f"{len(notes) - drawn} more notes are not drawn; "
                           "tape.explain(target, source) tells the whole story.")
            break
        name = f"note{drawn}"
        d.node(name, "note", [("info", _note_text(kind, where, detail))],
               [OTHER_STYLE["note"]], [kind])
        d.edge(tail, name, tags=["note"], style="dotted", arrowhead="odot")
        if kind == "assign" and isinstance(detail, tuple) and detail[1] is not None:
            src = ctx.ref(detail[1], create=False)
            if src is not None and not src.startswith("skip"):
                d.edge(src, name, tags=["note"], style="dotted", arrowhead="odot")
        drawn += 1


def _names(ctx, ids, limit=4):
    names = [ctx.model.name(t) for t in ids]
    names = [L.one_line(n) for n in names if n]
    if not names:
        return None
    return ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")


def _legend(ctx, d):
    """The caption's first lines, in words; the swatches for the colours of lines and
    borders go to the drawing's legend (the fills are added as boxes are drawn)."""
    lines = []
    view = ctx.o["view"]
    if ctx.active and view != "forward":
        src = _names(ctx, ctx.sources) or "the sources"
        tgt = L.one_line(ctx.target_name) if ctx.target_name else "the target"
        d.line_legend(f"gradient path ({src} to {tgt})", d.path_color)
        d.line_legend("not on the path", GREY, needs="grey")
        lines.append(f"Orange-red (thick): the gradient path from {src} to {tgt}; grey: not "
                     f"on it. grad = d({tgt})/d(node).")
    elif ctx.active:
        src = _names(ctx, ctx.sources) or "the accumulator's primals"
        d.line_legend(f"tangents from {src}", d.path_color)
        d.line_legend("no tangent", GREY, needs="grey")
        lines.append(f"Blue (thick): tangents carried forward from {src}.")
    if view in _LEGEND:
        lines.append(_LEGEND[view])
    # said only when marked, so a finite tape's picture is what it always was
    if ctx.nonfinite:
        d.line_legend("holds NaN or inf (thick border)", NAN, kind="thick")
        lines.append("Thick reddish-purple border: a value or grad with NaN or inf; its label "
                     "counts them.")
    b = ctx.birth
    if b is not None:
        phase = {"backward": "in the reverse pass", "data": "with the data"}.get(
            b.phase, "in the forward pass")
        # an op recorded inside a custom gradient, say, has no box of its own
        head = "Reddish-purple double border: " if ctx.born_drawn else "Not drawn here: "
        if ctx.born_drawn:
            d.line_legend(f"where the first {born_word(b)} was born (double border)", NAN,
                          kind="double")
        lines.append(f"{head}{b.name} (op {b.position}, {L.where_text(b.where)}),"
                     f" where the first {born_word(b)} was born, {phase}: "
                     f"{born_short(b)}. tape.explain(target, source) says why and how to "
                     "fix it.")
    return lines

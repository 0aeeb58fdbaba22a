"""The picture of a traced program (``f.graph(...)``): a ``graphviz.Digraph``.

One node per step: the inputs and the reads of variables (ovals), each numpy call (a
box, blue for the forward pass, orange for the backward pass, so that a learner sees
the second program reverse mode builds from the first), each variable update (green),
and what the function returns.  An edge runs from the step that computed a value to
each step that uses it.  Only ``graphviz``'s Python package is needed to build it (a
notebook displays it as SVG); it is imported here, when a picture is asked for.
"""
from .trace import Slot, kind_text, slots_in

_COLOURS = {"forward": "#dbe9f6", "backward": "#fde0c5"}


def draw_program(steps, result, kinds, name="f"):
    """A ``graphviz.Digraph`` of ``steps`` (a trace's program) returning ``result``.

    >>> import operator, numpy as np
    >>> steps = [("input", 0, "x"),
    ...          ("call", 1, "np.multiply", operator.mul, (Slot(0), 3.0), None, "forward")]
    >>> kind = (np.dtype("float64"), ())
    >>> g = draw_program(steps, Slot(1), {0: kind, 1: kind})
    >>> "np.multiply" in g.source and "x" in g.source
    True
    """
    import graphviz
    g = graphviz.Digraph(name=f"nt.function {name}",
                         graph_attr={"rankdir": "TB", "fontsize": "10"},
                         node_attr={"fontsize": "10", "fontname": "Helvetica"},
                         edge_attr={"arrowsize": "0.6"})
    node_of = {}        # slot -> node name

    def edges(args, node):
        for n in slots_in(args, []):
            if n in node_of:
                g.edge(node_of[n], node)

    for k, step in enumerate(steps):
        kind = step[0]
        node = f"s{k}"
        if kind == "input":
            g.node(node, f"{step[2]}\n{kind_text(kinds.get(step[1]))}", shape="ellipse")
            node_of[step[1]] = node
        elif kind == "read":
            g.node(node, f"read {step[2].name}\n{kind_text(kinds.get(step[1]))}",
                   shape="ellipse", style="dashed")
            node_of[step[1]] = node
        elif kind == "call":
            out, op, _, args, kw, phase = step[1:7]
            outs = out if type(out) is tuple else (out,)
            label = op + "".join(f"\n{kind_text(kinds.get(n))}" for n in outs if n is not None)
            g.node(node, label, shape="box", style="filled,rounded",
                   fillcolor=_COLOURS.get(phase, "white"))
            edges(args, node)
            edges(kw or {}, node)
            for n in outs:
                if n is not None:
                    node_of[n] = node
        elif kind == "assign":
            _, n, var, how, cur, src, _, _ = step
            g.node(node, f"{var.name}.{how}", shape="box", style="filled",
                   fillcolor="#d5f0d5")
            edges([Slot(cur)] if cur is not None else [], node)
            edges(src, node)
            node_of[n] = node
    g.node("result", "return", shape="plaintext")
    edges(result, "result")
    return g

"""The look of tape pictures: colours, shapes, and a ``graphviz.Digraph`` that draws.

``TapeDigraph`` is what ``tape.graph()`` returns: a real ``graphviz.Digraph``
(edit it, read ``.source``) that displays itself through nbtape's renderer, so
it shows in Jupyter with no system Graphviz: as SVG, with a PNG beside it for
front ends that do not render SVG (JupyterLab, in a notebook it does not
trust).  Besides the DOT it keeps what it drew, by node name, in plain Python
(``nbtape_nodes``, ``nbtape_edges``, ``nbtape_caption``) for tests and widgets.
"""
import collections
import os
import textwrap

import graphviz

from . import labels as L
from .. import render as R

PATH = "#c2410c"       # gradient paths and adjoints
TANGENT = "#15803d"    # forward-mode tangents
GREY = "#c7cbd1"
GREY_TEXT = "#9ca3af"
OP_OUTLINE = "#374151"
NAN = "#dc2626"        # NaN and inf: the boxes that hold one, and where it was born

LEAF_STYLE = {
    "variable": dict(shape="box", style="rounded,filled", fillcolor="#dbeafe", color="#1d4ed8"),
    "watched": dict(shape="box", style="rounded,filled", fillcolor="#dcfce7", color="#15803d"),
    "constant": dict(shape="box", style="rounded,filled", fillcolor="#f3f4f6", color="#9ca3af"),
    "outside": dict(shape="box", style="rounded,dashed", fillcolor="#ffffff", color="#9ca3af"),
}
OP_STYLE = {
    "op": dict(shape="box", style="filled", fillcolor="#ffffff", color=OP_OUTLINE),
    "stop": dict(shape="box", style="filled,dashed", fillcolor="#fee2e2", color="#b91c1c"),
    "custom": dict(shape="box", style="filled", fillcolor="#ede9fe", color="#6d28d9",
                   peripheries="2"),
    "norule": dict(shape="box", style="filled,dashed", fillcolor="#fff7ed", color="#c2410c"),
}
OTHER_STYLE = {
    "const": dict(shape="plaintext", style="", fontsize="9", fontcolor="#6b7280"),
    "group": dict(shape="box3d", style="filled,dashed", fillcolor="#f9fafb", color="#6b7280"),
    "note": dict(shape="note", style="filled,dashed", fillcolor="#fefce8", color="#a16207"),
}
STATE_STYLE = {
    "path": dict(color=PATH, penwidth="2"),
    "grey": dict(color=GREY, fontcolor=GREY_TEXT, fillcolor="#f9fafb"),
    "highlight": dict(fillcolor="#fde047", color="#a16207", penwidth="3"),
    # after "path" and "highlight" in a node's tags, so the red border wins (the fill
    # still says which op the reverse pass is at)
    "nonfinite": dict(color=NAN, penwidth="3"),
    "born": dict(color=NAN, penwidth="3", peripheries="2"),
}
ROLE = {
    "title": lambda m: f"<B>{m}</B>",
    "value": lambda m: L.small(m),
    "info": lambda m: L.small(m, "#6b7280", 9),
    "grad": lambda m: L.small(m, PATH),
    "tangent": lambda m: L.small(m, TANGENT),
    "pending": lambda m: L.small(m, GREY_TEXT),
    "nonfinite": lambda m: L.small(m, NAN),
    "born": lambda m: f"<B>{L.small(m, NAN)}</B>",
}

NodeInfo = collections.namedtuple("NodeInfo", "kind lines tags")
NodeInfo.__doc__ = "What a node shows: its kind, its label's lines (plain text), its tags."
EdgeInfo = collections.namedtuple("EdgeInfo", "tail head label tags")
EdgeInfo.__doc__ = "An edge: tail and head node names (with :port), its label, its tags."


class TapeDigraph(graphviz.Digraph):
    """A ``graphviz.Digraph`` of a tape that draws itself with nbtape's renderer.

    >>> g = TapeDigraph()
    >>> g.node("a")
    >>> bundle = g._repr_mimebundle_()
    >>> bundle["image/svg+xml"][:5], bundle["image/png"][:4]
    ('<?xml', b'\x89PNG')
    """

    nbtape_nodes = None     # {node name: NodeInfo}
    nbtape_edges = None     # [EdgeInfo], in drawing order
    nbtape_caption = None   # [line], the text under the picture
    nbtape_fallback = None  # () -> a smaller TapeDigraph, for layouts that time out

    def _repr_mimebundle_(self, include=None, exclude=None, **_):
        # IPython asks _repr_svg_ too when the bundle has no SVG; remember the
        # answer so a graph that cannot be drawn is not laid out (or timed out) twice.
        key = (self.source, tuple(sorted(include)) if include is not None else None,
               tuple(sorted(exclude or ())))
        shown = self.__dict__.get("_nbtape_shown")
        if shown is None or shown[0] != key:
            bundle = R.picture_bundle(self, include, exclude)
            if R.is_pending(bundle):          # drawable in a moment: don't keep this
                return bundle
            shown = self._nbtape_shown = (key, bundle)
        return dict(shown[1])

    def _repr_svg_(self):
        return self._repr_mimebundle_().get("image/svg+xml")

    def _display_when_drawable(self):
        # In the browser the first picture may be asked for while Graphviz is still
        # loading: show a note, and replace it with the picture once it can be drawn.
        from IPython.display import display
        bundle = self._repr_mimebundle_()
        if not R.is_pending(bundle):
            display(bundle, raw=True)
            return
        handle = display(bundle, raw=True, display_id=True)
        R.when_drawable(lambda: handle.update(self._repr_mimebundle_(), raw=True))

    if R.browser.IN_BROWSER:
        _ipython_display_ = _display_when_drawable

    def pipe(self, format=None, renderer=None, formatter=None, neato_no_op=None,
             quiet=False, *, engine=None, encoding=None):
        """Like ``graphviz``'s ``pipe``, but laid out by nbtape's engine (no system dot)."""
        if renderer or formatter or neato_no_op or engine not in (None, "dot") \
                or (format or self.format) not in R.FORMATS:
            return super().pipe(format, renderer=renderer, formatter=formatter,
                                neato_no_op=neato_no_op, quiet=quiet, engine=engine,
                                encoding=encoding)
        data = R.render(self, format or self.format)
        return data.decode(encoding) if encoding else data

    def render(self, filename=None, directory=None, view=False, cleanup=False, format=None,
               renderer=None, formatter=None, neato_no_op=None, quiet=False,
               quiet_view=False, *, outfile=None, engine=None, **options):
        """Like ``graphviz``'s ``render`` (save the DOT, then the picture next to it),
        laid out by nbtape's engine for svg and png, so it works with no system dot."""
        fmt = format or (os.path.splitext(str(outfile))[1][1:] if outfile else self.format)
        if renderer or formatter or neato_no_op or options or engine not in (None, "dot") \
                or fmt not in R.FORMATS:
            return super().render(filename, directory=directory, view=view, cleanup=cleanup,
                                  format=format, renderer=renderer, formatter=formatter,
                                  neato_no_op=neato_no_op, quiet=quiet,
                                  quiet_view=quiet_view, outfile=outfile, engine=engine,
                                  **options)
        if outfile is not None:
            outfile = os.path.join(directory or "", os.fspath(outfile))
            if filename is None:
                filename = os.path.splitext(os.path.basename(outfile))[0] + ".gv"
        source_path = self.save(filename, directory=directory)
        outfile = outfile or f"{source_path}.{fmt}"
        with open(outfile, "wb") as f:
            f.write(R.render(self, fmt))
        if cleanup:
            os.remove(source_path)
        if view:
            graphviz.view(outfile, quiet=quiet_view)
        return os.fspath(outfile)

    def __repr__(self):
        n = len(self.nbtape_nodes or ())
        e = len(self.nbtape_edges or ())
        return (f"<nbtape tape graph: {_count(n, 'node')}, {_count(e, 'edge')}; displays as "
                "SVG in Jupyter, "
                "nt.render(graph) gives the picture's bytes, .source its DOT>")


class Drawing:
    """Builds a ``TapeDigraph`` node by node, remembering what each node shows."""

    def __init__(self, rankdir, path_color=PATH):
        self.path_color = path_color
        self.graph = g = TapeDigraph(name="tape", format="svg")
        g.nbtape_nodes, g.nbtape_edges, g.nbtape_caption = {}, [], []
        g.attr(rankdir=rankdir, fontname=L.FONT, nodesep="0.25", ranksep="0.35",
               labelloc="b", labeljust="l")
        g.attr("node", fontname=L.FONT, fontsize="11", margin="0.08,0.04")
        g.attr("edge", fontname=L.FONT, fontsize="9", color="#6b7280", arrowsize="0.7")

    def node(self, name, kind, rows, styles, tags=(), ports=None, tip=None):
        """Add a node; ``rows`` are ``(role, text)`` pairs, escaped here."""
        markup = [ROLE[role](L.esc(text)) for role, text in rows]
        attrs = {}
        for style in styles:
            attrs.update(style)
        for tag in tags:
            attrs.update(STATE_STYLE.get(tag, {}))
            if tag == "path":
                attrs["color"] = self.path_color
        if tip:
            attrs["tooltip"] = L.tooltip(tip)
        self.graph.node(name, label=L.table(markup, ports), **attrs)
        self.graph.nbtape_nodes[name] = NodeInfo(kind, [t for _, t in rows], frozenset(tags))

    def edge(self, tail, head, label=None, tags=(), **attrs):
        tags = frozenset(tags)
        if "path" in tags:
            attrs.setdefault("color", self.path_color)
        if "grey" in tags:
            attrs.setdefault("color", GREY)
        if "path" in tags:
            attrs.setdefault("penwidth", "2")
        if "pending" in tags:
            attrs.update(style="dashed", penwidth="1.2")
        if "stop" in tags:
            attrs.update(style="dashed", arrowhead="tee")
        if "const" in tags:
            attrs.update(style="dashed")
        if label is not None:
            attrs["label"] = L.html_label([label], size=9,
                                          color=self.path_color if "path" in tags else None)
        self.graph.edge(tail, head, **attrs)
        self.graph.nbtape_edges.append(EdgeInfo(tail, head, label, tags))

    def same_rank(self, names):
        """Keep nodes side by side (an op and its constants), so chains stay straight."""
        if len(names) > 1:
            self.graph.body.append("\t{rank=same; " + "; ".join(names) + "}\n")

    def caption(self, lines):
        if lines:
            self.graph.nbtape_caption.extend(lines)
            wrapped = [part for line in lines for part in textwrap.wrap(line, 110)]
            self.graph.attr(label=L.html_label(wrapped, size=10, color="#374151"))


def _count(n, noun):
    return f"{n} {noun}" + ("" if n == 1 else "s")

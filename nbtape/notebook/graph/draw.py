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
from ...display import palette as P

PATH = P.REVERSE            # gradient paths and adjoints
TANGENT = P.FORWARD        # forward-mode tangents
GREY = P.OFF_PATH
GREY_TEXT = P.MUTED_TEXT   # text off the path: muted, never light grey
OP_OUTLINE = P.OUTLINE
NAN = P.NONFINITE          # NaN and inf: the boxes that hold one, and where it was born
TEXT_OF = {PATH: P.REVERSE_TEXT, TANGENT: P.FORWARD_TEXT}
T = P.TINT

# Point sizes at scale 1 (a browser shows a point as 4/3 px: 11 pt is 14.7 px, the
# smallest text on a picture; values 16 px, titles 17.3 px).
SIZES = {"title": 13, "value": 12, "info": 11, "edge": 12, "caption": 12}

# Each style's "legend" names it in the picture's legend (popped before Graphviz sees it).
LEAF_STYLE = {
    "variable": dict(shape="box", style="rounded,filled", fillcolor=T["sky blue"],
                     color=OP_OUTLINE, legend="Variable"),
    "watched": dict(shape="box", style="rounded,filled", fillcolor=T["bluish green"],
                    color=OP_OUTLINE, legend="watched tensor"),
    "constant": dict(shape="box", style="rounded,filled", fillcolor=T["grey"],
                     color=OP_OUTLINE, legend="constant"),
    "outside": dict(shape="box", style="rounded,dashed", fillcolor=T["white"],
                    color=OP_OUTLINE, legend="computed outside this picture"),
}
OP_STYLE = {
    "op": dict(shape="box", style="filled", fillcolor=T["white"], color=OP_OUTLINE,
               legend="operation"),
    "stop": dict(shape="box", style="filled,dashed", fillcolor=T["light grey"],
                 color=OP_OUTLINE, legend="stop_gradient (dashed)"),
    "custom": dict(shape="box", style="filled", fillcolor=T["reddish purple"],
                   color=OP_OUTLINE, peripheries="2", legend="custom gradient (double border)"),
    "norule": dict(shape="box", style="filled,dashed", fillcolor=T["orange"],
                   color=OP_OUTLINE, legend="no gradient rule (dashed)"),
}
OTHER_STYLE = {
    "const": dict(shape="plaintext", style="", fontcolor=P.MUTED_TEXT),
    "group": dict(shape="box3d", style="filled,dashed", fillcolor=T["light grey"],
                  color=OP_OUTLINE, legend="ops folded into one box"),
    "note": dict(shape="note", style="filled,dashed", fillcolor=T["cream"],
                 color=OP_OUTLINE, legend="note"),
}
STATE_STYLE = {
    "path": dict(color=PATH, penwidth="2.5"),
    "grey": dict(color=GREY, fontcolor=GREY_TEXT),
    "highlight": dict(fillcolor=P.HIGHLIGHT, color=P.INK, penwidth="3"),
    # after "path" and "highlight" in a node's tags, so the NaN border wins (the fill
    # still says which op the reverse pass is at)
    "nonfinite": dict(color=NAN, penwidth="4"),
    "born": dict(color=NAN, penwidth="4", peripheries="2"),
}
STATE_LEGEND = {"highlight": "the op this picture points at"}

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

    def _mime_(self):
        """marimo's display protocol: the picture as SVG (else what the bundle offers).

        >>> g = TapeDigraph(); g.node("a")
        >>> g._mime_()[0]
        'image/svg+xml'
        """
        bundle = self._repr_mimebundle_()
        for mime in ("image/svg+xml", "text/html", "text/plain"):
            if bundle.get(mime):
                return mime, bundle[mime]
        return "text/plain", repr(self)

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
    """Builds a ``TapeDigraph`` node by node, remembering what each node shows.

    ``scale`` multiplies every size (text, spacing, lines); ``rankdir=None`` lays the
    picture out left to right, or top to bottom when left to right would be wider
    than ``FIT_PX`` and top to bottom narrower (see ``choose_rankdir``).
    """

    def __init__(self, rankdir, path_color=PATH, scale=1.0):
        self.path_color = path_color
        self.rankdir = rankdir
        self.scale = scale
        self.sizes = {k: round(v * scale, 2) for k, v in SIZES.items()}
        self.used = {}              # legend text -> (fill, border, kind), in drawing order
        self.needs = {}             # legend text -> the tag it needs drawn to be shown
        self.tags_seen = set()
        self.graph = g = TapeDigraph(name="tape", format="svg")
        g.nbtape_nodes, g.nbtape_edges, g.nbtape_caption = {}, [], []
        g.nbtape_legend = []
        g.attr(fontname=L.FONT, nodesep=_num(0.3 * scale), ranksep=_num(0.4 * scale),
               labelloc="b", labeljust="l", fontcolor=P.INK)
        g.attr("node", fontname=L.FONT, fontsize=_num(self.sizes["title"]),
               margin=f"{_num(0.1 * scale)},{_num(0.05 * scale)}", fontcolor=P.INK,
               penwidth=_num(1.2 * scale))
        g.attr("edge", fontname=L.FONT, fontsize=_num(self.sizes["edge"]), color=P.OUTLINE,
               fontcolor=P.INK, arrowsize=_num(0.8 * scale), penwidth=_num(1.2 * scale))

    def markup(self, role, text):
        """One row of a node's label: ``text`` (escaped already) styled for its role."""
        z = self.sizes
        colour = {"value": None, "info": P.MUTED_TEXT,
                  "grad": TEXT_OF.get(self.path_color, P.REVERSE_TEXT),
                  "tangent": P.FORWARD_TEXT, "pending": P.MUTED_TEXT,
                  "nonfinite": P.NONFINITE_TEXT, "born": P.NONFINITE_TEXT}
        if role == "title":
            return f"<B>{L.small(text, None, _num(z['title']))}</B>"
        size = z["info"] if role in ("info", "pending") else z["value"]
        out = L.small(text, colour[role], _num(size))
        return f"<B>{out}</B>" if role == "born" else out

    def node(self, name, kind, rows, styles, tags=(), ports=None, tip=None):
        """Add a node; ``rows`` are ``(role, text)`` pairs, escaped here."""
        markup = [self.markup(role, L.esc(text)) for role, text in rows]
        self.tags_seen.update(tags)
        attrs = {}
        for style in styles:
            attrs.update(style)
        legend = attrs.pop("legend", None)
        if legend and "fillcolor" in attrs:
            self.used.setdefault(legend, (attrs["fillcolor"], OP_OUTLINE, "fill"))
        if kind == "const":
            attrs["fontsize"] = _num(self.sizes["info"])
        for tag in tags:
            attrs.update(STATE_STYLE.get(tag, {}))
            if tag == "path":
                attrs["color"] = self.path_color
        if "penwidth" in attrs:
            attrs["penwidth"] = _num(float(attrs["penwidth"]) * self.scale)
        for tag in tags:
            if tag in STATE_LEGEND:
                self.used.setdefault(STATE_LEGEND[tag], (STATE_STYLE[tag]["fillcolor"],
                                                         P.INK, "fill"))
        if tip:
            attrs["tooltip"] = L.tooltip(tip)
        self.graph.node(name, label=L.table(markup, ports), **attrs)
        self.graph.nbtape_nodes[name] = NodeInfo(kind, [t for _, t in rows], frozenset(tags))

    def edge(self, tail, head, label=None, tags=(), **attrs):
        tags = frozenset(tags)
        self.tags_seen.update(tags)
        if "path" in tags:
            attrs.setdefault("color", self.path_color)
        if "grey" in tags:
            attrs.setdefault("color", GREY)
            attrs.setdefault("fontcolor", GREY_TEXT)
        if "path" in tags:
            attrs.setdefault("penwidth", _num(2.5 * self.scale))
        if "pending" in tags:
            attrs.update(style="dashed", penwidth=_num(1.5 * self.scale))
        if "stop" in tags:
            attrs.update(style="dashed", arrowhead="tee")
        if "const" in tags:
            attrs.update(style="dashed")
        if label is not None:
            colour = TEXT_OF.get(self.path_color) if "path" in tags else \
                GREY_TEXT if "grey" in tags else P.INK
            attrs["label"] = L.html_label([label], size=_num(self.sizes["edge"]), color=colour)
        self.graph.edge(tail, head, **attrs)
        self.graph.nbtape_edges.append(EdgeInfo(tail, head, label, tags))

    def same_rank(self, names):
        """Keep nodes side by side (an op and its constants), so chains stay straight."""
        if len(names) > 1:
            self.graph.body.append("\t{rank=same; " + "; ".join(names) + "}\n")

    def line_legend(self, text, colour, needs=None, kind="line"):
        """Name a line colour in the legend (once a node or edge tagged ``needs`` is
        drawn, when given); ``kind`` "thick" or "double" draws its swatch as a box with
        such a border, not a block of the colour."""
        self.used.setdefault(text, (colour, colour, kind))
        if needs:
            self.needs[text] = needs

    def caption(self, lines):
        """The legend (a swatch and a name for every fill and colour drawn) and the
        caption's lines, under the picture; and the layout's direction, with a line
        saying to scroll when even that is estimated wider than ``FIT_PX``."""
        g = self.graph
        rankdir, width_px = choose_rankdir(g, self.sizes, self.rankdir)
        g.nbtape_rankdir = rankdir
        g.attr(rankdir=rankdir)
        if width_px > FIT_PX * 1.15:      # the estimate's margin of error
            lines = list(lines) + [
                "This picture is wider than most screens: scroll sideways to see the rest, "
                "or draw it smaller (scale=0.8) or with fewer nodes (max_nodes=...)."]
        g.nbtape_caption.extend(lines)
        for text, tag in self.needs.items():
            if tag not in self.tags_seen:
                del self.used[text]
        g.nbtape_legend = [(text, fill, kind) for text, (fill, _, kind) in self.used.items()]
        label = _legend_label(self.used, [part for line in lines
                                          for part in textwrap.wrap(line, CAPTION_CHARS)],
                              self.sizes["caption"], self.scale)
        if label:
            g.attr(label=label)


CAPTION_CHARS = 90          # a caption line at 16 px is about 700 px wide
FIT_PX = 1000               # what an output area 1280 px wide shows without scrolling


def _num(x):
    """A DOT number: short and the same on every platform."""
    return f"{x:.3f}".rstrip("0").rstrip(".")


def _legend_label(used, lines, size, scale):
    """An HTML-like label: legend swatches (two a row, in a table of their own so the
    caption's long lines do not stretch them), then the caption's lines."""
    rows = []
    items = list(used.items())
    per_row = 2
    legend = []
    for k in range(0, len(items), per_row):
        cells = []
        for text, (fill, border, kind) in items[k:k + per_row]:
            cells.append(_swatch(fill, border, kind, scale) +
                         f'<TD ALIGN="LEFT">{L.small(L.esc(text, 80), P.INK, _num(size))}</TD>')
        legend.append("<TR>" + "".join(cells) + "</TR>")
    if legend:
        rows.append(f'<TR><TD ALIGN="LEFT"><TABLE BORDER="0" CELLBORDER="0" '
                    f'CELLSPACING="{_num(4 * scale)}" CELLPADDING="1">' + "".join(legend)
                    + "</TABLE></TD></TR>")
    if lines:
        body = "".join(L.esc(line, 200) + '<BR ALIGN="LEFT"/>' for line in lines)
        rows.append(f'<TR><TD ALIGN="LEFT" BALIGN="LEFT">'
                    f"{L.small(body, P.INK, _num(size))}</TD></TR>")
    if not rows:
        return None
    return ('<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">'
            + "".join(rows) + "</TABLE>>")


def _swatch(fill, border, kind, scale):
    """A legend swatch: a rounded box of a fill, a block of a line's colour, or a white
    box with a thick or a double border of the colour (as the boxes they name have)."""
    w, h = _num(28 * scale), _num(16 * scale)
    if kind == "fill":
        return (f'<TD BGCOLOR="{fill}" BORDER="1" COLOR="{border}" WIDTH="{w}" HEIGHT="{h}" '
                f'FIXEDSIZE="TRUE" STYLE="rounded"></TD>')
    if kind == "thick":
        return (f'<TD BGCOLOR="{P.TINT["white"]}" BORDER="{max(2, round(4 * scale))}" '
                f'COLOR="{border}" WIDTH="{w}" HEIGHT="{h}" FIXEDSIZE="TRUE"></TD>')
    if kind == "double":        # two thin borders, a white gap between them
        iw, ih = _num(20 * scale), _num(8 * scale)
        return (f'<TD BGCOLOR="{P.TINT["white"]}" BORDER="1" COLOR="{border}" '
                f'CELLPADDING="{max(2, round(3 * scale))}" WIDTH="{w}" HEIGHT="{h}">'
                f'<TABLE BORDER="1" COLOR="{border}" CELLBORDER="0" CELLSPACING="0" '
                f'CELLPADDING="0"><TR><TD WIDTH="{iw}" HEIGHT="{ih}" FIXEDSIZE="TRUE">'
                f'</TD></TR></TABLE></TD>')
    return (f'<TD BGCOLOR="{fill}" BORDER="0" WIDTH="{w}" HEIGHT="{h}" '
            f'FIXEDSIZE="TRUE"></TD>')


def _text_width(rows, sizes):
    """A node's width in points, from its longest line (Helvetica: about 0.56 em)."""
    widest = 0.0
    for role, text in rows:
        size = sizes["title"] if role == "title" else \
            sizes["info"] if role in ("info", "pending") else sizes["value"]
        for line in str(text).split("\n"):
            widest = max(widest, min(len(line), 60) * size * (0.6 if role == "title" else 0.56))
    return widest + 16


def choose_rankdir(graph, sizes, asked=None):
    """``(rankdir, estimated width in px)``: ``asked`` when given, else 'LR', or 'TB'
    when left to right would be wider than ``FIT_PX`` and top to bottom narrower (a
    rough estimate from the labels' lengths and the ranks)."""
    nodes = graph.nbtape_nodes
    if not nodes:
        return asked or "LR", 0.0
    width = {n: _text_width([("title" if k == 0 else "value", t)
                             for k, t in enumerate(info.lines)], sizes)
             for n, info in nodes.items()}
    height = {n: 8 + sum((sizes["title"] if k == 0 else sizes["value"]) * 1.25
                         * (1 + str(t).count("\n")) for k, t in enumerate(info.lines))
              for n, info in nodes.items()}
    rank = {n: 0 for n in nodes}
    edges = [(e.tail.split(":")[0], e.head.split(":")[0]) for e in graph.nbtape_edges]
    edges = [(a, b) for a, b in edges if a in rank and b in rank]
    for _ in range(len(nodes)):            # longest path from the sources, edge by edge
        changed = False
        for a, b in edges:
            if rank[b] < rank[a] + 1:
                rank[b], changed = rank[a] + 1, True
        if not changed:
            break
    # as dot does (it keeps edges short): every node as late as its users allow, just
    # before its first user, and an op's constants beside the op (same_rank)
    heads = collections.defaultdict(list)
    for a, b in edges:
        heads[a].append(b)
    for n in sorted(nodes, key=lambda n: -rank[n]):
        if heads[n]:
            nearest = min(rank[b] for b in heads[n])
            rank[n] = nearest if nodes[n].kind == "const" else nearest - 1
    by_rank = collections.defaultdict(list)
    for n, r in rank.items():
        by_rank[r].append(n)
    gap_rank, gap_node = 0.4 * 72 * sizes["value"] / 12, 0.3 * 72 * sizes["value"] / 12
    lr = sum(max(width[n] for n in ns) for ns in by_rank.values()) + gap_rank * len(by_rank)
    tb = max(sum(width[n] for n in ns) + gap_node * len(ns) for ns in by_rank.values())
    lr_px, tb_px = P.px(lr), P.px(tb)
    if asked is not None:
        return asked, lr_px if asked in ("LR", "RL") else tb_px
    return ("TB", tb_px) if lr_px > FIT_PX and tb_px < lr_px else ("LR", lr_px)


def _count(n, noun):
    return f"{n} {noun}" + ("" if n == 1 else "s")

"""``nt.TapePlayer``: the tape played forward op by op, then walked back newest first
(as an editor's undo history is).

An anywidget widget (``front/player.js`` draws it): its state is the traits
``frame`` (the frame shown), ``interval`` (seconds per frame while playing) and
``playing``, so a slider or another player links to it
(``ipywidgets.link((player, "frame"), (slider, "value"))``).  The front end's
Play button, slider and step buttons set ``frame`` (playing needs no Python
thread: the browser's timer steps the frame); Python answers each new frame
with its picture, the tape's graph (``tape_graph`` with ``highlight`` during
the forward pass and ``backward_step`` during the reverse pass) as inline SVG,
and a large caption stating what the frame shows, including the chain-rule
product that produced each adjoint.  Frames are drawn on first view and kept,
so scrubbing back and forth is instant.

Without a kernel: the static copy a saved notebook keeps, and ``save("x.html")``,
are the same player in plain HTML and JavaScript (``static_player``);
``save("x.gif")`` is an animation for slides (``animation``).
"""
import html
import os

import traitlets as T

from ..graph import tape_graph
from ..render import (DRAWING, HOW_TO_GET_PICTURES, RenderError, draws_png, drawing_soon, inline_svg, layout,
                      when_drawable)
from ...display import palette as P
from . import animation, static_player
from .live import LiveView, Snapshot, front_end, weak_callback
from .playback import Playback

# The list of steps under the picture shows the current frame near its top, one
# frame before it and STORY_AFTER after (a long tape's list is not sent whole); the
# text snapshot lists at most STORY_LINES frames (and the last).  The static player
# keeps pictures of at most STATIC_PICTURES frames (a long tape's other frames show
# the latest picture kept before them).
STORY_BEFORE = 1
STORY_AFTER = 9
STORY_LINES = 120
STATIC_PICTURES = 120
PHASES = {"start": "the tape", "forward": "forward pass", "backward": "reverse pass",
          "done": "gradients"}


class TapePlayer(LiveView):
    """Step through ``tape`` towards ``target``: forward op by op, then the reverse pass.

    ``sources`` (default: those of the tape's latest ``gradient`` call with this
    target, else every watched value) and ``names`` (``{tensor: "y"}``) are as
    for ``tape.graph``; ``interval`` is the seconds per frame while playing;
    ``rankdir`` and ``max_nodes`` shape the picture.  ``.frame``, ``.interval``
    and ``.playing`` are traits (set them, link them, observe them);
    ``.step(n)``, ``.frames`` (captions and options) and ``.close()`` work from
    Python too.  ``display`` and ``snapshot`` are as for ``nt.inspect``.

    >>> import nbtape as nt
    >>> x = nt.Variable(3.0, name="x")
    >>> with nt.GradientTape(persistent=True) as tape:
    ...     y = x * x
    >>> player = nt.TapePlayer(tape, y, names={y: "y"})
    >>> len(player.frames), player.frame, player.last
    (4, 0, 3)
    >>> player.step(); player.caption
    'Forward 1/1 (line 2): y = np.multiply(x, x) = 9.0'
    >>> player.close()
    """

    _esm = front_end("player")
    frame = T.Int(0, help="The frame shown (0 is the whole tape); set it to jump.").tag(
        sync=True)
    interval = T.Float(1.0, help="Seconds per frame while playing.").tag(sync=True)
    playing = T.Bool(False, help="True while the front end plays the frames.").tag(sync=True)
    last = T.Int(0, read_only=True, help="The last frame's number.").tag(sync=True)
    reverse = T.Int(0, read_only=True, help="The frame the reverse pass starts at.").tag(
        sync=True)
    # what the front end shows, as HTML drawn here (the same pictures everywhere)
    _title = T.Unicode("").tag(sync=True)
    _picture = T.Unicode("").tag(sync=True)
    _caption = T.Unicode("").tag(sync=True)
    _story = T.Unicode("").tag(sync=True)

    def __init__(self, tape, target=None, sources=None, names=None, interval=1.0,
                 rankdir="LR", max_nodes=60, display=None, snapshot=True):
        _check_interval(interval)
        super().__init__(0.0, None, None, snapshot)
        self._playback = Playback(tape, target, sources, names)
        self.tape = tape
        self._draw_options = dict(rankdir=rankdir, max_nodes=max_nodes)
        tape_graph(tape, **self._options(0))      # bad options fail here, not mid-play
        self._svgs = {}
        self.set_trait("last", len(self.frames) - 1)
        self.set_trait("reverse", self._reverse_start())
        self.interval = float(interval)
        self.observe(weak_callback(self._moved), names="frame")
        self._open(display)

    @T.validate("frame")
    def _valid_frame(self, proposal):
        k = proposal["value"]
        n = len(self.frames) if "_playback" in self.__dict__ else 1
        if not 0 <= k < n:
            raise ValueError(f"frame must be a whole number from 0 to {n - 1}, not {k!r}.")
        return k

    @T.validate("interval")
    def _valid_interval(self, proposal):
        return _check_interval(proposal["value"])

    # frames ---------------------------------------------------------------------------
    @property
    def frames(self):
        """The ``Frame`` list: ``phase``, ``op``, ``caption`` and graph ``options``."""
        return self._playback.frames

    @property
    def caption(self):
        """What the current frame says."""
        return self.frames[self.frame].caption

    def step(self, n=1):
        """Move ``n`` frames (negative: back), stopping at either end."""
        self.frame = max(0, min(len(self.frames) - 1, self.frame + n))

    def _moved(self, change):
        if change["new"] == len(self.frames) - 1 and self.playing:
            # played to the end: the button shows "play" again, not "pause"
            self.playing = False
        self._changed()

    def _reverse_start(self):
        return next((k for k, f in enumerate(self.frames) if f.phase in ("backward", "done")),
                    len(self.frames) - 1)

    # drawing ----------------------------------------------------------------------------
    def _options(self, k):
        return dict(self.frames[k].options, **self._draw_options)

    def svg(self, k=None):
        """The picture of frame ``k`` (default: the current one) as an SVG string.

        ``None`` when no layout program is available (the caption still tells all).
        """
        k = self.frame if k is None else k
        if k not in self._svgs:
            svg = inline_svg(tape_graph(self.tape, **self._options(k)))
            if svg is None and drawing_soon():
                return None                 # Graphviz still loading in the browser
            self._svgs[k] = svg
        return self._svgs[k]

    def _picture_html(self, k):
        svg = self.svg(k)
        if svg is None and drawing_soon():
            when_drawable(weak_callback(self._changed))
            return f"<i>{html.escape(DRAWING)}</i>"
        if svg is None:
            return ("<i>No picture: install graphviz-pure (pip install graphviz-pure) or "
                    "Graphviz for the tape's graph; the captions tell the same story.</i>")
        return f'<div style="max-width:100%">{svg}</div>'

    def _window(self, current, before, after):
        """Frame numbers to list around ``current`` (a long tape is not sent whole)."""
        n, size = len(self.frames), before + after + 1
        lo = max(0, min(current - before, n - size))    # a full window at either end too
        return range(lo, min(n, lo + size))

    def _story_html(self, current, before=STORY_BEFORE, after=STORY_AFTER):
        ks = self._window(current, before, after)
        items = []
        for k in ks:
            # ipywidgets' HTML sets a 28 px line height meant for one-line labels
            style = "white-space:normal;overflow-wrap:anywhere;line-height:1.35" + (
                f";background:{P.STEP_BACKGROUND};font-weight:600" if k == current else "")
            items.append(f'<li value="{k}" style="{style}">'
                         f"{html.escape(self.frames[k].caption)}</li>")
        more = len(self.frames) - 1 - ks[-1]
        muted = f"<div style='color:{P.MUTED_TEXT}'>"     # 7.5:1 on white
        head = f"{muted}… {ks[0]} earlier frames</div>" if ks[0] else ""
        tail = f"{muted}… {more} more frames</div>" if more else ""
        # ipywidgets' HTML content does not wrap by default: long chain-rule steps would
        # run off the right edge
        return (f'<div style="white-space:normal;max-width:72em">{head}<ol start="{ks[0]}" '
                f'style="margin:0;font-size:14px;line-height:1.35">{"".join(items)}</ol>'
                f"{tail}</div>")

    def _render(self):
        k = self.frame
        f = self.frames[k]
        with self.hold_sync():
            self._title = (f"<b>Tape player</b> · frame {k} of {len(self.frames) - 1}"
                           f" · {PHASES[f.phase]}")
            self._picture = self._picture_html(k)
            self._caption = html.escape(f.caption)
            self._story = self._story_html(k)

    def _text(self):
        lines = [f"nt.TapePlayer: {len(self.frames)} frames"]
        ks = self._window(0, 0, STORY_LINES - 1)
        for k in ks:
            lines.append(f"{'▶' if k == self.frame else ' '} {k:>2}. {self.frames[k].caption}")
        if ks[-1] < len(self.frames) - 1:
            last = len(self.frames) - 1
            lines.append(f"   … {last - ks[-1] - 1} more frames …")
            lines.append(f"{'▶' if last == self.frame else ' '} {last:>2}. "
                         f"{self.frames[last].caption}")
        return "\n".join(lines)

    def _html(self):
        return self.static_html()

    # without a kernel -------------------------------------------------------------------
    def _static_svgs(self):
        """Each frame's picture for the static player (``None``: not kept, see
        ``STATIC_PICTURES``)."""
        n = len(self.frames)
        every = -(-n // STATIC_PICTURES)
        keep = set(range(0, n, every)) | {n - 1}
        return [self.svg(k) if k in keep else None for k in range(n)]

    def _fallback_picture(self):
        """The last frame as an image for viewers that run no script."""
        last = len(self.frames) - 1
        alt = f"the tape after the reverse pass: {self.frames[last].caption}"
        if draws_png():
            try:
                png = layout(tape_graph(self.tape, **self._options(last)).source, "png")
            except RenderError:
                png = None
            if png is not None:
                return static_player.png_img(png, alt)
        svg = self.svg(last)
        return static_player.svg_img(svg, alt) if svg is not None else ""

    def static_html(self, fallback_picture=True):
        """The player as HTML that needs no kernel (what a saved notebook keeps).

        SVG frames stepped by buttons, a slider and Play in plain JavaScript;
        where scripts do not run, every caption and (with ``fallback_picture``)
        the last frame as a PNG image.
        """
        key = (self.frame, self.interval, fallback_picture)
        if getattr(self, "_static", None) and self._static[0] == key:
            return self._static[1]
        svgs = self._static_svgs()
        block = static_player.player_block(
            [f.caption for f in self.frames], [PHASES[f.phase] for f in self.frames], svgs,
            start=self.frame, interval_ms=self.interval * 1000,
            reverse=self._reverse_start(),
            fallback_picture=self._fallback_picture() if fallback_picture else None,
            nopicture="No picture: install graphviz-pure (pip install graphviz-pure) or "
                      "Graphviz for the tape's graph; the captions tell the same story.")
        if not (None in svgs and drawing_soon()):
            self._static = (key, block)     # (in JupyterLite, drawn again once Graphviz loads)
        return block

    def snapshot(self):
        """The static copy: the player without a kernel (``static_html``) and its text."""
        return Snapshot(self._text(), self._html(),
                        "the player without a kernel (for viewers without live widgets)")

    def save(self, path):
        """Write the player to ``path`` for use without a kernel.

        ``.html``: a page with the whole player (SVG frames stepped by plain
        JavaScript; open it in any browser, put it on a course site).  ``.gif``
        (or ``.png``, an animated PNG): one frame per step, each with its caption,
        ``interval`` seconds apart, for slides (needs Pillow).  ``.svg``: the same
        animation as an animated SVG (needs nothing more, JupyterLite included).
        """
        path = os.fspath(path)
        suffix = os.path.splitext(path)[1].lower()
        if suffix in (".html", ".htm"):
            with open(path, "w", encoding="utf-8") as f:
                # a page opened in a browser runs its script: no fallback picture needed
                f.write(static_player.page(self.static_html(fallback_picture=False)))
        elif suffix == ".svg":
            svgs = [self.svg(k) for k in range(len(self.frames))]
            if None in svgs:
                raise RenderError("The frames could not be drawn (no layout program, or "
                                  "Graphviz still loading in the browser): "
                                  + HOW_TO_GET_PICTURES)
            with open(path, "w", encoding="utf-8") as f:
                f.write(animation.animated_svg(svgs, [f.caption for f in self.frames],
                                               self.interval))
        elif suffix in animation.ANIMATION_FORMATS:
            graphs = [tape_graph(self.tape, **self._options(k))
                      for k in range(len(self.frames))]
            animation.save_animation(path, graphs, [f.caption for f in self.frames],
                                     self.interval, suffix)
        else:
            raise ValueError(f"player.save writes .html (a player that needs no kernel), "
                             f".gif, .png or .svg (an animation); {path!r} ends in "
                             f"{suffix or 'no suffix'}.")

    def _descriptor(self):
        return f"nt.TapePlayer live widget: {len(self.frames)} frames"


def _check_interval(interval):
    if isinstance(interval, bool) or not (isinstance(interval, (int, float)) and interval > 0):
        raise ValueError(f"interval is the seconds per frame while playing, a number "
                         f"> 0, not {interval!r}.")
    return float(interval)

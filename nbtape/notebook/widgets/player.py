"""``nt.TapePlayer``: the VHS-tape picture, played forward op by op and then backwards.

Core widgets only: a ``Play`` button and a slider (linked in the browser, so
playing needs no Python thread) choose the frame; step buttons move one frame;
the picture is the tape's graph (``tape_graph`` with ``highlight`` during the
forward pass and ``backward_step`` during the reverse pass) as inline SVG in an
``HTML`` widget, and a large caption states what the frame shows, including
the chain-rule product that produced each adjoint.  Frames are drawn on first
view and kept, so scrubbing back and forth is instant.

Without a kernel: the static copy a saved notebook keeps, and ``save("x.html")``,
are the same player in plain HTML and JavaScript (``static_player``);
``save("x.gif")`` is an animation for slides (``animation``).
"""
import html
import os

import ipywidgets as W

from ..graph import tape_graph
from ..render import (DRAWING, HOW_TO_GET_PICTURES, RenderError, draws_png, drawing_soon, inline_svg, layout,
                      when_drawable)
from . import animation, static_player
from .live import LiveView, Snapshot, weak_callback
from .playback import Playback

# The list of steps under the picture shows the current frame near its top (it
# cannot scroll itself: ipywidgets' HTML runs no script), one frame before it
# and STORY_AFTER after; the text snapshot lists at most STORY_LINES frames (and
# the last).  The static player keeps pictures of at most STATIC_PICTURES frames
# (a long tape's other frames show the latest picture kept before them).
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
    ``rankdir`` and ``max_nodes`` shape the picture.  ``.frame`` (settable),
    ``.step(n)``, ``.frames`` (captions and options) and ``.close()`` work from
    Python too.  ``display`` and ``snapshot`` are as for ``nt.inspect``.

    >>> import nbtape as nt
    >>> x = nt.Variable(3.0, name="x")
    >>> with nt.GradientTape(persistent=True) as tape:
    ...     y = x * x
    >>> player = nt.TapePlayer(tape, y, names={y: "y"})
    >>> len(player.frames), player.frame
    (4, 0)
    >>> player.step(); player.caption
    'Forward 1/1 (line 2): y = np.multiply(x, x) = 9.0'
    >>> player.close()
    """

    def __init__(self, tape, target=None, sources=None, names=None, interval=1.0,
                 rankdir="LR", max_nodes=60, display=None, snapshot=True):
        if not (isinstance(interval, (int, float)) and interval > 0):
            raise ValueError(f"interval is the seconds per frame while playing, a number "
                             f"> 0, not {interval!r}.")
        super().__init__(0.0, None, None, snapshot)
        self._playback = Playback(tape, target, sources, names)
        self.tape = tape
        self._draw_options = dict(rankdir=rankdir, max_nodes=max_nodes)
        tape_graph(tape, **self._options(0))      # bad options fail here, not mid-play
        self._svgs = {}
        self._frame = 0
        last = len(self.frames) - 1
        self._title = self._add(W.HTML())
        self._picture = self._add(W.HTML(layout=W.Layout(overflow="auto")))
        self._caption = self._add(W.HTML())
        self._interval = interval
        self._play = self._add(W.Play(value=0, min=0, max=last, step=1,
                                      interval=int(interval * 1000), description="play",
                                      show_repeat=False))
        # ipywidgets 8 calls the state "playing", 7 "_playing"
        self._playing = "playing" if self._play.has_trait("playing") else "_playing"
        self._slider = self._add(W.IntSlider(value=0, min=0, max=last, readout=False,
                                             continuous_update=True,
                                             layout=W.Layout(width="40%")))
        self._add(W.jslink((self._play, "value"), (self._slider, "value")))
        buttons = []
        # glyphs every common font has (⏮/⏭ draw as empty boxes with DejaVu)
        for label, tip, fn in (("|◀", "first frame", self._to_start),
                               ("◀", "one frame back", self._back),
                               ("▶", "one frame on", self._on),
                               ("⇤ reverse pass", "jump to the reverse pass", self._to_back),
                               ("▶|", "last frame", self._to_end)):
            b = self._add(W.Button(description=label, tooltip=tip,
                                   layout=W.Layout(width="auto")))
            b.on_click(weak_callback(fn))
            buttons.append(b)
        self._slider.observe(weak_callback(self._slid), names="value")
        controls = self._add(W.HBox([self._play, self._slider] + buttons))
        self._story = self._add(W.HTML(layout=W.Layout(max_height="16em", overflow="auto",
                                                       width="100%")))
        self.children = [self._title, controls, self._picture, self._caption, self._story]
        self._open(display)

    # frames ---------------------------------------------------------------------------
    @property
    def frames(self):
        """The ``Frame`` list: ``phase``, ``op``, ``caption`` and graph ``options``."""
        return self._playback.frames

    @property
    def caption(self):
        """What the current frame says."""
        return self.frames[self._frame].caption

    @property
    def frame(self):
        """The frame shown (0 is the whole tape); set it to jump."""
        return self._frame

    @frame.setter
    def frame(self, k):
        if not isinstance(k, int) or not 0 <= k < len(self.frames):
            raise ValueError(f"frame must be a whole number from 0 to {len(self.frames) - 1}, "
                             f"not {k!r}.")
        self._slider.value = k          # the slider's observer shows it
        if self._frame != k:            # (no observer call when the slider already had k)
            self._frame = k
            self._changed()

    def step(self, n=1):
        """Move ``n`` frames (negative: back), stopping at either end."""
        self.frame = max(0, min(len(self.frames) - 1, self._frame + n))

    def _slid(self, change):
        self._frame = change["new"]
        if self._frame == len(self.frames) - 1 and getattr(self._play, self._playing, False):
            # played to the end: the button shows "play" again, not "pause"
            setattr(self._play, self._playing, False)
        self._changed()

    def _to_start(self, _b=None):
        self.frame = 0

    def _back(self, _b=None):
        self.step(-1)

    def _on(self, _b=None):
        self.step(1)

    def _reverse_start(self):
        return next((k for k, f in enumerate(self.frames) if f.phase in ("backward", "done")),
                    len(self.frames) - 1)

    def _to_back(self, _b=None):
        self.frame = self._reverse_start()

    def _to_end(self, _b=None):
        self.frame = len(self.frames) - 1

    # drawing ----------------------------------------------------------------------------
    def _options(self, k):
        return dict(self.frames[k].options, **self._draw_options)

    def svg(self, k=None):
        """The picture of frame ``k`` (default: the current one) as an SVG string.

        ``None`` when no layout program is available (the caption still tells all).
        """
        k = self._frame if k is None else k
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
                ";background:#fde68a;font-weight:600" if k == current else "")
            items.append(f'<li value="{k}" style="{style}">'
                         f"{html.escape(self.frames[k].caption)}</li>")
        more = len(self.frames) - 1 - ks[-1]
        head = f"<div style='color:#888'>… {ks[0]} earlier frames</div>" if ks[0] else ""
        tail = f"<div style='color:#888'>… {more} more frames</div>" if more else ""
        # ipywidgets' HTML content does not wrap by default: long chain-rule steps would
        # run off the right edge
        return (f'<div style="white-space:normal;max-width:72em">{head}<ol start="{ks[0]}" '
                f'style="margin:0;font-size:14px;line-height:1.35">{"".join(items)}</ol>'
                f"{tail}</div>")

    def _render(self):
        k = self._frame
        f = self.frames[k]
        with self._title.hold_sync(), self._picture.hold_sync(), \
                self._caption.hold_sync(), self._story.hold_sync():
            self._title.value = (f"<b>Tape player</b> · frame {k} of {len(self.frames) - 1}"
                                 f" · {PHASES[f.phase]}")
            self._picture.value = self._picture_html(k)
            self._caption.value = (f'<div style="font-size:18px;line-height:1.4;'
                                   f'padding:6px 0;white-space:normal">'
                                   f"{html.escape(f.caption)}</div>")
            self._story.value = self._story_html(k)

    def _text(self):
        lines = [f"nt.TapePlayer: {len(self.frames)} frames"]
        ks = self._window(0, 0, STORY_LINES - 1)
        for k in ks:
            lines.append(f"{'▶' if k == self._frame else ' '} {k:>2}. {self.frames[k].caption}")
        if ks[-1] < len(self.frames) - 1:
            last = len(self.frames) - 1
            lines.append(f"   … {last - ks[-1] - 1} more frames …")
            lines.append(f"{'▶' if last == self._frame else ' '} {last:>2}. "
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
        key = (self._frame, fallback_picture)
        if getattr(self, "_static", None) and self._static[0] == key:
            return self._static[1]
        svgs = self._static_svgs()
        block = static_player.player_block(
            [f.caption for f in self.frames], [PHASES[f.phase] for f in self.frames], svgs,
            start=self._frame, interval_ms=self._interval * 1000,
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
                                               self._interval))
        elif suffix in animation.ANIMATION_FORMATS:
            graphs = [tape_graph(self.tape, **self._options(k))
                      for k in range(len(self.frames))]
            animation.save_animation(path, graphs, [f.caption for f in self.frames],
                                     self._interval, suffix)
        else:
            raise ValueError(f"player.save writes .html (a player that needs no kernel), "
                             f".gif, .png or .svg (an animation); {path!r} ends in "
                             f"{suffix or 'no suffix'}.")

    def _descriptor(self):
        return f"nt.TapePlayer live widget: {len(self.frames)} frames"

"""``nt.TapePlayer``: the VHS-tape picture, played forward op by op and then backwards.

Core widgets only: a ``Play`` button and a slider (linked in the browser, so
playing needs no Python thread) choose the frame; step buttons move one frame;
the picture is the tape's graph (``tape_graph`` with ``highlight`` during the
forward pass and ``backward_step`` during the reverse pass) as inline SVG in an
``HTML`` widget, and a large caption states what the frame shows, including
the chain-rule product that produced each adjoint.  Frames are drawn on first
view and kept, so scrubbing back and forth is instant.
"""
import html

import ipywidgets as W

from ..graph import tape_graph
from ..render import DRAWING, drawing_soon, inline_svg, when_drawable
from .live import LiveView, weak_callback
from .playback import Playback

# The list of steps under the picture shows this many frames either side of the
# current one; static snapshots list at most STORY_LINES frames (and the last).
STORY_AROUND = 6
STORY_LINES = 120
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
        self._play = self._add(W.Play(value=0, min=0, max=last, step=1,
                                      interval=int(interval * 1000), description="play",
                                      show_repeat=False))
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
        self._story = self._add(W.HTML(layout=W.Layout(max_height="9em", overflow="auto",
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
        self._changed()

    def _to_start(self, _b=None):
        self.frame = 0

    def _back(self, _b=None):
        self.step(-1)

    def _on(self, _b=None):
        self.step(1)

    def _to_back(self, _b=None):
        first = next((k for k, f in enumerate(self.frames) if f.phase in ("backward", "done")),
                     len(self.frames) - 1)
        self.frame = first

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

    def _story_html(self, current, before=STORY_AROUND, after=STORY_AROUND):
        ks = self._window(current, before, after)
        items = []
        for k in ks:
            style = "white-space:normal;overflow-wrap:anywhere" + (
                ";background:#fde68a;font-weight:600" if k == current else "")
            items.append(f'<li value="{k}" style="{style}">'
                         f"{html.escape(self.frames[k].caption)}</li>")
        more = len(self.frames) - 1 - ks[-1]
        head = f"<div style='color:#888'>… {ks[0]} earlier frames</div>" if ks[0] else ""
        tail = f"<div style='color:#888'>… {more} more frames</div>" if more else ""
        # ipywidgets' HTML content does not wrap by default: long chain-rule steps would
        # run off the right edge
        return (f'<div style="white-space:normal;max-width:72em">{head}<ol start="{ks[0]}" '
                f'style="margin:0;font-size:12px">{"".join(items)}</ol>{tail}</div>')

    def _render(self):
        k = self._frame
        f = self.frames[k]
        with self._title.hold_sync(), self._picture.hold_sync(), \
                self._caption.hold_sync(), self._story.hold_sync():
            self._title.value = (f"<b>Tape player</b> · frame {k} of {len(self.frames) - 1}"
                                 f" · {PHASES[f.phase]}")
            self._picture.value = self._picture_html(k)
            self._caption.value = (f'<div style="font-size:18px;line-height:1.4;'
                                   f'padding:6px 0">{html.escape(f.caption)}</div>')
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
        last = len(self.frames) - 1
        return (f'<div class="nbtape-player" style="font-family:sans-serif">'
                f"<b>nt.TapePlayer</b>: {len(self.frames)} frames; the picture shows the "
                f"last one.{self._picture_html(last)}"
                f"{self._story_html(0, 0, STORY_LINES - 1)}</div>")

    def _descriptor(self):
        return f"nt.TapePlayer live widget: {len(self.frames)} frames"
